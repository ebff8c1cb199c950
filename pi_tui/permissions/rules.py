"""Permission rules in Claude Code's syntax: ``permissions.allow | ask | deny`` lists of
``Tool`` or ``Tool(specifier)``, checked deny → ask → allow.

* ``Bash(git status)`` — that exact command; ``Bash(npm run test:*)`` — that prefix, at a word
  boundary; ``Bash(git * main)`` — ``*`` matches anything; ``Bash`` alone — any command. A line
  is cut into the commands it runs (``shell_parse``): a deny or ask rule matching *any* of them
  decides; an allow rule must match *every* one, and a line ``shell_parse`` marks unsafe
  (``$(…)``, ``eval``, ``sh -c``, unparseable …) is never allowed by a rule.
* ``Read(~/.ssh/**)``, ``Edit(src/**)``, ``Write(docs/*.md)`` — gitignore-style paths: ``~/``
  from the home folder, ``//`` an absolute path, ``/x`` and ``x/y`` from the project root, a
  bare ``*.env`` at any depth; a folder's pattern covers what is inside it. ``Read`` covers
  read/grep/find/ls, ``Edit`` covers edit and write, ``Write`` write only. The path is matched
  as given and with its links resolved: a link cannot dodge a deny rule.
* any other tool by name (``my_tool``, ``mcp__server__tool``), case-insensitive.

A project's settings may add deny and ask rules freely; its allow rules count only once the
project is trusted (``rules_from_settings``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pi_tui.core.gitignore import glob_to_regex

Verdict = Literal["allow", "ask", "deny"]
VERDICTS: tuple[Verdict, ...] = ("deny", "ask", "allow")
READ_TOOLS = frozenset({"read", "grep", "find", "ls"})
EDIT_TOOLS = frozenset({"edit", "write"})
_RULE = re.compile(r"^\s*([A-Za-z0-9_.:-]+)\s*(?:\((.*)\))?\s*$", re.DOTALL)


class RuleError(ValueError):
    """A rule that does not parse; the message names it."""


@dataclass(frozen=True, slots=True)
class Rule:
    """One ``allow``/``ask``/``deny`` entry, parsed."""

    verdict: Verdict
    tool: str
    """As written: ``Bash``, ``Read`` …"""
    specifier: str | None
    source: str
    """Where it came from, for messages: ``~/.pi/agent/settings.json`` or ``--allow``."""

    @property
    def text(self) -> str:
        return self.tool if self.specifier is None else f"{self.tool}({self.specifier})"

    def describe(self) -> str:
        return f"{self.verdict} rule {self.text} in {self.source}"


def parse_rule(text: str, verdict: Verdict, source: str) -> Rule:
    match = _RULE.match(text) if isinstance(text, str) else None
    if match is None:
        raise RuleError(f"permissions.{verdict} in {source}: {text!r} is not a rule (Tool or Tool(specifier))")
    spec = match.group(2)
    if spec is not None and spec.strip() in ("", "*"):
        spec = None
    return Rule(verdict, match.group(1), spec.strip() if spec is not None else None, source)


@dataclass(frozen=True, slots=True)
class RuleMatch:
    """The rule that decided a call."""

    verdict: Verdict
    rule: Rule
    """The deciding rule (for an allow: the last one needed)."""


@dataclass(slots=True)
class RuleSet:
    """Every rule of the run, in the order the settings give them."""

    rules: list[Rule]
    home: Path
    project: Path

    def add(self, rule: Rule) -> None:
        self.rules.append(rule)

    def decide(self, tool: str, args: Mapping[str, Any], cwd: Path) -> RuleMatch | None:
        """The verdict of the rules for one call; None when no rule speaks about it."""
        if tool == "bash":
            command = args.get("command")
            return self.decide_command(command if isinstance(command, str) else "")
        if tool in READ_TOOLS or tool in EDIT_TOOLS:
            raw = args.get("path")
            path = raw if isinstance(raw, str) and raw else "."
            return self.decide_path(tool, path, cwd)
        for verdict in VERDICTS:
            for rule in self._of(verdict):
                if rule.tool.lower() == tool.lower() and rule.specifier is None:
                    return RuleMatch(verdict, rule)
        return None

    def _of(self, verdict: Verdict, families: Iterable[str] | None = None) -> list[Rule]:
        wanted = {f.lower() for f in families} if families is not None else None
        return [r for r in self.rules if r.verdict == verdict and (wanted is None or r.tool.lower() in wanted)]

    def decide_command(self, command: str) -> RuleMatch | None:
        if not self._of("deny", ("bash",)) and not self._of("ask", ("bash",)) and not self._of("allow", ("bash",)):
            return None  # no bash rule: nothing to parse
        from pi_tui.permissions.shell_parse import parse_command  # a bash call's first need

        parsed = parse_command(command)
        for verdict in ("deny", "ask"):
            for rule in self._of(verdict, ("bash",)):
                if any(command_matches(rule.specifier, part.text) for part in parsed.commands) or (
                        rule.specifier is None):
                    return RuleMatch(verdict, rule)
        allows = self._of("allow", ("bash",))
        if not allows:
            return None
        if parsed.unsafe:  # never allowed by a rule: the mode decides
            return None
        last: Rule | None = None
        for part in parsed.commands:
            allowing = next((r for r in allows if command_matches(r.specifier, part.text)), None)
            if allowing is None:
                return None
            last = allowing
        return RuleMatch("allow", last) if last is not None else None

    def decide_path(self, tool: str, raw: str, cwd: Path) -> RuleMatch | None:
        families = ("read",) if tool in READ_TOOLS else ("edit", "write") if tool == "write" else ("edit",)
        candidates = path_forms(raw, cwd)
        for verdict in VERDICTS:
            for rule in self._of(verdict, families):
                if rule.specifier is None or any(self.path_matches(rule.specifier, p) for p in candidates):
                    return RuleMatch(verdict, rule)
        return None

    def path_matches(self, specifier: str, path: str) -> bool:
        return path_pattern(specifier, self.home, self.project).match(path) is not None


def path_forms(raw: str, cwd: Path) -> list[str]:
    """The path as given (absolute, normalised) and with every link resolved."""
    expanded = str(Path.home()) + raw[1:] if raw == "~" or raw.startswith("~/") else raw
    lexical = os.path.normpath(expanded if os.path.isabs(expanded) else os.path.join(cwd, expanded))
    real = os.path.realpath(lexical)
    return [lexical] if real == lexical else [lexical, real]


def path_pattern(specifier: str, home: Path, project: Path) -> re.Pattern[str]:
    spec = specifier.strip()
    if spec.startswith("//"):
        base, pattern = "", spec[1:]
    elif spec == "~" or spec.startswith("~/"):
        base, pattern = str(home), spec[1:]
    elif spec.startswith("/"):
        base, pattern = str(project), spec
    elif spec.startswith("./"):
        base, pattern = str(project), spec[1:]
    elif "/" in spec.rstrip("/"):
        base, pattern = str(project), "/" + spec
    else:
        base, pattern = str(project), "/**/" + spec
    pattern = pattern.rstrip("/") or "/"
    body = glob_to_regex(pattern)
    return re.compile(re.escape(base.rstrip("/")) + body + r"(?:/.*)?\Z", re.DOTALL)


def command_matches(specifier: str | None, text: str) -> bool:
    if specifier is None:
        return True
    spec = " ".join(specifier.split())
    text = " ".join(text.split())
    if spec.endswith(":*"):
        prefix = spec[:-2].rstrip()
        return text == prefix or text.startswith(prefix + " ") or (prefix.endswith(":") and text.startswith(prefix))
    if "*" in spec:
        regex = ".*".join(re.escape(piece) for piece in spec.split("*"))
        return re.fullmatch(regex, text, re.DOTALL) is not None
    return text == spec


def rules_from_lists(lists: Mapping[str, Any], source: str, *, allow_allows: bool = True,
                     errors: list[str] | None = None) -> list[Rule]:
    """The rules of one ``permissions`` object; bad entries are reported in ``errors``."""
    found: list[Rule] = []
    for verdict in VERDICTS:
        entries = lists.get(verdict)
        if entries is None:
            continue
        if not isinstance(entries, list):
            if errors is not None:
                errors.append(f"permissions.{verdict} in {source} must be a list of rules")
            continue
        if verdict == "allow" and not allow_allows:
            continue
        for entry in entries:
            try:
                found.append(parse_rule(entry, verdict, source))
            except RuleError as error:
                if errors is not None:
                    errors.append(str(error))
    return found


def rules_from_settings(layers: Sequence[tuple[Mapping[str, Any], str, bool]], home: Path, project: Path,
                        errors: list[str] | None = None) -> RuleSet:
    """Rules from settings layers ``(settings, source name, is_trusted)``: an untrusted layer's
    allow rules are dropped (deny and ask always count)."""
    rules: list[Rule] = []
    for settings, source, trusted in layers:
        permissions = settings.get("permissions")
        if isinstance(permissions, dict):
            rules += rules_from_lists(permissions, source, allow_allows=trusted, errors=errors)
    return RuleSet(rules, home, project)
