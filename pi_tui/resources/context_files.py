"""Project instruction files: ``AGENTS.md`` / ``CLAUDE.md`` (pi-behaviour.md §5.1, §13.5).

First the agent dir's file, then one file per directory from the filesystem root down to the
cwd (root first, so the most specific instructions come last and win in the model's reading).
In each directory the first existing name of ``CONTEXT_FILE_NAMES`` is used. They are read from
disk every time the system prompt is rebuilt, so a compaction can never summarize them away.

Bounds (pi has none: a 30 MB ``AGENTS.md`` went whole into every request of an 8k-window model):

* each file: at most ``CONTEXT_FILE_MAX_BYTES`` (64 KB, ~16k tokens) is read and sent; a longer
  file is cut at a line end, with a marker telling the model the file's size and to read the rest;
* all files together: at most ``context_budget_bytes(window)`` — a fifth of the model's context
  window (at ~4 bytes a token) and never more than ``CONTEXT_FILES_MAX_BYTES`` (128 KB). When over,
  the most specific files (the cwd's, last) keep their text and the more general ones are cut
  first, or left out with a note naming them when less than 1 KB would be left of them
  (``fit_context_files``);
* a binary file (a NUL byte, or not UTF-8), a FIFO or a device is reported, never sent.

Every cut and every refusal is a warning diagnostic naming the file, shown at startup (TUI,
stderr in print mode). The project's ``.pi/SYSTEM.md`` and ``.pi/APPEND_SYSTEM.md`` (and the agent
dir's) are read with the same per-file bound (``read_context_file``).

A link out of the project (``links_out_of_project``): these files are text and load without
trust, but an ``AGENTS.md`` or ``.pi/SYSTEM.md`` that is a symlink to ``~/.ssh/id_ed25519`` would
send the user's own file to the model with every request. Such links are project code for trust
(``trust.find_project_code``) and are skipped until the project is trusted.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from pi_tui.core.regular_files import NotRegularFileError, read_regular_bytes
from pi_tui.core.sizes import format_size
from pi_tui.resources.diagnostics import ResourceDiagnostic
from pi_tui.resources.locations import project_dir

SYSTEM_FILE = "SYSTEM.md"
APPEND_SYSTEM_FILE = "APPEND_SYSTEM.md"
CONTEXT_FILE_NAMES = ("AGENTS.md", "AGENTS.MD", "CLAUDE.md", "CLAUDE.MD")
CONTEXT_FILE_MAX_BYTES = 64 * 1024
CONTEXT_FILES_MAX_BYTES = 128 * 1024
CONTEXT_WINDOW_SHARE = 0.2
"""The share of the model's window all context files together may take."""
BYTES_PER_TOKEN = 4
MIN_CONTEXT_BUDGET_BYTES = 2 * 1024
"""Even a tiny window gets the start of the instructions."""
MIN_USEFUL_PART_BYTES = 1024
"""A file the budget leaves less than this for is left out with a note, not cut to a heading."""


@dataclass(frozen=True, slots=True)
class ContextFile:
    path: Path
    content: str
    size: int | None = None
    """The file's size on disk in bytes (None when built by hand)."""
    sent_bytes: int | None = None
    """How many of its bytes ``content`` holds when it was cut (None: the whole file)."""


def context_budget_bytes(context_window: int | None) -> int:
    """How many bytes of context files a model with this window gets (None: the fixed cap)."""
    if not context_window or context_window <= 0:
        return CONTEXT_FILES_MAX_BYTES
    share = int(context_window * BYTES_PER_TOKEN * CONTEXT_WINDOW_SHARE)
    return max(MIN_CONTEXT_BUDGET_BYTES, min(CONTEXT_FILES_MAX_BYTES, share))


def first_context_file(directory: Path) -> Path | None:
    """The context file ``directory`` holds: the first of ``CONTEXT_FILE_NAMES`` present."""
    try:
        names = {entry.name for entry in directory.iterdir()}
    except OSError:
        return None
    # Compare exact names: on a case-insensitive filesystem `exists()` would match every spelling.
    for name in CONTEXT_FILE_NAMES:
        if name in names and (directory / name).exists():
            return directory / name
    return None


def _cut_notice(path: Path, size: int, kept: int, why: str) -> str:
    return (f"\n\n[pi-tui: {path.name} is {format_size(size)}; only its first {format_size(kept)} "
            f"are included here ({why}). Use the read tool for the rest.]")


def _left_out_notice(path: Path, size: int, why: str) -> str:
    return f"[pi-tui: {path} ({format_size(size)}) is left out here ({why}). Use the read tool to read it.]"


def _cut_point(head: bytes) -> int:
    """Where to end a cut ``head``: its last line end, or its last space when the last line end
    would drop more than half of it (a file of long paragraphs was cut to its first heading)."""
    for separator in (b"\n", b" "):
        at = head.rfind(separator)
        if at >= len(head) // 2:
            return at
    return len(head)


def _cut(file: ContextFile, limit: int, why: str) -> ContextFile:
    """``file`` with its text cut to at most ``limit`` bytes, plus the marker."""
    data = file.content.encode("utf-8")
    size = file.size if file.size is not None else len(data)
    head = data[:limit]
    if len(data) > limit:
        head = head[: _cut_point(head)]
    text = head.decode("utf-8", "ignore")
    return replace(file, content=text + _cut_notice(file.path, size, len(head), why), size=size, sent_bytes=len(head))


def _left_out(file: ContextFile, why: str) -> ContextFile:
    size = file.size if file.size is not None else len(file.content.encode("utf-8"))
    return replace(file, content=_left_out_notice(file.path, size, why), size=size, sent_bytes=0)


def read_context_file(path: Path, diagnostics: list[ResourceDiagnostic] | None,
                      what: str = "context file") -> ContextFile | None:
    """One context file (or, as ``what`` says, a system prompt file), bounded; None (with a
    diagnostic) for a binary or unreadable one."""

    def warn(message: str) -> None:
        if diagnostics is not None:
            diagnostics.append(ResourceDiagnostic("warning", message, path))

    try:
        data, size = read_regular_bytes(path, CONTEXT_FILE_MAX_BYTES + 1)
    except NotRegularFileError as error:
        warn(f"{what} not included: it is {error.kind}, not a regular file")
        return None
    except OSError as error:
        warn(f"cannot read {what}: {error.strerror or error}")
        return None
    if b"\x00" in data:
        warn(f"{what} not included: it is a binary file ({format_size(size)}), not text")
        return None
    truncated = size > CONTEXT_FILE_MAX_BYTES
    if not _is_utf8(data, cut=truncated):
        warn(f"{what} not included: it is not UTF-8 text ({format_size(size)}; a binary file?)")
        return None
    text = data.decode("utf-8", "ignore")  # (only a character split by the cut can be dropped)
    file = ContextFile(path, text, size=size)
    if truncated:
        file = _cut(file, CONTEXT_FILE_MAX_BYTES, f"{what}s are limited to {format_size(CONTEXT_FILE_MAX_BYTES)} each")
        warn(f"{what} is {format_size(size)}: only its first {format_size(file.sent_bytes or 0)} "
             f"are sent to the model (limit {format_size(CONTEXT_FILE_MAX_BYTES)} per file)")
    return file


def _is_utf8(data: bytes, *, cut: bool) -> bool:
    """Valid UTF-8; when ``cut``, one character may be incomplete at the very end."""
    try:
        data.decode("utf-8")
        return True
    except UnicodeDecodeError as error:
        return cut and error.reason == "unexpected end of data" and error.start >= len(data) - 3


def fit_context_files(
    files: Sequence[ContextFile], budget: int
) -> tuple[list[ContextFile], list[ResourceDiagnostic]]:
    """Keep the files' total text within ``budget`` bytes. The most specific files (last) keep
    their text first; the budget left over goes to the earlier ones, which are cut, or left out
    with a note naming them when less than ``MIN_USEFUL_PART_BYTES`` is left (the start of a
    file cut to a few bytes only misleads). Returns the files and a warning for each one that
    was cut or left out."""
    sizes = [len(f.content.encode("utf-8")) for f in files]
    if sum(sizes) <= budget:
        return list(files), []
    fitted: list[ContextFile] = list(files)
    notes: list[ResourceDiagnostic] = []
    left = budget
    for index in range(len(files) - 1, -1, -1):
        file = files[index]
        if sizes[index] <= left:
            left -= sizes[index]
            continue
        why = f"all context files together are limited to {format_size(budget)} for this model's window"
        share = f"all context files share {format_size(budget)}, a fifth of the model's context window"
        if left < MIN_USEFUL_PART_BYTES:
            fitted[index] = _left_out(file, why)
            size = fitted[index].size or sizes[index]
            notes.append(ResourceDiagnostic(
                "warning", f"context file is {format_size(size)}: left out, the model is told where it is ({share})",
                file.path))
            continue
        fitted[index] = _cut(file, left, why)
        left = max(0, left - (fitted[index].sent_bytes or 0))
        kept = fitted[index].sent_bytes or 0
        size = fitted[index].size or sizes[index]
        notes.append(ResourceDiagnostic(
            "warning", f"context file is {format_size(size)}: only its first {format_size(kept)} are sent to the model "
            f"({share})", file.path))
    return fitted, notes


def repository_root(cwd: Path) -> Path:
    """The folder whose files are the project's: the nearest folder from ``cwd`` up that holds
    ``.git``, else ``cwd`` itself."""
    for directory in (cwd, *cwd.parents):
        if os.path.lexists(directory / ".git"):
            return directory
    return cwd


def links_out_of_project(cwd: Path) -> list[tuple[Path, str]]:
    """The project's text files the model would get — the context file of each folder from the
    repository root down to ``cwd``, ``.pi/SYSTEM.md``, ``.pi/APPEND_SYSTEM.md`` — that resolve
    (through a symlink, of the file or a folder above it) outside the repository: each path and
    where it really leads."""
    cwd = cwd.absolute()
    root = repository_root(cwd)
    folders = [cwd, *cwd.parents[: len(cwd.relative_to(root).parts)]]
    candidates = [found for folder in folders if (found := first_context_file(folder)) is not None]
    candidates += [project_dir(cwd) / SYSTEM_FILE, project_dir(cwd) / APPEND_SYSTEM_FILE]
    inside = os.path.realpath(root).rstrip(os.sep) + os.sep
    links: list[tuple[Path, str]] = []
    for path in candidates:
        if os.path.lexists(path):
            real = os.path.realpath(path)
            if not real.startswith(inside):
                links.append((path, real))
    return links


def discover_context_files(
    cwd: Path, agent_dir: Path, diagnostics: list[ResourceDiagnostic] | None = None,
    skip: Collection[Path] = (),
) -> list[ContextFile]:
    """The context files in reading order; ``skip``: paths left out (links out of an untrusted
    project, which the trust report names)."""
    cwd = cwd.absolute()
    candidates: list[Path] = []
    global_file = first_context_file(agent_dir)
    if global_file is not None:
        candidates.append(global_file)
    for directory in (*reversed(cwd.parents), cwd):
        found = first_context_file(directory)
        if found is not None:
            candidates.append(found)
    files: list[ContextFile] = []
    seen: set[Path] = set()
    for path in candidates:
        if path in seen or path in skip:
            continue
        seen.add(path)
        file = read_context_file(path, diagnostics)
        if file is not None:
            files.append(file)
    return files
