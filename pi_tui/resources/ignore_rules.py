"""A small ``.gitignore``/``.ignore``/``.fdignore`` matcher for skill discovery (§6.2).

Enough of gitignore for resource folders: comments, ``!`` negation, trailing ``/`` (directories
only), leading or inner ``/`` (anchored to the folder holding the file), ``*``/``?``/``[]`` and
``**``. The last matching rule wins, as in git.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass
from pathlib import Path

IGNORE_FILES = (".gitignore", ".ignore", ".fdignore")


@dataclass(frozen=True, slots=True)
class _Rule:
    base: Path
    regex: re.Pattern[str]
    negate: bool
    dir_only: bool
    anchored: bool


def _compile(pattern: str) -> re.Pattern[str]:
    parts = pattern.split("**")
    translated = ".*".join(fnmatch.translate(p).removeprefix("(?s:").removesuffix(")\\Z") for p in parts)
    return re.compile(f"(?s:{translated})\\Z")


class IgnoreRules:
    def __init__(self, rules: tuple[_Rule, ...] = ()) -> None:
        self._rules = rules

    def with_directory(self, directory: Path) -> IgnoreRules:
        """These rules plus the ignore files found directly in ``directory``."""
        added: list[_Rule] = []
        for name in IGNORE_FILES:
            try:
                text = (directory / name).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            for raw in text.splitlines():
                line = raw.strip()
                if not line or line.startswith("#"):
                    continue
                negate = line.startswith("!")
                line = line.removeprefix("!")
                dir_only = line.endswith("/")
                line = line.rstrip("/")
                anchored = "/" in line
                line = line.lstrip("/")
                if line:
                    added.append(_Rule(directory, _compile(line), negate, dir_only, anchored))
        return IgnoreRules(self._rules + tuple(added)) if added else self

    def ignored(self, path: Path, *, is_dir: bool) -> bool:
        verdict = False
        for rule in self._rules:
            if rule.dir_only and not is_dir:
                continue
            try:
                relative = path.relative_to(rule.base).as_posix()
            except ValueError:
                continue
            target = relative if rule.anchored else path.name
            if rule.regex.match(target):
                verdict = not rule.negate
        return verdict
