"""pi-tui: an interactive terminal coding agent with pi's context management.

This module holds the version only; importing it has no side effects.
"""

__version__ = "0.1.0"
