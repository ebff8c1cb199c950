"""Output truncation as pi does it (pi-behaviour.md §4.1).

Two limits apply to every built-in tool's text: 2,000 lines and 50 KB (51,200 UTF-8 bytes),
whichever is hit first. ``read`` keeps the head (the model continues with ``offset``), ``bash``
keeps the tail (errors are at the end). Lines are counted by splitting on ``\\n``; a line is
never cut in the middle, except the single over-long last line of a tail, which is cut on a
UTF-8 character boundary.

The notices built from these results are model-visible and worded exactly as pi's, so a model
trained on pi understands them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pi_tui.core.messages import JsonValue
from pi_tui.core.sizes import (
    format_size as format_size,  # re-exported: the tools import it from here
)

DEFAULT_MAX_LINES = 2000
DEFAULT_MAX_BYTES = 51200
GREP_MAX_LINE_LENGTH = 500
UNLIMITED_LINES = 2**53 - 1
"""pi passes ``Number.MAX_SAFE_INTEGER`` for byte-only truncation (grep, find, ls)."""

TruncatedBy = Literal["lines", "bytes"]


@dataclass(slots=True)
class Truncation:
    """What a truncation kept and what it dropped; ``as_details()`` is pi's JSON shape."""

    content: str
    truncated: bool
    truncated_by: TruncatedBy | None
    total_lines: int
    total_bytes: int
    output_lines: int
    output_bytes: int
    last_line_partial: bool
    first_line_exceeds_limit: bool
    max_lines: int
    max_bytes: int

    def as_details(self) -> dict[str, JsonValue]:
        return {
            "content": self.content,
            "truncated": self.truncated,
            "truncatedBy": self.truncated_by,
            "totalLines": self.total_lines,
            "totalBytes": self.total_bytes,
            "outputLines": self.output_lines,
            "outputBytes": self.output_bytes,
            "lastLinePartial": self.last_line_partial,
            "firstLineExceedsLimit": self.first_line_exceeds_limit,
            "maxLines": self.max_lines,
            "maxBytes": self.max_bytes,
        }


def utf8_len(text: str) -> int:
    # ASCII is the common case and needs no encoding pass.
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def _untruncated(content: str, lines: int, size: int, max_lines: int, max_bytes: int) -> Truncation:
    return Truncation(content, False, None, lines, size, lines, size, False, False, max_lines, max_bytes)


def truncate_head(
    content: str, *, max_lines: int = DEFAULT_MAX_LINES, max_bytes: int = DEFAULT_MAX_BYTES
) -> Truncation:
    """Keep whole lines from the start while both limits hold."""
    total_bytes = utf8_len(content)
    lines = content.split("\n")
    total_lines = len(lines)
    if total_lines <= max_lines and total_bytes <= max_bytes:
        return _untruncated(content, total_lines, total_bytes, max_lines, max_bytes)
    if utf8_len(lines[0]) > max_bytes:
        return Truncation("", True, "bytes", total_lines, total_bytes, 0, 0, False, True, max_lines, max_bytes)
    kept: list[str] = []
    used = 0
    truncated_by: TruncatedBy = "lines"
    for index, line in enumerate(lines[:max_lines]):
        cost = utf8_len(line) + (1 if index > 0 else 0)
        if used + cost > max_bytes:
            truncated_by = "bytes"
            break
        kept.append(line)
        used += cost
    if len(kept) >= max_lines and used <= max_bytes:
        truncated_by = "lines"
    text = "\n".join(kept)
    return Truncation(
        text, True, truncated_by, total_lines, total_bytes, len(kept), utf8_len(text), False, False,
        max_lines, max_bytes,
    )


def tail_of_line_bytes(line: str, max_bytes: int) -> str:
    """The last ``max_bytes`` bytes of ``line``, starting on a whole UTF-8 character."""
    data = line.encode("utf-8", "surrogatepass")
    if len(data) <= max_bytes:
        return line
    start = len(data) - max_bytes
    while start < len(data) and (data[start] & 0xC0) == 0x80:
        start += 1  # skip continuation bytes: never start inside a character
    return data[start:].decode("utf-8", "surrogatepass")


def truncate_tail(
    content: str, *, max_lines: int = DEFAULT_MAX_LINES, max_bytes: int = DEFAULT_MAX_BYTES
) -> Truncation:
    """Keep whole lines from the end; a single over-long last line keeps its last bytes."""
    total_bytes = utf8_len(content)
    lines = content.split("\n")
    total_lines = len(lines)
    if total_lines <= max_lines and total_bytes <= max_bytes:
        return _untruncated(content, total_lines, total_bytes, max_lines, max_bytes)
    kept: list[str] = []
    used = 0
    truncated_by: TruncatedBy = "lines"
    last_line_partial = False
    for line in reversed(lines):
        if len(kept) >= max_lines:
            break
        cost = utf8_len(line) + (1 if kept else 0)
        if used + cost > max_bytes:
            truncated_by = "bytes"
            if not kept:
                partial = tail_of_line_bytes(line, max_bytes)
                kept.append(partial)
                used = utf8_len(partial)
                last_line_partial = True
            break
        kept.append(line)
        used += cost
    if len(kept) >= max_lines and used <= max_bytes:
        truncated_by = "lines"
    kept.reverse()
    text = "\n".join(kept)
    return Truncation(
        text, True, truncated_by, total_lines, total_bytes, len(kept), utf8_len(text),
        last_line_partial, False, max_lines, max_bytes,
    )


def truncate_line(line: str, max_chars: int = GREP_MAX_LINE_LENGTH) -> tuple[str, bool]:
    """``line[:max_chars] + "... [truncated]"`` when longer; returns (text, was_truncated)."""
    if len(line) <= max_chars:
        return line, False
    return line[:max_chars] + "... [truncated]", True
