"""Project instruction files: ``AGENTS.md`` / ``CLAUDE.md`` (pi-behaviour.md §5.1, §13.5).

First the agent dir's file, then one file per directory from the filesystem root down to the
cwd (root first, so the most specific instructions come last and win in the model's reading).
In each directory the first existing name of ``CONTEXT_FILE_NAMES`` is used. They are read from
disk every time the system prompt is rebuilt, so a compaction can never summarize them away.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pi_tui.resources.diagnostics import ResourceDiagnostic

CONTEXT_FILE_NAMES = ("AGENTS.md", "AGENTS.MD", "CLAUDE.md", "CLAUDE.MD")


@dataclass(frozen=True, slots=True)
class ContextFile:
    path: Path
    content: str


def _first_in(directory: Path) -> Path | None:
    try:
        names = {entry.name for entry in directory.iterdir()}
    except OSError:
        return None
    # Compare exact names: on a case-insensitive filesystem `exists()` would match every spelling.
    for name in CONTEXT_FILE_NAMES:
        if name in names and (directory / name).is_file():
            return directory / name
    return None


def discover_context_files(
    cwd: Path, agent_dir: Path, diagnostics: list[ResourceDiagnostic] | None = None
) -> list[ContextFile]:
    cwd = cwd.absolute()
    candidates: list[Path] = []
    global_file = _first_in(agent_dir)
    if global_file is not None:
        candidates.append(global_file)
    for directory in (*reversed(cwd.parents), cwd):
        found = _first_in(directory)
        if found is not None:
            candidates.append(found)
    files: list[ContextFile] = []
    seen: set[Path] = set()
    for path in candidates:
        if path in seen:
            continue
        seen.add(path)
        try:
            files.append(ContextFile(path, path.read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError) as exc:
            if diagnostics is not None:
                diagnostics.append(ResourceDiagnostic("warning", f"cannot read context file: {exc}", path))
    return files
