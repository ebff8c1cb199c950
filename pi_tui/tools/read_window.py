"""Select a window of lines from a file without loading the file (for ``read``).

pi reads the whole file, splits it on ``\\n`` and truncates the selection (§4.2). The visible
result depends only on: the total line count, the byte extent of the selected lines, and the
lines that fit in the head truncation. All three come from one chunked pass that records byte
positions, then exactly the bytes that will be shown are read. A 100 MB file with an offset near
the end therefore costs one streaming pass and a 50 KB read, never 100 MB of memory.

The result mirrors ``truncate_head`` applied to the selected text (a property test checks that).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import BinaryIO

from pi_tui.core.cancellable_thread import check_cancelled
from pi_tui.tools.truncate import DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, Truncation

CHUNK_BYTES = 1 << 20


@dataclass(slots=True)
class LineWindow:
    total_file_lines: int
    start_index: int
    """0-based index of the first selected line."""
    selected_lines: int
    first_line_bytes: int
    truncation: Truncation


class OffsetBeyondEnd(Exception):
    def __init__(self, total_lines: int) -> None:
        super().__init__(total_lines)
        self.total_lines = total_lines


def _scan(
    fh: BinaryIO, start: int, stop: int | None, want: int
) -> tuple[int, int, list[int], int | None, int]:
    """One pass: (total lines, byte offset of line ``start``, end offsets of up to ``want``
    lines from ``start``, end offset of line ``stop - 1`` if reached, file size)."""
    line = 0  # index of the line being read at the current chunk position
    pos = 0
    start_pos = 0
    ends: list[int] = []
    stop_end: int | None = None
    last_wanted = start + want - 1
    while chunk := fh.read(CHUNK_BYTES):
        check_cancelled()  # a 20 GB file takes a while: an aborted read stops here
        newlines = chunk.count(b"\n")
        first_term, last_term = line, line + newlines - 1  # lines terminated in this chunk
        touches = newlines and (
            (first_term <= start - 1 <= last_term)
            or (first_term <= last_wanted and last_term >= start)
            or (stop is not None and first_term <= stop - 1 <= last_term)
        )
        if not touches:
            line += newlines
            pos += len(chunk)
            continue
        index = chunk.find(b"\n")
        while index != -1:
            if line == start - 1:
                start_pos = pos + index + 1
            if start <= line <= last_wanted:
                ends.append(pos + index)
            if stop is not None and line == stop - 1:
                stop_end = pos + index
            line += 1
            index = chunk.find(b"\n", index + 1)
        pos += len(chunk)
    # The text after the last newline is one more line (possibly empty), as split("\n") gives.
    if start <= line <= last_wanted:
        ends.append(pos)
    if stop is not None and line == stop - 1:
        stop_end = pos
    return line + 1, start_pos, ends, stop_end, pos


def read_line_window(
    fh: BinaryIO,
    *,
    offset_index: int,
    limit: int | None,
    max_lines: int = DEFAULT_MAX_LINES,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> LineWindow:
    """Lines ``offset_index`` .. (+limit) of the file, head-truncated like pi's read."""
    stop = None if limit is None else offset_index + max(limit, 0)
    want = max_lines if limit is None else min(max_lines, max(limit, 0))
    total, start_pos, ends, stop_end, size = _scan(fh, offset_index, stop, want)
    if offset_index >= total:
        raise OffsetBeyondEnd(total)
    selected = total - offset_index if stop is None else min(stop, total) - offset_index
    ends = ends[:selected]
    if selected == 0:
        return LineWindow(total, offset_index, 0, 0, Truncation("", False, None, 1, 0, 1, 0, False, False, max_lines, max_bytes))
    selection_end = size if stop is None or stop >= total else stop_end
    assert selection_end is not None
    total_bytes = selection_end - start_pos
    first_line_bytes = ends[0] - start_pos
    if selected <= max_lines and total_bytes <= max_bytes:
        fh.seek(start_pos)
        text = fh.read(total_bytes).decode("utf-8", "replace")
        truncation = Truncation(text, False, None, selected, total_bytes, selected, total_bytes, False, False, max_lines, max_bytes)
        return LineWindow(total, offset_index, selected, first_line_bytes, truncation)
    if first_line_bytes > max_bytes:
        truncation = Truncation("", True, "bytes", selected, total_bytes, 0, 0, False, True, max_lines, max_bytes)
        return LineWindow(total, offset_index, selected, first_line_bytes, truncation)
    kept = 0
    used = 0
    truncated_by = "lines"
    line_start = start_pos
    for index, end in enumerate(ends[:max_lines]):
        cost = (end - line_start) + (1 if index > 0 else 0)
        if used + cost > max_bytes:
            truncated_by = "bytes"
            break
        kept += 1
        used += cost
        line_start = end + 1
    if kept >= max_lines and used <= max_bytes:
        truncated_by = "lines"
    fh.seek(start_pos)
    text = fh.read(used).decode("utf-8", "replace")
    truncation = Truncation(
        text, True, "lines" if truncated_by == "lines" else "bytes", selected, total_bytes, kept,
        used, False, False, max_lines, max_bytes,
    )
    return LineWindow(total, offset_index, selected, first_line_bytes, truncation)
