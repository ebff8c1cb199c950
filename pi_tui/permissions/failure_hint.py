"""One line under a failed sandboxed command saying what the sandbox blocked and why.

A command that fails in the sandbox shows only the tools' own words ("Read-only file system",
"Could not resolve host"): the model cannot tell the sandbox from a broken system and retries in
vain. When the output carries one of the sandbox's marks — a write refused on a path outside the
writable roots (or protected inside them), no network while it is off, a hidden path — the
gate's ``explain`` adds what was blocked, why, and how to ask the user (``escalate``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

READ_ONLY_MARKS = ("Read-only file system", "[Errno 30]", "EROFS")
NETWORK_MARKS = ("Could not resolve host", "Network is unreachable", "Temporary failure in name resolution",
                 "Name or service not known", "[Errno 101]", "ENETUNREACH", "getaddrinfo ENOTFOUND",
                 "EAI_AGAIN")
HIDDEN_MARKS = ("Permission denied", "No such file or directory", "Read-only file system", "Not a directory")
_QUOTED = re.compile(r"""['"‘’“”`]([^'"‘’“”`\n]+)['"‘’“”`]""")
_BEFORE_COLON = re.compile(r"(?:^|\s)(\S+?): (?=" + "|".join(re.escape(m) for m in
                                                            (*READ_ONLY_MARKS, *HIDDEN_MARKS)) + ")")


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _paths_on(line: str, cwd: Path) -> list[str]:
    """The paths a tool's error line names ('quoted', or ``path: Read-only file system``)."""
    found = [m.group(1) for m in _QUOTED.finditer(line)] + [m.group(1) for m in _BEFORE_COLON.finditer(line)]
    paths = []
    for raw in found:
        raw = raw.strip()
        if not raw or (" " in raw and not raw.startswith("/")):
            continue
        path = os.path.normpath(raw if raw.startswith("/") else os.path.join(cwd, os.path.expanduser(raw)))
        paths.append(path)
    return paths


def explain(output: str, *, cwd: Path, roots: Sequence[Path], protected: Sequence[Path], hidden: Sequence[Path],
            network_off: bool, plan: bool, can_escalate: bool) -> str:
    """The line for a failed command's ``output`` ("" when no mark of the sandbox is in it)."""
    lines = output.splitlines()
    why = _hidden(lines, cwd, hidden) or _read_only(lines, cwd, roots, protected, plan)
    if not why and network_off and any(mark in output for mark in NETWORK_MARKS):
        why = ("network is off (plan mode runs commands without network)" if plan
               else "network is off (sandbox.network)")
    if not why:
        return ""
    ask = (" If the task needs it, call bash again with escalate: true and a justification: the user is asked."
           if can_escalate and not plan else "")
    return f"[sandbox] the sandbox blocked this: {why}.{ask}"


def _read_only(lines: list[str], cwd: Path, roots: Sequence[Path], protected: Sequence[Path], plan: bool) -> str:
    shown_roots = ", ".join(str(r) for r in roots)
    generic = False
    for line in lines:
        if not any(mark in line for mark in READ_ONLY_MARKS):
            continue
        paths = _paths_on(line, cwd)
        if not paths:
            generic = True
        for path in paths:
            real = os.path.realpath(path)
            for item in protected:
                if _within(real, os.path.realpath(item)) or _within(path, str(item)):
                    return f"{path} is read-only ({item.name} would run later outside the sandbox)"
            if not any(_within(real, os.path.realpath(root)) for root in roots):
                if plan:
                    return f"plan mode is read-only: only {shown_roots} is writable ({path})"
                return f"writes outside the writable roots ({shown_roots}) are read-only ({path})"
    if generic:
        return ("plan mode is read-only: only " + shown_roots + " is writable" if plan
                else f"writes outside the writable roots ({shown_roots}) are read-only")
    return ""


def _hidden(lines: list[str], cwd: Path, hidden: Sequence[Path]) -> str:
    for line in lines:
        if not any(mark in line for mark in HIDDEN_MARKS):
            continue
        for path in _paths_on(line, cwd):
            for item in hidden:
                if _within(path, str(item)) or _within(os.path.realpath(path), os.path.realpath(item)):
                    return f"{item} is hidden from the sandbox (credentials and private data)"
    return ""

