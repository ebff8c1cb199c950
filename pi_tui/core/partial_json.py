"""Tool-call arguments as they stream: a JSON text growing by fragments (pi-behaviour.md §14.14).

``PartialJson`` keeps the bracket/string state of the text incrementally, so the providers can
show a best-effort parse of the arguments while they stream, and anyone can ask whether the text
is *complete* — a whole JSON object, not a prefix cut short. The agent loop asks that before it
runs a tool call: arguments that did not finish streaming are never run, whatever the provider
said about the stream.
"""

from __future__ import annotations

import json
import re
from typing import Any

_BAD_ESCAPE = re.compile(r'\\(?!["\\/bfnrtu])')


def _scan_strings(text: str) -> tuple[list[bool], bool]:
    """For each character, whether it lies inside a JSON string (delimiting quotes excluded);
    and whether the text ends inside an open string."""
    inside: list[bool] = []
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
                inside.append(False)
                continue
        elif ch == '"':
            in_string = True
            inside.append(False)
            continue
        inside.append(in_string)
    return inside, in_string


def _escape_controls_in_strings(text: str) -> str:
    inside, _ = _scan_strings(text)
    return "".join(f"\\u{ord(ch):04x}" if flag and ord(ch) < 0x20 else ch for ch, flag in zip(text, inside, strict=True))


_OPEN_ESCAPE = re.compile(r'(?<!\\)((?:\\\\)*)\\(?:u[0-9a-fA-F]{0,3})?$')
_OPEN_LITERAL = re.compile(r'(?<=[\[:,\s])(t|tr|tru|f|fa|fal|fals|n|nu|nul)$')
_LITERALS = {"t": "true", "f": "false", "n": "null"}
_OPEN_EXPONENT = re.compile(r'(?<=[0-9])[eE][+-]?$')


def _completed_tail(text: str, *, in_string: bool) -> str:
    """The prefix with its last token finished as pi's ``parseStreamingJson`` finishes it: an
    open string loses a half-written escape (else its trailing blanks) and gets its quote; a
    half-written ``true``/``false``/``null`` is completed; a number's open exponent is dropped.
    (A prefix cut inside ``\\"`` or ``tr`` parsed as nothing, so the arguments shown blinked
    back to ``{}``.)"""
    head, tail = text[:-64], text[-64:]  # only the end matters: a 500 KB write stays cheap
    if in_string:
        escape = _OPEN_ESCAPE.search(tail)
        if escape is not None:  # the blanks before a half-written escape stay, as pi's
            return head + tail[: escape.start()] + escape.group(1) + '"'
        return text.rstrip(" \t") + '"'
    literal = _OPEN_LITERAL.search(tail)
    if literal is not None:
        return text + _LITERALS[literal.group(1)[0]][len(literal.group(1)):]
    return head + _OPEN_EXPONENT.sub("", tail)


class PartialJson:
    """A JSON prefix growing by fragments, with its bracket/string state kept incrementally so a
    long streamed argument (a whole file for ``write``) is scanned once, not once per delta."""

    _DANGLING = re.compile(r'(,\s*"[^"]*"\s*:?\s*|,\s*|:\s*|"[^"]*"\s*:\s*|(?<=\{)\s*"[^"]*"\s*)$')
    _TAIL = 512
    _ALWAYS_REPARSE_BELOW = 8192
    _REPARSE_GROWTH = 8
    """Past 8 KB, re-parse only after the text grew by 1/8: parsing every delta of a 500 KB
    ``write`` argument would be quadratic (minutes); this keeps it near-linear. The final
    arguments are always parsed from the whole text."""

    def __init__(self) -> None:
        self._parts: list[str] = []
        self._size = 0
        self._closers: list[str] = []
        self._in_string = self._escaped = False
        self._parsed_length = -1
        self._parsed: Any = None

    def append(self, fragment: str) -> PartialJson:
        for ch in fragment:
            if self._in_string:
                if self._escaped:
                    self._escaped = False
                elif ch == "\\":
                    self._escaped = True
                elif ch == '"':
                    self._in_string = False
            elif ch == '"':
                self._in_string = True
            elif ch in "{[":
                self._closers.append("}" if ch == "{" else "]")
            elif ch in "}]" and self._closers:
                self._closers.pop()
        self._parts.append(fragment)
        self._size += len(fragment)
        return self

    @property
    def text(self) -> str:
        if len(self._parts) > 1:
            self._parts = ["".join(self._parts)]
        return self._parts[0] if self._parts else ""

    @property
    def is_complete(self) -> bool:
        """Whether the text is a whole JSON value: no bracket or string left open, and something
        (or nothing at all: a call without arguments) that ends where a value ends. A text cut
        inside a number or literal of an object is still inside the object, so it is open."""
        if self._closers or self._in_string:
            return False
        tail = self.text.rstrip()
        return not tail or tail[-1] in "}]"

    def value(self) -> Any:
        """The parsed prefix (closing what is open, dropping a dangling key); None if hopeless."""
        size = self._size
        if size >= self._ALWAYS_REPARSE_BELOW and size - self._parsed_length < size // self._REPARSE_GROWTH:
            return self._parsed
        self._parsed_length = size
        self._parsed = self._parse()
        return self._parsed

    def _parse(self) -> Any:
        if not self._closers and not self._in_string:  # possibly complete already
            try:
                return json.loads(self.text)
            except ValueError:
                pass
        candidate = _completed_tail(self.text, in_string=self._in_string)
        closers = "".join(reversed(self._closers))
        for _ in range(3):
            try:
                return json.loads(candidate + closers)
            except ValueError:
                head, tail = candidate[: -self._TAIL], candidate[-self._TAIL :]
                trimmed = self._DANGLING.sub("", tail.rstrip())
                if trimmed == tail:
                    break
                candidate = head + trimmed
        return None


def parse_partial_json(text: str) -> Any:
    """Best-effort parse of a JSON prefix (streaming tool arguments); None when hopeless."""
    return PartialJson().append(text).value()


def parse_json_with_repair(text: str) -> Any:
    """JSON as pi's ``parseJsonWithRepair`` reads it: as is, else with raw control characters
    inside strings escaped and invalid backslashes doubled; ``ValueError`` when still invalid."""
    try:
        return json.loads(text)
    except ValueError:
        return json.loads(_BAD_ESCAPE.sub(r"\\\\", _escape_controls_in_strings(text)))


def parse_tool_arguments(text: str) -> dict[str, Any]:
    """The final tool-call arguments as pi reads them: as JSON, else repaired (raw control
    characters escaped, invalid backslashes doubled), else a partial parse, else ``{}``."""
    if not text.strip():
        return {}
    try:
        value = json.loads(text)
    except ValueError:
        repaired = _BAD_ESCAPE.sub(r"\\\\", _escape_controls_in_strings(text))
        try:
            value = json.loads(repaired)
        except ValueError:
            value = parse_partial_json(repaired)
    return value if isinstance(value, dict) else {}
