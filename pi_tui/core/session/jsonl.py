"""Reading and serializing session JSONL (pi-behaviour.md §1.4).

pi skips malformed lines silently; we skip them too (a session must still open) but never
silently: every skipped line is counted and reported with the file and line number. A last line
without its ``\\n`` that does not parse is a torn write (the process died mid-append); it is
reported as such, and the writer starts the next append on a fresh line.
"""

from __future__ import annotations

import gc
import json
import json.scanner
import math
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pi_tui.core.regular_files import open_regular
from pi_tui.core.session.entries import Entry

_BLANK = " \t\r\f\v"
"""What may fill a line that is skipped as blank (ASCII only: a NEL or NBSP line is malformed,
as it is for pi)."""

_BLANK_BYTES = frozenset(_BLANK.encode())

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
    lines: list[int] = field(default_factory=list)
    """The 1-based line number of each of ``entries``."""
    suspect_lines: set[int] = field(default_factory=set)
    """Lines the strict parser refused but the lenient one read: they may hold NaN or Infinity
    (Python's ``json`` reads them, JSON and pi do not), which ``validation`` looks for."""
    byte_order_mark: bool = False
    """The file started with a UTF-8 byte order mark (ignored, and reported)."""
    line_count: int = 0
    """Lines read so far (a file read in blocks continues the numbering)."""

    @property
    def valid(self) -> bool:
        return bool(self.entries)


def is_valid_header(obj: Any) -> bool:
    return isinstance(obj, dict) and obj.get("type") == "session" and isinstance(obj.get("id"), str)


_BOM = "\ufeff"
_BOM_BYTES = _BOM.encode()


class _LenientDecoder(json.JSONDecoder):
    """The stdlib decoder, noting when a line holds ``NaN``/``Infinity`` (or a number too large
    for a float, which it reads as infinity): ``suspect`` is set, and the line is checked."""

    def __init__(self) -> None:
        self.suspect = False
        super().__init__(parse_constant=self._constant, parse_float=self._float)

    def _constant(self, name: str) -> float:
        self.suspect = True
        return float(name)  # 'NaN', 'Infinity', '-Infinity'

    def _float(self, text: str) -> float:
        value = float(text)
        if value in (math.inf, -math.inf):
            self.suspect = True
        return value


def _lenient_decoder() -> _LenientDecoder:
    return _LenientDecoder()


def _make_scanner(decoder: json.JSONDecoder) -> Any:
    """The C JSON scanner, called directly on the whole text at each line start: no per-line
    string copies and none of ``json.loads``' per-call Python overhead (about a third faster)."""
    factory: Any = json.scanner.make_scanner  # c_make_scanner when the C extension is there
    return factory(decoder)


def _parse_at(scan: Any, decoder: json.JSONDecoder, text: str, start: int, stop: int) -> Any:
    """The JSON value on ``text[start:stop]`` (one line), or raise ValueError."""
    try:
        obj, end = scan(text, start)
    except StopIteration:  # leading whitespace or garbage: let the full decoder judge the line
        return decoder.decode(text[start:stop])
    if end != stop and not text[end:stop].isspace():
        raise ValueError("extra data after the JSON value")
    return obj


def _load_orjson() -> Any:
    try:
        import orjson
    except ImportError:  # optional accelerator; the stdlib path gives the same result
        return None
    return orjson


def parse_session_bytes(data: bytes | bytearray, path: Path, *, into: ParsedSession | None = None,
                        finish: bool = True, begin: int = 0, end: int | None = None) -> ParsedSession:
    """Parse a session file's bytes, ``data[begin:end]`` (see ``parse_session_text`` for the rules).

    With orjson installed each line is decoded by it straight from the bytes, 2.6× faster than the
    stdlib scanner on the 100,000-entry benchmark file (0.57 s vs 1.5 s here). A line orjson
    refuses is handed to the stdlib parser on its UTF-8 text (invalid bytes replaced), which is
    exactly what the text path does, so a lone-surrogate escape or a NaN still loads. (An integer
    past 64 bits becomes a float, as JavaScript's JSON.parse — pi — reads it.)
    """
    orjson = _load_orjson()
    stop = len(data) if end is None else end
    if orjson is not None and begin < stop and data.endswith(b"\n", begin, stop) and not (
            into is None and data.startswith(_BOM_BYTES, begin)):
        objects = _every_line_an_object(data, begin, stop, orjson.loads, orjson.JSONDecodeError)
        if objects is not None:
            return _take_lines(objects, path, into=into, finish=finish)
    if begin or stop != len(data) or type(data) is not bytes:
        data = bytes(memoryview(data)[begin:stop])  # a block with an unusual line: the line loop reads a copy
    if orjson is None:
        return parse_session_text(data.decode("utf-8", errors="replace"), path)
    fast_loads = orjson.loads
    fast_error = orjson.JSONDecodeError
    lenient = _lenient_decoder()

    def parse(start: int, stop: int) -> Any:
        line = data[start:stop]
        try:
            return fast_loads(line)
        except fast_error:
            lenient.suspect = True
            try:
                return lenient.decode(line.decode("utf-8", errors="replace"))
            except (ValueError, RecursionError):
                return None

    bom = into is None and data.startswith(_BOM_BYTES)
    return _parse_lines(data, path, b"\n", _BLANK_BYTES, _BLANK.encode(), parse, lenient, bom,
                        into=into, finish=finish)


def _every_line_an_object(data: bytes | bytearray, begin: int, end: int, loads: Any, error: Any) -> list[Any] | None:
    """The common case at C speed: every line of ``data[begin:end]`` (ending in a newline) is a JSON object
    orjson reads. None as soon as one is not (a blank, malformed, lenient-only or non-object
    line): the line loop then reads the block again with all its rules. Where this answers, the
    loop would have given the same objects (it hands each non-blank line to the same
    ``orjson.loads``), without its per-line Python work (~0.15 s of a 100,000-line file)."""
    paused = gc.isenabled()
    gc.disable()  # as in _parse_lines
    objects: list[Any] = []
    append, find, view = objects.append, data.find, memoryview(data)
    start, length = begin, end
    try:
        # orjson reads a memoryview's bytes in place: no copy of each line (what ``split`` makes,
        # 75 MB of short-lived bytes objects for a 75 MB file), about 10% of the parse
        while start < length:
            stop = find(b"\n", start)
            append(loads(view[start:stop]))
            start = stop + 1
    except error:
        return None
    finally:
        view.release()
        if paused:
            gc.enable()
    for obj in objects:
        if type(obj) is not dict:
            return None
    return objects


def _take_lines(objects: list[Any], path: Path, *, into: ParsedSession | None, finish: bool) -> ParsedSession:
    """``_parse_lines``'s result for a block whose every line is the object in ``objects``."""
    result = into if into is not None else ParsedSession(path=path)
    result.ends_with_newline = True
    if objects:
        result.has_content = True
    first = result.line_count + 1
    result.entries.extend(objects)
    result.lines.extend(range(first, first + len(objects)))
    result.line_count += len(objects)
    return _finish(result) if finish else result


def parse_session_text(text: str, path: Path) -> ParsedSession:
    """Parse a session file's text: one JSON parse per line, nothing else per entry."""
    lenient = _lenient_decoder()
    scan = _make_scanner(lenient)

    def parse(start: int, stop: int) -> Any:
        if text.find("\\ud", start, stop) >= 0 or text.find("\\uD", start, stop) >= 0:
            lenient.suspect = True  # maybe a lone surrogate (orjson refuses those; this does not)
        try:
            return _parse_at(scan, lenient, text, start, stop)
        except (ValueError, RecursionError):
            return None

    bom = text.startswith(_BOM)
    return _parse_lines(text, path, "\n", frozenset(_BLANK), _BLANK, parse, lenient, bom)


def _parse_lines(data: Any, path: Path, newline: Any, blank_first: frozenset[Any], blank: Any,
                 parse: Callable[[int, int], Any], lenient: _LenientDecoder, bom: bool, *,
                 into: ParsedSession | None = None, finish: bool = True) -> ParsedSession:
    """The line loop shared by the bytes and text parsers (``data`` is ``bytes`` or ``str``).

    The cyclic garbage collector is paused while the objects are built: a 100,000-entry file
    creates millions of dicts and lists, and collections triggered half-way through rescan all
    of them again and again (measured: 2.6 s → 1.5 s on the benchmark file). None of these
    objects form cycles, so nothing is lost by collecting later.
    """
    result = into if into is not None else ParsedSession(path=path, byte_order_mark=bom)
    length = len(data)
    result.ends_with_newline = not data or data.endswith(newline)
    entries = result.entries
    numbers = result.lines
    malformed = result.malformed_lines
    find = data.find
    paused = gc.isenabled()
    gc.disable()
    try:
        start = len(_BOM_BYTES if isinstance(data, bytes) else _BOM) if bom else 0
        line_number = result.line_count
        while start < length:
            line_number += 1
            stop = find(newline, start)
            if stop < 0:
                stop = length
            if stop == start or (data[start] in blank_first and not data[start:stop].strip(blank)):
                start = stop + 1
                continue
            result.has_content = True
            obj = parse(start, stop)
            if lenient.suspect:
                lenient.suspect = False
                result.suspect_lines.add(line_number)
            if type(obj) is dict:
                entries.append(obj)
                numbers.append(line_number)
            else:
                malformed.append(line_number)
                if stop == length and not result.ends_with_newline:
                    result.torn_last_line = True
            start = stop + 1
        result.line_count = line_number
    finally:
        if paused:
            gc.enable()
    return _finish(result) if finish else result


def _finish(result: ParsedSession) -> ParsedSession:
    if result.entries and not is_valid_header(result.entries[0]):
        result.entries = []
        result.lines = []
    _report(result)
    return result


def _report(result: ParsedSession) -> None:
    if result.byte_order_mark:
        result.warnings.append(f"{result.path}:1: the file starts with a UTF-8 byte order mark; ignored")
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


def read_session_file(path: Path, on_block: Callable[[list[Entry], int], None] | None = None) -> ParsedSession:
    """Read and parse ``path``; raises ``OSError`` (e.g. FileNotFoundError, or
    ``NotRegularFileError`` for a FIFO or device, which a plain read would wait on forever).

    A large file is parsed a block at a time, and ``on_block(entries, start)`` sees each block's
    new entries (``entries[start:]``) before the next is read (``well_formed.Admission``: the
    loader's checks run there, while the block is fresh, and free its repeated strings early). The
    last lines and a small file are not passed to it: the caller looks at what follows ``start``."""
    with open_regular(path) as fh:
        if os.fstat(fh.fileno()).st_size <= READ_BLOCK_BYTES or _load_orjson() is None:
            return parse_session_bytes(fh.read(), path)
        return _parse_in_blocks(fh, path, on_block)


READ_BLOCK_BYTES = 4 * 1024 * 1024
"""A large file is read and parsed a few MB at a time: holding its whole bytes while its entries
are built cost the bytes' size on top (75 MB of a 100,000-entry session's 310 MB peak)."""


def _parse_in_blocks(fh: Any, path: Path, on_block: Callable[[list[Entry], int], None] | None) -> ParsedSession:
    """``parse_session_bytes`` on the whole file, one block of whole lines at a time (the same
    result: line numbers run on, a byte order mark counts only at the start, a torn line only at
    the end)."""
    result: ParsedSession | None = None
    pending = b""
    buffer = bytearray(READ_BLOCK_BYTES)  # one buffer for every block: fresh 4 MB each time cost page faults
    while True:
        size = fh.readinto(buffer)
        if not size:
            break
        cut = buffer.rfind(b"\n", 0, size) + 1
        if cut == 0:  # no line end yet: a line longer than a block
            pending += buffer[:size]
            continue
        done = len(result.entries) if result is not None else 0
        begin = 0
        if pending:  # the line the last block ended in: completed by this one's first line
            begin = buffer.find(b"\n", 0, size) + 1
            result = parse_session_bytes(pending + buffer[:begin], path, into=result, finish=False)
        if begin < cut:  # the block's own whole lines, read where they lie (no copy)
            result = parse_session_bytes(buffer, path, into=result, finish=False, begin=begin, end=cut)
        pending = bytes(buffer[cut:size])
        if on_block is not None and result is not None:
            on_block(result.entries, done)
    if result is None:
        return parse_session_bytes(pending, path)
    if pending:
        return parse_session_bytes(pending, path, into=result)
    return parse_session_bytes(b"", path, into=result)


def _json_fallback(value: object) -> object:
    """A value ``json`` cannot encode (a ``Path`` or a set in a Python tool's ``details``): as
    a list or a string. Raising here would leave the entry pending forever, so no later entry
    of the session could be written either."""
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    return str(value)


def dump_line(entry: Entry) -> str:
    """One JSONL line as ``JSON.stringify`` writes it (compact, UTF-8), newline included."""
    line = json.dumps(entry, ensure_ascii=False, separators=(",", ":"), default=_json_fallback)
    try:
        line.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: escape it, as JSON.stringify does
        line = json.dumps(entry, ensure_ascii=True, separators=(",", ":"), default=_json_fallback)
    return line + "\n"


def dump_lines(entries: list[Entry]) -> bytes:
    return "".join(dump_line(e) for e in entries).encode("utf-8")


def read_header(path: Path, limit: int = 65536) -> Entry | None:
    """The header from the first line, or None when it is not a valid session header.

    pi reads only 512 bytes here; a header with a long cwd or ``parentSession`` can be longer.
    """
    try:
        with open_regular(path) as handle:  # never waits on a FIFO among the session files
            first = handle.readline(limit)
    except OSError:
        return None
    try:
        obj = json.loads(first.decode("utf-8", errors="replace").removeprefix(_BOM))
    except (ValueError, RecursionError):
        return None
    return obj if is_valid_header(obj) else None
