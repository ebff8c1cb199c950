"""A bounded accumulator for command output (pi 0.73.1 ``output-accumulator``, §13.4).

Memory stays flat whatever a command prints: the accumulator keeps

* every raw byte only until the output passes the limits (≤ 50 KB / 2,000 lines); from then on
  raw bytes go straight to the full-output file, which is byte-identical to what the command
  printed (pi writes re-decoded text; we keep the bytes, so binary noise survives too) except
  that the session's known keys (``secrets``) are replaced by ``[redacted]`` on the way, a key
  split between chunks included (``core.redact.StreamRedactor``): secrets never reach disk;
* a rolling decoded tail of at least 100 K characters (≥ 100 KB), enough for the 50 KB shown;
* counters over the whole stream (lines, raw bytes, decoded UTF-8 bytes, last line length), so
  the notice reports the real totals.
"""

from __future__ import annotations

import codecs
import secrets
from collections import deque
from collections.abc import Collection
from pathlib import Path
from typing import BinaryIO

from pi_tui.core.redact import StreamRedactor
from pi_tui.tools.truncate import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_LINES,
    Truncation,
    truncate_tail,
    utf8_len,
)

TAIL_WINDOW_CHARS = 100 * 1024


class OutputAccumulator:
    def __init__(
        self,
        spill_dir: Path,
        *,
        file_prefix: str = "pi-bash-",
        max_lines: int = DEFAULT_MAX_LINES,
        max_bytes: int = DEFAULT_MAX_BYTES,
        secrets: Collection[str] = (),
    ) -> None:
        self._spill_dir = spill_dir
        self._redactor = StreamRedactor(secrets)
        self._file_prefix = file_prefix
        self.max_lines = max_lines
        self.max_bytes = max_bytes
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._early = bytearray()  # all raw output until the spill file exists
        self._tail: deque[str] = deque()
        self._tail_chars = 0
        self._tail_trimmed = False  # the tail no longer starts at the start of the stream
        self._file: BinaryIO | None = None
        self._finished = False
        self.full_output_path: Path | None = None
        self.raw_bytes = 0
        self.decoded_bytes = 0
        self.newlines = 0
        self.last_line_bytes = 0

    @property
    def total_lines(self) -> int:
        return self.newlines + 1

    @property
    def over_limits(self) -> bool:
        return (
            self.raw_bytes > self.max_bytes
            or self.decoded_bytes > self.max_bytes
            or self.total_lines > self.max_lines
        )

    def feed(self, chunk: bytes) -> None:
        if not chunk:
            return
        self.raw_bytes += len(chunk)
        newlines = chunk.count(b"\n")
        self.newlines += newlines
        if newlines:
            self.last_line_bytes = len(chunk) - chunk.rfind(b"\n") - 1
        else:
            self.last_line_bytes += len(chunk)
        pending_before = len(self._decoder.getstate()[0])
        if pending_before == 0 and chunk.isascii():
            # Fast path (most output): ASCII is its own UTF-8, so count it without decoding and
            # decode only the part the tail window can keep.
            self.decoded_bytes += len(chunk)
            self._append_tail(chunk[-TAIL_WINDOW_CHARS:].decode("ascii"), dropped=len(chunk) > TAIL_WINDOW_CHARS)
        else:
            text = self._decoder.decode(chunk)
            self._count_decoded(text, len(chunk) + pending_before - len(self._decoder.getstate()[0]))
            self._append_tail(text)
        if self._file is not None:
            self._write(chunk)
            return
        self._early += chunk
        if self.over_limits:
            self._open_spill_file()

    def _count_decoded(self, text: str, consumed: int) -> None:
        # Valid UTF-8 decodes to exactly the bytes consumed; only replacement characters differ.
        if text.isascii() or "\ufffd" not in text:
            self.decoded_bytes += consumed
        else:
            self.decoded_bytes += utf8_len(text)

    def _append_tail(self, text: str, *, dropped: bool = False) -> None:
        """Add decoded text; ``dropped`` says output just before ``text`` was never kept."""
        if dropped or len(text) >= TAIL_WINDOW_CHARS:
            # The new text alone fills the window: no need to join what it replaces.
            kept = text[-TAIL_WINDOW_CHARS:]
            self._tail_trimmed = self._tail_trimmed or dropped or self._tail_chars > 0 or len(kept) < len(text)
            self._tail.clear()
            self._tail.append(kept)
            self._tail_chars = len(kept)
            return
        if not text:
            return
        self._tail.append(text)
        self._tail_chars += len(text)
        if self._tail_chars > 2 * TAIL_WINDOW_CHARS:
            joined = "".join(self._tail)[-TAIL_WINDOW_CHARS:]
            self._tail.clear()
            self._tail.append(joined)
            self._tail_chars = len(joined)
            self._tail_trimmed = True

    def _open_spill_file(self) -> None:
        self._spill_dir.mkdir(parents=True, exist_ok=True)
        path = self._spill_dir / f"{self._file_prefix}{secrets.token_hex(8)}.log"
        self._file = open(path, "wb")  # noqa: SIM115 - closed in finish()
        self._write(bytes(self._early))
        self._early = bytearray()
        self.full_output_path = path

    def _write(self, chunk: bytes) -> None:
        assert self._file is not None
        if not self._redactor.active:
            self._file.write(chunk)
            return
        for piece in self._redactor.feed(chunk):
            self._file.write(piece)

    def finish(self) -> None:
        """Flush the decoder and close the full-output file (idempotent)."""
        if self._finished:
            return
        self._finished = True
        rest = self._decoder.decode(b"", final=True)
        if rest:
            self.decoded_bytes += utf8_len(rest)
            self._append_tail(rest)
            if self._file is None and self.over_limits:
                self._open_spill_file()
        if self._file is not None:
            self._file.write(self._redactor.flush())
            self._file.flush()
            self._file.close()

    def tail_text(self) -> str:
        text = "".join(self._tail)
        if self._tail_trimmed:
            newline = text.find("\n")
            if newline != -1:
                text = text[newline + 1 :]  # the window's first line is partial: drop it
        return text

    def truncation(self) -> Truncation:
        """``truncate_tail`` of the output, with totals covering the whole stream."""
        result = truncate_tail(self.tail_text(), max_lines=self.max_lines, max_bytes=self.max_bytes)
        if not self.over_limits:
            return result
        result.truncated = True
        if result.truncated_by is None:
            result.truncated_by = "bytes" if self.decoded_bytes > self.max_bytes else "lines"
        result.total_lines = self.total_lines
        result.total_bytes = self.decoded_bytes
        return result
