"""A small ``.gitignore`` matcher and a walker that honours it (stdlib only). Used by grep/find
without rg/fd (``walk``) and by skill discovery (``IgnoreScopes``, absolute folders).

Covers what projects actually write: comments, blank lines, ``!`` negation (last match wins),
trailing ``/`` for directories only, patterns with an inner ``/`` anchored to their file's
folder, ``*``, ``?``, ``[...]``, ``**`` in all three positions, and backslash escapes. Nested
``.gitignore`` files apply to their own subtree; inside a git work tree the ``.gitignore`` files
of the folders above the search root apply too. ``.git`` itself is never walked. Symlinked
folders are listed but not followed (as rg and fd do by default).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from pi_tui.core.cancellable_thread import check_cancelled
from pi_tui.core.regular_files import read_regular_text


def glob_to_regex(pattern: str, *, braces: bool = False) -> str:
    """Translate one glob (gitignore flavour; ``{a,b}`` too when ``braces``) to a regex body."""
    out: list[str] = []
    index = 0
    depth = 0
    while index < len(pattern):
        char = pattern[index]
        if char == "\\" and index + 1 < len(pattern):
            out.append(re.escape(pattern[index + 1]))
            index += 2
            continue
        if char == "*":
            if pattern.startswith("**", index):
                before_ok = index == 0 or pattern[index - 1] == "/"
                after = pattern[index + 2 : index + 3]
                if before_ok and after == "/":
                    out.append("(?:.*/)?")
                    index += 3
                    continue
                if before_ok and after == "":
                    out.append(".*")
                    index += 2
                    continue
                out.append("[^/]*")
                index += 2
                continue
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[":
            end = pattern.find("]", index + 2 if pattern[index + 1 : index + 2] in ("!", "^", "]") else index + 1)
            if end == -1:
                out.append(re.escape(char))
            else:
                body = pattern[index + 1 : end]
                if body[:1] in ("!", "^"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                index = end + 1
                continue
        elif braces and char == "{":
            depth += 1
            out.append("(?:")
        elif braces and char == "}" and depth:
            depth -= 1
            out.append(")")
        elif braces and char == "," and depth:
            out.append("|")
        else:
            out.append(re.escape(char))
        index += 1
    return "".join(out)


@dataclass(frozen=True, slots=True)
class IgnoreRule:
    regex: re.Pattern[str]
    negated: bool
    directory_only: bool


def parse_gitignore(text: str) -> list[IgnoreRule]:
    rules: list[IgnoreRule] = []
    for raw_line in text.splitlines():
        line = raw_line
        if not line.strip() or line.startswith("#"):
            continue
        # Trailing spaces are ignored unless escaped with a backslash.
        while line.endswith(" ") and not line.endswith("\\ "):
            line = line[:-1]
        negated = line.startswith("!")
        if negated or line.startswith("\\!") or line.startswith("\\#"):
            line = line[1:]
        directory_only = line.endswith("/")
        line = line.rstrip("/")
        if not line:
            continue
        anchored = "/" in line
        line = line.lstrip("/")
        body = glob_to_regex(line)
        prefix = "^" if anchored else "^(?:.*/)?"
        rules.append(IgnoreRule(re.compile(prefix + body + "$", re.DOTALL), negated, directory_only))
    return rules


@dataclass(slots=True)
class IgnoreScope:
    base: str
    """Folder of the .gitignore, relative to the walk root, POSIX ('' = root, None-like '..' above)."""
    rules: list[IgnoreRule]


class IgnoreStack:
    """The rules in force at one folder of the walk (parents first, so later rules win)."""

    def __init__(self, scopes: list[IgnoreScope] | None = None) -> None:
        self.scopes = scopes or []

    def with_file(self, base: str, gitignore: Path) -> IgnoreStack:
        try:
            text = read_regular_text(gitignore, errors="replace")
        except OSError:  # missing, unreadable, or a FIFO/device (never block on one)
            return self
        rules = parse_gitignore(text)
        return IgnoreStack([*self.scopes, IgnoreScope(base, rules)]) if rules else self

    def ignored(self, rel_path: str, is_dir: bool) -> bool:
        verdict = False
        for scope in self.scopes:
            if scope.base.startswith("/"):
                local = scope.base[1:] + rel_path  # absolute-prefix scope (above the root)
            elif scope.base:
                if not rel_path.startswith(scope.base + "/"):
                    continue
                local = rel_path[len(scope.base) + 1 :]
            else:
                local = rel_path
            for rule in scope.rules:
                if rule.directory_only and not is_dir:
                    continue
                if rule.regex.match(local):
                    verdict = not rule.negated
        return verdict


def _ancestor_scopes(root: Path) -> IgnoreStack:
    """The .gitignore files between the git work-tree top and ``root`` (exclusive)."""
    chain: list[Path] = []
    current = root.parent
    top: Path | None = None
    probe = root
    while True:
        if (probe / ".git").exists():
            top = probe
            break
        if probe.parent == probe:
            break
        probe = probe.parent
    if top is None or top == root:
        return IgnoreStack()
    while True:
        chain.append(current)
        if current == top or current.parent == current:
            break
        current = current.parent
    stack = IgnoreStack()
    for folder in reversed(chain):
        # Paths below root are matched as "<root relative to folder>/<rel>".
        prefix = root.relative_to(folder).as_posix() + "/"
        stack = stack.with_file("/" + prefix, folder / ".gitignore")
    return stack


@dataclass(frozen=True, slots=True)
class WalkEntry:
    rel: str
    """POSIX path relative to the walk root."""
    path: Path
    is_dir: bool


def walk(root: Path, *, respect_gitignore: bool = True) -> Iterator[WalkEntry]:
    """Every file and folder below ``root`` (hidden ones too), sorted, depth first."""
    base_stack = _ancestor_scopes(root) if respect_gitignore else IgnoreStack()
    yield from _walk_dir(root, "", base_stack, respect_gitignore)


def _walk_dir(folder: Path, rel: str, stack: IgnoreStack, respect: bool) -> Iterator[WalkEntry]:
    if respect:
        stack = stack.with_file(rel, folder / ".gitignore")
    try:
        with os.scandir(folder) as iterator:
            entries = sorted(iterator, key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        check_cancelled()  # an aborted grep/find stops its walk here
        if entry.name == ".git":
            continue
        child_rel = f"{rel}/{entry.name}" if rel else entry.name
        try:
            is_dir = entry.is_dir(follow_symlinks=False)
        except OSError:
            continue
        if respect and stack.ignored(child_rel, is_dir):
            continue
        yield WalkEntry(child_rel, Path(entry.path), is_dir)
        if is_dir:
            yield from _walk_dir(Path(entry.path), child_rel, stack, respect)


class IgnoreScopes:
    """Rules keyed by the absolute folder of their ignore file (skill discovery walks absolute
    paths; ``IgnoreStack`` is for a walk relative to one root). Later files win, as in git."""

    def __init__(self, scopes: tuple[tuple[Path, tuple[IgnoreRule, ...]], ...] = ()) -> None:
        self._scopes = scopes

    def with_file(self, folder: Path, ignore_file: Path) -> IgnoreScopes:
        try:
            text = read_regular_text(ignore_file, errors="replace")
        except OSError:
            return self
        rules = tuple(parse_gitignore(text))
        return IgnoreScopes((*self._scopes, (folder, rules))) if rules else self

    def ignored(self, path: Path, *, is_dir: bool) -> bool:
        verdict = False
        for folder, rules in self._scopes:
            try:
                local = path.relative_to(folder).as_posix()
            except ValueError:
                continue
            for rule in rules:
                if rule.directory_only and not is_dir:
                    continue
                if rule.regex.match(local):
                    verdict = not rule.negated
        return verdict
