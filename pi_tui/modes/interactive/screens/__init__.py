"""Full-screen views of the interactive mode: /tree, /resume, /model, /context, /settings, /hotkeys.

Each screen is a ``.py`` + ``.tcss`` pair. Screens take plain data (or a narrow protocol the
session objects satisfy) in their constructor and return their result through ``dismiss``; they
never run agent work themselves.
"""
