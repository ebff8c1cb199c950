"""Reading and serializing session JSONL (pi-behaviour.md §1.4).

pi skips malformed lines silently; we skip them too (a session must still open) but never
silently: every skipped line is counted and reported with the file and line number. A last line
without its ``\\n`` that does not parse is a torn write (the process died mid-append); it is
reported as such, and the writer starts the next append on a fresh line.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pi_tui.core.session.entries import Entry

MAX_LISTED_WARNINGS = 20
"""Individual malformed-line warnings listed before the rest are summarized in one line."""


@dataclass(slots=True)
class ParsedSession:
    """The result of parsing one file, before migrations."""

    path: Path
    entries: list[Entry] = field(default_factory=list)
    """Header first, then tree entries; ``[]`` when the file has no valid header."""
    warnings: list[str] = field(default_factory=list)
    malformed_lines: list[int] = field(default_factory=list)
    """1-based line numbers of lines that were not JSON objects (torn last line included)."""
    torn_last_line: bool = False
    ends_with_newline: bool = True
    has_content: bool = False
    """The file had at least one non-blank line (valid or not)."""

    @property
    def valid(self) -> bool:
        return bool(self.entries)


def is_valid_header(obj: Any) -> bool:
    return isinstance(obj, dict) and obj.get("type") == "session" and isinstance(obj.get("id"), str)


def parse_session_bytes(data: bytes, path: Path) -> ParsedSession:
    """Parse a session file's bytes: one ``json.loads`` per line, nothing else per entry."""
    result = ParsedSession(path=path)
    text = data.decode("utf-8", errors="replace")
    result.ends_with_newline = not text or text.endswith("\n")
    lines = text.split("\n")
    last_index = len(lines) - 1
    entries = result.entries
    malformed = result.malformed_lines
    loads = json.loads
    for index, line in enumerate(lines):
        if not line or line.isspace():
            continue
        result.has_content = True
        try:
            obj = loads(line)
        except ValueError:
            obj = None
        if type(obj) is not dict:
            malformed.append(index + 1)
            if index == last_index and not result.ends_with_newline:
                result.torn_last_line = True
            continue
        entries.append(obj)
    if entries and not is_valid_header(entries[0]):
        result.entries = []
    _report(result)
    return result


def _report(result: ParsedSession) -> None:
    lines = result.malformed_lines
    torn = lines[-1] if result.torn_last_line else None
    broken = [n for n in lines if n != torn]
    for n in broken[:MAX_LISTED_WARNINGS]:
        result.warnings.append(f"{result.path}:{n}: malformed line skipped (not a JSON object)")
    if len(broken) > MAX_LISTED_WARNINGS:
        result.warnings.append(
            f"{result.path}: {len(broken) - MAX_LISTED_WARNINGS} more malformed lines skipped "
            f"({len(broken)} in total)"
        )
    if torn is not None:
        result.warnings.append(
            f"{result.path}:{torn}: incomplete last line skipped (a write was cut off)"
        )
    if result.has_content and not result.entries:
        result.warnings.append(f"{result.path}: not a pi session file (no valid session header)")


def read_session_file(path: Path) -> ParsedSession:
    """Read and parse ``path``; raises ``OSError`` (e.g. FileNotFoundError) if it can't be read."""
    return parse_session_bytes(path.read_bytes(), path)


def dump_line(entry: Entry) -> str:
    """One JSONL line as ``JSON.stringify`` writes it (compact, UTF-8), newline included."""
    line = json.dumps(entry, ensure_ascii=False, separators=(",", ":"))
    try:
        line.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: escape it, as JSON.stringify does
        line = json.dumps(entry, ensure_ascii=True, separators=(",", ":"))
    return line + "\n"


def dump_lines(entries: list[Entry]) -> bytes:
    return "".join(dump_line(e) for e in entries).encode("utf-8")


def read_header(path: Path, limit: int = 65536) -> Entry | None:
    """The header from the first line, or None when it is not a valid session header.

    pi reads only 512 bytes here; a header with a long cwd or ``parentSession`` can be longer.
    """
    try:
        with path.open("rb") as handle:
            first = handle.readline(limit)
    except OSError:
        return None
    try:
        obj = json.loads(first.decode("utf-8", errors="replace"))
    except ValueError:
        return None
    return obj if is_valid_header(obj) else None
