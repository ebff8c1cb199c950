"""``.gitignore``/``.ignore``/``.fdignore`` rules for skill discovery (§6.2).

The matching is ``core.gitignore`` (the same matcher grep/find use): comments, ``!`` negation,
trailing ``/`` (directories only), leading or inner ``/`` (anchored to the folder holding the
file), ``*``/``?``/``[]`` that never cross ``/``, ``**``, escapes. The last matching rule wins.
"""

from __future__ import annotations

from pathlib import Path

from pi_tui.core.gitignore import IgnoreScopes

IGNORE_FILES = (".gitignore", ".ignore", ".fdignore")


class IgnoreRules:
    def __init__(self, scopes: IgnoreScopes | None = None) -> None:
        self._scopes = scopes or IgnoreScopes()

    def with_directory(self, directory: Path) -> IgnoreRules:
        """These rules plus the ignore files found directly in ``directory``."""
        scopes = self._scopes
        for name in IGNORE_FILES:
            scopes = scopes.with_file(directory, directory / name)
        return self if scopes is self._scopes else IgnoreRules(scopes)

    def ignored(self, path: Path, *, is_dir: bool) -> bool:
        return self._scopes.ignored(path, is_dir=is_dir)
