"""Strict JSONL framing for RPC mode (pi-behaviour.md §9.4, §11 rpc-jsonl).

Input: records are separated by ``\\n`` only. A trailing ``\\r`` is stripped (CRLF clients work),
U+2028/U+2029 and lone ``\\r`` inside a record are payload, and a final record without a newline
is still delivered at end of input. That is why this does not use ``str.splitlines`` or text-mode
stdin: both split on ``\\r``, U+2028, U+2029 and other Unicode line breaks and would cut a JSON
string in half.

We split raw bytes (``\\n`` never occurs inside a UTF-8 multi-byte sequence) and decode each whole
record, so a character split across two reads is never mangled.

Output: one compact JSON document per line, UTF-8. U+2028/U+2029 are written as ``\\u2028`` /
``\\u2029`` escapes: the parsed value is identical, and a client that (wrongly) splits on them still
sees whole frames. Control characters (C0, DEL, C1) are escaped too: the frames stay lossless but
a terminal showing them raw is never driven by a model's text.
"""

from __future__ import annotations

from typing import Any

from pi_tui.core.terminal_text import json_line


class LineSplitter:
    """Incremental LF splitter: ``feed(bytes)`` returns the complete records so far; ``finish()``
    returns the unterminated tail (or None)."""

    def __init__(self) -> None:
        self._pending = bytearray()

    def feed(self, chunk: bytes) -> list[str]:
        self._pending += chunk
        if b"\n" not in chunk:
            return []
        *complete, rest = bytes(self._pending).split(b"\n")
        self._pending = bytearray(rest)
        return [_decode(record) for record in complete]

    def finish(self) -> str | None:
        """The last record when input ended without a newline; None when there is none."""
        if not self._pending:
            return None
        record = _decode(bytes(self._pending))
        self._pending.clear()
        return record


def _decode(record: bytes) -> str:
    if record.endswith(b"\r"):
        record = record[:-1]
    # Invalid UTF-8 becomes U+FFFD rather than killing the reader; the JSON parse decides.
    return record.decode("utf-8", errors="replace")


def split_records(data: bytes) -> list[str]:
    """All records of a complete input (for tests and one-shot use)."""
    splitter = LineSplitter()
    records = splitter.feed(data)
    tail = splitter.finish()
    return records if tail is None else [*records, tail]


def encode_frame(value: Any) -> bytes:
    """One output line: compact JSON, UTF-8, ``\\n``-terminated, never containing a raw line
    separator or control character (``core.terminal_text.json_line``)."""
    text = json_line(value)
    # A lone surrogate (possible in Python strings) is written as its JSON escape, so the line
    # stays valid UTF-8 and parses back to the same value.
    return (text + "\n").encode("utf-8", errors="backslashreplace")
