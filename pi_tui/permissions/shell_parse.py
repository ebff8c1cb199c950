"""A shell command line cut into the simple commands it runs, for permission rules.

The parser is tree-sitter's bash grammar (``tree-sitter`` + ``tree-sitter-bash`` on PyPI; the
grammar GitHub and editors use for bash, both released through 2025, prebuilt abi3 wheels, a
parse in microseconds). ``bashlex`` was the alternative: a port of bash's own parser, but its
last release is from 2023 and it raises on much of what bash accepts (``[[ ]]``, ``case``,
arithmetic). tree-sitter never raises: what it cannot parse becomes ``ERROR``/``MISSING`` nodes,
which we treat as "does not parse" — never allowed by a rule.

Every simple command anywhere in the line counts (``&& || ; |`` and newlines, subshells, ``{ }``,
``if``/``for``/``while`` bodies, function bodies, and the commands *inside* ``$(…)``), so a deny
rule sees ``rm`` in ``echo $(rm x)``. Wrappers that run another command (``env``, ``timeout``,
``nice``, ``sudo``, ``xargs``, ``find -exec`` …) are unwrapped to that command. Some constructs
can never be allowed by a rule because what they run is not in the text (``$(…)``, backticks,
``<(…)``, ``eval``, ``sh -c``/``bash -c``, a command name from a variable, ``PATH=…`` or
``LD_PRELOAD=…`` before a command): ``ParsedCommand.unsafe`` says which.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "fish", "busybox", "ash", "csh", "tcsh"})
EVALUATORS = frozenset({"eval", "source", "."})
RISKY_ASSIGNMENTS = frozenset({"PATH", "BASH_ENV", "ENV", "IFS", "SHELLOPTS", "BASHOPTS", "PS4", "PROMPT_COMMAND",
                               "GIT_SSH_COMMAND", "GIT_EXEC_PATH", "GIT_CONFIG_GLOBAL", "GIT_DIR", "PYTHONPATH",
                               "PYTHONSTARTUP", "NODE_OPTIONS", "PERL5OPT", "RUBYOPT"})
"""Variables that change which program a command name runs, or make it run other code."""
PRIVILEGED = frozenset({"sudo", "doas"})
_SUBSTITUTIONS = frozenset({"command_substitution", "process_substitution"})


@dataclass(frozen=True, slots=True)
class SimpleCommand:
    """One command the line runs, wrappers removed: ``timeout 5 rm x`` is ``rm x``."""

    words: tuple[str, ...]
    """Each word's value (quotes and backslashes removed; an expansion keeps its source text)."""

    @property
    def text(self) -> str:
        return " ".join(self.words)

    @property
    def name(self) -> str:
        return self.words[0] if self.words else ""


@dataclass(frozen=True, slots=True)
class ParsedCommand:
    """A command line as rules see it."""

    commands: tuple[SimpleCommand, ...]
    unsafe: tuple[str, ...] = ()
    """Why no rule may allow this line (empty: rules may): ``command substitution $(…)`` …"""


@dataclass(slots=True)
class _Walk:
    """What the walk over the syntax tree collects."""

    source: bytes
    commands: list[SimpleCommand] = field(default_factory=list)
    unsafe: list[str] = field(default_factory=list)

    def flag(self, reason: str) -> None:
        if reason not in self.unsafe:
            self.unsafe.append(reason)


@lru_cache(maxsize=1)
def _parser() -> Any:
    import tree_sitter
    import tree_sitter_bash

    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))


def parse_command(command: str) -> ParsedCommand:
    """Every simple command ``command`` runs, and why rules may not allow it (if so)."""
    source = command.encode("utf-8", "surrogatepass")
    tree = _parser().parse(source)
    walk = _Walk(source)
    if tree.root_node.has_error:
        walk.flag("the command does not parse")
    try:
        _visit(tree.root_node, walk)
    except RecursionError:
        walk.flag("the command is nested too deeply to check")
    if not walk.commands and not walk.unsafe and command.strip():
        walk.flag("no command found in it")
    return ParsedCommand(tuple(walk.commands), tuple(walk.unsafe))


def _text(node: Any, walk: _Walk) -> str:
    return walk.source[node.start_byte:node.end_byte].decode("utf-8", "surrogatepass")


def _visit(node: Any, walk: _Walk) -> None:
    kind = node.type
    if kind in _SUBSTITUTIONS:
        walk.flag("process substitution <(…)" if kind == "process_substitution" else "command substitution $(…) or `…`")
    if kind == "command":
        _command(node, walk)
        return
    if kind == "variable_assignment":
        _assignment(node, walk)
    elif kind in ("declaration_command", "unset_command"):
        words = [_word(child, walk) for child in node.named_children if child.type != "variable_assignment"]
        walk.commands.append(SimpleCommand((_text(node.children[0], walk), *words)))
    elif kind == "function_definition":
        walk.flag("a function definition")
    for child in node.children:
        _visit(child, walk)


def _assignment(node: Any, walk: _Walk) -> None:
    name = node.child_by_field_name("name")
    value = _text(name, walk) if name is not None else ""
    if value in RISKY_ASSIGNMENTS or value.startswith("LD_"):
        walk.flag(f"it sets {value}, which changes what commands run")


def _command(node: Any, walk: _Walk) -> None:
    words: list[str] = []
    for child in node.named_children:
        if child.type == "variable_assignment":
            _assignment(child, walk)
        elif child.type == "command_name":
            if any(sub.type not in ("word",) for sub in child.named_children):
                walk.flag("the command name is computed (a variable or expansion)")
            words.append(_word(child, walk))
        elif child.type in ("file_redirect", "heredoc_redirect", "herestring_redirect"):
            pass
        else:
            words.append(_word(child, walk))
        if child.type != "variable_assignment":
            _visit(child, walk)
        else:
            for sub in child.children:
                _visit(sub, walk)
    for simple in unwrap(words, walk.flag):
        walk.commands.append(simple)


def _word(node: Any, walk: _Walk) -> str:
    """A word's value as the shell would see it, when it is literal; its source text otherwise."""
    value = _literal(node, walk)
    return value if value is not None else _text(node, walk)


def _literal(node: Any, walk: _Walk) -> str | None:
    kind = node.type
    if kind in ("word", "number"):
        return _unescape(_text(node, walk))
    if kind == "raw_string":
        return _text(node, walk)[1:-1]
    if kind in ("command_name", "concatenation"):
        pieces = [_literal(child, walk) for child in node.named_children]
        known = [p for p in pieces if p is not None]
        return "".join(known) if len(known) == len(pieces) else None
    if kind == "string":
        parts: list[str] = []
        for child in node.named_children:
            if child.type != "string_content":
                return None
            parts.append(_text(child, walk))
        return "".join(parts) if node.named_children else ""
    return None


_ESCAPE = re.compile(r"\\(.)", re.DOTALL)


def _unescape(text: str) -> str:
    return _ESCAPE.sub(lambda m: "" if m.group(1) == "\n" else m.group(1), text)


# Wrappers: the options that take a value (so the command starts after it).
_WRAPPER_VALUE_OPTIONS: dict[str, frozenset[str]] = {
    "env": frozenset({"-u", "--unset", "-C", "--chdir"}),
    "timeout": frozenset({"-s", "--signal", "-k", "--kill-after"}),
    "nice": frozenset({"-n", "--adjustment"}),
    "nohup": frozenset(),
    "setsid": frozenset(),
    "time": frozenset({"-f", "--format", "-o", "--output"}),
    "command": frozenset(),
    "exec": frozenset({"-a"}),
    "builtin": frozenset(),
    "stdbuf": frozenset({"-i", "-o", "-e", "--input", "--output", "--error"}),
    "ionice": frozenset({"-c", "--class", "-n", "--classdata", "-p", "--pid"}),
    "sudo": frozenset({"-u", "--user", "-g", "--group", "-C", "--close-from", "-D", "--chdir", "-h", "--host",
                       "-p", "--prompt", "-r", "--role", "-t", "--type", "-U", "--other-user", "-T",
                       "--command-timeout"}),
    "doas": frozenset({"-u", "-C"}),
    "xargs": frozenset({"-a", "--arg-file", "-d", "--delimiter", "-E", "-e", "-I", "-i", "-L", "-l", "-n",
                        "--max-args", "-P", "--max-procs", "-s", "--max-chars", "--process-slot-var"}),
}
_POSITIONAL_FIRST = {"timeout": 1}
"""Wrappers whose first plain argument belongs to them (``timeout DURATION cmd``)."""


def unwrap(words: list[str], flag: Any) -> list[SimpleCommand]:
    """The command(s) ``words`` really runs: wrappers stripped, ``find -exec`` split out; shells
    given ``-c`` and ``eval`` are flagged (their command is a string nobody parsed)."""
    found: list[SimpleCommand] = []
    rest = list(words)
    while rest:
        name = rest[0].rsplit("/", 1)[-1] if rest[0].startswith("/") else rest[0]
        if name in EVALUATORS:
            flag(f"{name} runs text that is not parsed here")
        if name in SHELLS and any(w == "-c" or (w.startswith("-") and not w.startswith("--") and "c" in w)
                                  for w in rest[1:]):
            flag(f"{name} -c runs a command string that is not parsed here")
            found.extend(_inner_script(rest))
        if name == "env" and any(w in ("-S", "--split-string") or w.startswith("-S") for w in rest[1:]):
            flag("env -S splits a string into a command")
        if name == "find":
            found.extend(_find_exec(rest, flag))
        if name not in _WRAPPER_VALUE_OPTIONS:
            found.insert(0, SimpleCommand(tuple(rest)))
            return found
        if name in PRIVILEGED:  # `sudo rm x`: both `sudo rm x` and `rm x` must be allowed
            found.append(SimpleCommand(tuple(rest)))
        inner = _after_wrapper(name, rest[1:])
        if inner is None:  # the wrapper alone (`env`, `command -v git`): counts as itself
            found.insert(0, SimpleCommand(tuple(rest)))
            return found
        rest = inner
    return found


def _after_wrapper(name: str, args: list[str]) -> list[str] | None:
    takes_value = _WRAPPER_VALUE_OPTIONS[name]
    positional = _POSITIONAL_FIRST.get(name, 0)
    index = 0
    while index < len(args):
        word = args[index]
        if word == "--":
            index += 1
            break
        if name == "env" and "=" in word and not word.startswith("-"):
            index += 1
            continue
        if word.startswith("-") and len(word) > 1:
            if name == "command" and word in ("-v", "-V"):
                return None
            index += 2 if word in takes_value else 1
            continue
        if name == "nice" and re.fullmatch(r"-?\d+", word):
            index += 1
            continue
        if positional:
            positional -= 1
            index += 1
            continue
        break
    inner = args[index:]
    return inner or None


def _inner_script(words: list[str]) -> list[SimpleCommand]:
    """What ``sh -c 'SCRIPT'`` would run, for deny and ask rules (never enough to allow it)."""
    for index, word in enumerate(words[1:-1], start=1):
        if word == "-c" or (word.startswith("-") and not word.startswith("--") and "c" in word):
            return list(parse_command(words[index + 1]).commands) if len(words[index + 1]) < 100_000 else []
    return []


def _find_exec(words: list[str], flag: Any) -> list[SimpleCommand]:
    """``find … -exec CMD {} ;``: CMD is a command of its own (so is ``-ok``)."""
    found: list[SimpleCommand] = []
    index = 1
    while index < len(words):
        if words[index] in ("-exec", "-execdir", "-ok", "-okdir"):
            end = index + 1
            while end < len(words) and words[end] not in (";", "+"):
                end += 1
            inner = words[index + 1:end]
            if inner:
                found.extend(unwrap(inner, flag))
            index = end
        index += 1
    return found
