"""Text from outside made safe for a terminal: the one sanitizer every terminal path uses.

Model answers, tool output, file and session names, error bodies from a proxy and extension
strings are untrusted. Written raw to a terminal, escape sequences in them act: an OSC 52
sequence writes the clipboard, OSC 0/2 retitles the window, CSI 2J clears the screen, cursor
moves overwrite what was shown, and a device-status query (CSI 6n) makes the terminal *type* an
answer into pi-tui's input. So:

* ``printable(text)`` drops whole escape sequences (CSI, OSC, DCS/SOS/PM/APC strings, 7-bit and
  8-bit forms) and every other control character except tab and newline; CRLF becomes LF and a
  lone CR (which would overwrite the line) is dropped. Used for text written to stdout/stderr.
* ``drop_controls(text)`` drops only the control *characters* (C0 but tab/newline, DEL, C1):
  without ESC and CSI no sequence can start, and the text keeps its width (the TUI's line filter
  uses it on rendered segments, where cell widths are already laid out).
* ``json_line(value)`` is JSON with U+007F-U+009F and U+2028/U+2029 escaped as well (the stdlib
  escapes only C0): JSON/RPC output stays lossless yet never carries a raw control character.

A lone surrogate (U+D800-U+DFFF: a ``"\\ud800"`` escape in a provider's JSON, a file name that is
not UTF-8) is not Unicode: written raw, the UTF-8 encoding of stdout (or of the TUI's terminal)
raises. ``printable`` and ``drop_controls`` turn each into U+FFFD (same width); ``json_line``
escapes it (``\\ud800``), as ``JSON.stringify`` does.

Our own colours (SGR) are added by our renderers after this, never taken from outside text.
"""

from __future__ import annotations

import json
import re
from typing import Any

_SEQUENCE = re.compile(
    r"""
      \x1b\[ [0-?]* [\x20-/]* [@-~]                # CSI ... final byte (cursor, clear, SGR, queries)
    | \x1b\] [^\x07\x1b\x9c]* (?:\x07|\x1b\\|\x9c)  # OSC ... BEL or ST (title, clipboard, hyperlink)
    | \x1b[PX^_] [^\x1b\x9c]* (?:\x1b\\|\x9c)      # DCS / SOS / PM / APC ... ST
    | \x1b [\x20-/]* [0-~]                         # any other escape (charset, keypad, reset)
    | \x9b [0-?]* [\x20-/]* [@-~]                  # 8-bit CSI
    | \x9d [^\x07\x1b\x9c]* (?:\x07|\x9c)          # 8-bit OSC
    | [\x90\x98\x9e\x9f] [^\x1b\x9c]* \x9c         # 8-bit DCS / SOS / PM / APC
    """,
    re.VERBOSE,
)
_CONTROL_CHARS = "".join(chr(c) for c in [*range(0x00, 0x09), *range(0x0B, 0x20), *range(0x7F, 0xA0)])
_CONTROL = re.compile(f"[{re.escape(_CONTROL_CHARS)}]")
_SURROGATE = re.compile("[\ud800-\udfff]")
_UNSAFE = re.compile(f"[{re.escape(_CONTROL_CHARS)}\ud800-\udfff]")
_DROP_CONTROLS = str.maketrans(dict.fromkeys(_CONTROL_CHARS))
_JSON_UNSAFE = re.compile("[\x7f-\x9f\u2028\u2029\ud800-\udfff]")


def has_controls(text: str) -> bool:
    """Whether ``text`` holds any character ``printable`` would change: a control character (tab
    and newline excepted) or a lone surrogate."""
    return _UNSAFE.search(text) is not None


def printable(text: str) -> str:
    """``text`` without escape sequences and control characters (tab and newline stay), lone
    surrogates shown as U+FFFD."""
    if not has_controls(text):
        return text
    text = _SEQUENCE.sub("", text).replace("\r\n", "\n")
    return _SURROGATE.sub("\ufffd", _CONTROL.sub("", text))


def drop_controls(text: str) -> str:
    """``text`` without control characters, sequences' printable tails left as they are; lone
    surrogates shown as U+FFFD."""
    if not has_controls(text):
        return text
    return _SURROGATE.sub("\ufffd", text.translate(_DROP_CONTROLS))


def json_line(value: Any, *, indent: int | None = None) -> str:
    """Compact JSON (UTF-8 kept) in which no raw control character remains; ``indent`` pretty
    prints it instead (the inspectors' ``--json``)."""
    separators = (",", ":") if indent is None else (",", ": ")
    text = json.dumps(value, ensure_ascii=False, separators=separators, indent=indent, default=str)
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


class PrintableStream:
    """A text stream wrapper that writes ``printable(text)``: installed as ``sys.stderr`` by the
    CLI, so every message to the terminal — ours, an extension's, a warning — is sanitized in
    one place. Anything else (``fileno``, ``isatty``, ``buffer`` …) is the wrapped stream's."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(printable(text) if isinstance(text, str) else text)
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)
