"""Checking the messages of a session file against pi's shapes (pi-behaviour.md §7.1, §1.5).

A session file is input like any other: a line can be valid JSON and still hold a number where
text belongs, ``content`` as a string, an image without data or ``NaN`` token counts. Everything
downstream (projection, token estimates, providers, the TUI, export, RPC) reads messages as the
TypedDicts of ``core/messages.py`` say, so they are checked once, here, as they are loaded.

Each check returns the message itself when it is well formed (the common case costs a few type
tests and no copy), a repaired copy when a field could be fixed without guessing (the file is
never touched: only the in-memory projection changes), or raises ``Unusable`` when the message
cannot be used at all. Every repair is reported through ``note`` as ``"<field> <problem>;
<what was done>"``; the caller adds the file, line and entry.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

Note = Callable[[str], None]
"""Receives one problem, e.g. ``"message.usage.input is NaN; read as 0"``."""

MAX_COUNT = 2**53
"""Larger counts were not written by pi (JavaScript numbers are exact only up to 2**53)."""

MIN_MS = -62_135_596_800_000
MAX_MS = 253_402_300_799_999
"""Epoch milliseconds that are a date Python can represent (years 1 to 9999)."""

USAGE_COUNTS = ("input", "output", "cacheRead", "cacheWrite", "totalTokens")
COST_FIELDS = ("input", "output", "cacheRead", "cacheWrite", "total")
STOP_REASONS = frozenset({"stop", "length", "toolUse", "error", "aborted"})
KNOWN_ROLES = frozenset(
    {"user", "assistant", "toolResult", "bashExecution", "custom", "branchSummary", "compactionSummary"}
)
USER_BLOCKS = frozenset({"text", "image"})
ASSISTANT_BLOCKS = frozenset({"text", "thinking", "toolCall"})


class Unusable(Exception):
    """The value cannot be used at all; the message is the problem, naming the field."""


def describe(value: Any) -> str:
    """What a JSON value is, for a diagnostic: ``a number``, ``text``, ``NaN``…"""
    if value is None:
        return "null"
    kind = type(value)
    if kind is bool:
        return "a boolean"
    if kind is float and not math.isfinite(value):
        return "NaN" if value != value else "Infinity"
    if kind is int or kind is float:
        return "a number" if abs(value) <= MAX_COUNT else "a number out of range"
    if kind is str:
        return "text"
    if kind is list:
        return "a list"
    if kind is dict:
        return "an object"
    return kind.__name__


def is_count(value: Any) -> bool:
    """A token count: a finite, non-negative number pi could have written."""
    kind = type(value)
    return (kind is int or kind is float) and bool(0 <= value <= MAX_COUNT)  # NaN fails


def is_finite(value: Any) -> bool:
    kind = type(value)
    return (kind is int or kind is float) and bool(-MAX_COUNT <= value <= MAX_COUNT)


def is_epoch_ms(value: Any) -> bool:
    kind = type(value)
    return (kind is int or kind is float) and MIN_MS <= value <= MAX_MS


class Fix:
    """A dict that is copied only when the first repair is made (the original stays as read)."""

    __slots__ = ("copy", "original")

    def __init__(self, original: dict[str, Any]) -> None:
        self.original = original
        self.copy: dict[str, Any] | None = None

    def set(self, key: str, value: Any) -> None:
        if self.copy is None:
            self.copy = dict(self.original)
        self.copy[key] = value

    def drop(self, key: str) -> None:
        if self.copy is None:
            self.copy = dict(self.original)
        self.copy.pop(key, None)

    def result(self) -> dict[str, Any]:
        return self.original if self.copy is None else self.copy


def _missing_or(obj: dict[str, Any], key: str) -> str:
    return "is missing" if key not in obj else f"is {describe(obj[key])}"


# --------------------------------------------------------------------------- content blocks


def _check_block(block: Any, allowed: frozenset[str], field: str, note: Note) -> Any:
    """The block (possibly repaired), or None to leave it out."""
    if type(block) is not dict:
        note(f"{field} is {describe(block)}, expected a content block; block left out")
        return None
    kind = block.get("type")
    if type(kind) is not str or kind not in allowed:
        shown = repr(kind) if type(kind) is str else describe(kind)
        note(f"{field} has type {shown}, expected one of {', '.join(sorted(allowed))}; block left out")
        return None
    fix = Fix(block)
    if kind == "text":
        if type(block.get("text")) is not str:
            note(f"{field}.text {_missing_or(block, 'text')}, expected text; block left out")
            return None
        _optional_text(block, "textSignature", field, fix, note)
    elif kind == "thinking":
        if type(block.get("thinking")) is not str:
            note(f"{field}.thinking {_missing_or(block, 'thinking')}, expected text; block left out")
            return None
        _optional_text(block, "thinkingSignature", field, fix, note)
        if "redacted" in block and type(block["redacted"]) is not bool:
            note(f"{field}.redacted is {describe(block['redacted'])}, expected true/false; ignored")
            fix.drop("redacted")
    elif kind == "image":
        for key in ("data", "mimeType"):
            if type(block.get(key)) is not str:
                note(f"{field}.{key} {_missing_or(block, key)}, expected text; image left out")
                return None
    else:  # toolCall
        for key in ("id", "name"):
            if type(block.get(key)) is not str:
                note(f"{field}.{key} {_missing_or(block, key)}, expected text; tool call left out")
                return None
        if type(block.get("arguments")) is not dict:
            note(f"{field}.arguments {_missing_or(block, 'arguments')}, expected an object; read as {{}}")
            fix.set("arguments", {})
        _optional_text(block, "thoughtSignature", field, fix, note)
    return fix.result()


def _optional_text(block: dict[str, Any], key: str, field: str, fix: Fix, note: Note) -> None:
    if key in block and type(block[key]) is not str:
        note(f"{field}.{key} is {describe(block[key])}, expected text; ignored")
        fix.drop(key)


def check_blocks(blocks: list[Any], allowed: frozenset[str], field: str, note: Note) -> list[Any]:
    """``blocks`` itself when every block is fine, else a list with bad blocks left out or fixed."""
    checked: list[Any] | None = None
    for index, block in enumerate(blocks):
        good = _check_block(block, allowed, f"{field}[{index}]", note)
        if good is block and good is not None and checked is None:  # (a null block: good is None too)
            continue
        if checked is None:
            checked = blocks[:index]
        if good is not None:
            checked.append(good)
    return blocks if checked is None else checked


def check_content(container: dict[str, Any], fix: Fix, field: str, note: Note, *, text_allowed: bool,
                  allowed: frozenset[str]) -> None:
    """``content``: a list of blocks, or (where pi allows it) a string. A string where only a list
    is allowed becomes one text block; any other type makes the message unusable."""
    content = container.get("content")
    if type(content) is list:
        checked = check_blocks(content, allowed, field, note)
        if checked is not content:
            fix.set("content", checked)
    elif type(content) is str:
        if not text_allowed:
            note(f"{field} is text, expected a list of blocks; read as one text block")
            fix.set("content", [{"type": "text", "text": content}])
    else:
        what = "text or a list of blocks" if text_allowed else "a list of blocks"
        raise Unusable(f"{field} {_missing_or(container, 'content')}, expected {what}")


# --------------------------------------------------------------------------- fields


def _text_field(msg: dict[str, Any], key: str, fix: Fix, field: str, note: Note, *, default: str | None = "") -> None:
    """A text field: repaired to ``default`` (or left out when ``default`` is None)."""
    if type(msg.get(key)) is str:
        return
    if key not in msg and default is None:
        return
    action = f"read as {default!r}" if default is not None else "ignored"
    note(f"{field}.{key} {_missing_or(msg, key)}, expected text; {action}")
    if default is None:
        fix.drop(key)
    else:
        fix.set(key, default)


def _bool_field(msg: dict[str, Any], key: str, fix: Fix, field: str, note: Note, *, default: bool | None) -> None:
    if key not in msg:
        if default is not None:
            note(f"{field}.{key} is missing, expected true/false; read as {str(default).lower()}")
            fix.set(key, default)
        return
    if type(msg[key]) is bool:
        return
    if default is None:
        note(f"{field}.{key} is {describe(msg[key])}, expected true/false; ignored")
        fix.drop(key)
    else:
        note(f"{field}.{key} is {describe(msg[key])}, expected true/false; read as {str(default).lower()}")
        fix.set(key, default)


def _timestamp(msg: dict[str, Any], fix: Fix, field: str, note: Note) -> None:
    if is_epoch_ms(msg.get("timestamp")):
        return
    note(f"{field}.timestamp {_missing_or(msg, 'timestamp')}, expected epoch milliseconds; read as 0")
    fix.set("timestamp", 0)


def _usage(msg: dict[str, Any], fix: Fix, field: str, note: Note) -> None:
    usage = msg.get("usage")
    if type(usage) is not dict:
        note(f"{field}.usage {_missing_or(msg, 'usage')}, expected an object; read as zero usage")
        fix.set("usage", dict.fromkeys(USAGE_COUNTS, 0) | {"cost": dict.fromkeys(COST_FIELDS, 0)})
        return
    repaired = Fix(usage)
    for key in USAGE_COUNTS:
        if key in usage and not is_count(usage[key]):
            note(f"{field}.usage.{key} is {describe(usage[key])}, expected a token count; read as 0")
            repaired.set(key, 0)
    cost = usage.get("cost")
    if "cost" in usage:
        if type(cost) is not dict:
            note(f"{field}.usage.cost is {describe(cost)}, expected an object; read as zero cost")
            repaired.set("cost", dict.fromkeys(COST_FIELDS, 0))
        else:
            cost_fix = Fix(cost)
            for key in COST_FIELDS:
                if key in cost and not is_finite(cost[key]):
                    note(f"{field}.usage.cost.{key} is {describe(cost[key])}, expected a number; read as 0")
                    cost_fix.set(key, 0)
            if cost_fix.copy is not None:
                repaired.set("cost", cost_fix.copy)
    if repaired.copy is not None:
        fix.set("usage", repaired.copy)


# --------------------------------------------------------------------------- roles


def _user(msg: dict[str, Any], fix: Fix, field: str, note: Note) -> None:
    check_content(msg, fix, f"{field}.content", note, text_allowed=True, allowed=USER_BLOCKS)


def _assistant(msg: dict[str, Any], fix: Fix, field: str, note: Note) -> None:
    check_content(msg, fix, f"{field}.content", note, text_allowed=False, allowed=ASSISTANT_BLOCKS)
    for key in ("api", "provider", "model"):
        _text_field(msg, key, fix, field, note)
    _usage(msg, fix, field, note)
    reason = msg.get("stopReason")
    if type(reason) is not str or reason not in STOP_REASONS:
        shown = repr(reason) if type(reason) is str else _missing_or(msg, "stopReason")[3:]
        note(f"{field}.stopReason is {shown}, expected one of {', '.join(sorted(STOP_REASONS))}; read as 'stop'")
        fix.set("stopReason", "stop")
    for key in ("errorMessage", "errorKind", "responseId", "responseModel"):
        _text_field(msg, key, fix, field, note, default=None)
    if "retryAfterMs" in msg and not is_count(msg["retryAfterMs"]):
        note(f"{field}.retryAfterMs is {describe(msg['retryAfterMs'])}, expected milliseconds; ignored")
        fix.drop("retryAfterMs")
    if "diagnostics" in msg and type(msg["diagnostics"]) is not list:
        note(f"{field}.diagnostics is {describe(msg['diagnostics'])}, expected a list; ignored")
        fix.drop("diagnostics")


def _tool_result(msg: dict[str, Any], fix: Fix, field: str, note: Note) -> None:
    for key in ("toolCallId", "toolName"):
        if type(msg.get(key)) is not str:
            raise Unusable(f"{field}.{key} {_missing_or(msg, key)}, expected text")
    check_content(msg, fix, f"{field}.content", note, text_allowed=False, allowed=USER_BLOCKS)
    _bool_field(msg, "isError", fix, field, note, default=False)


def _bash_execution(msg: dict[str, Any], fix: Fix, field: str, note: Note) -> None:
    if type(msg.get("command")) is not str:
        raise Unusable(f"{field}.command {_missing_or(msg, 'command')}, expected text")
    _text_field(msg, "output", fix, field, note)
    code = msg.get("exitCode")
    if code is not None and not (type(code) is int and -MAX_COUNT <= code <= MAX_COUNT):
        note(f"{field}.exitCode is {describe(code)}, expected a whole number or null; read as null")
        fix.set("exitCode", None)
    _bool_field(msg, "cancelled", fix, field, note, default=None)
    _bool_field(msg, "truncated", fix, field, note, default=None)
    _bool_field(msg, "excludeFromContext", fix, field, note, default=None)
    _text_field(msg, "fullOutputPath", fix, field, note, default=None)


def _custom(msg: dict[str, Any], fix: Fix, field: str, note: Note) -> None:
    _text_field(msg, "customType", fix, field, note)
    check_content(msg, fix, f"{field}.content", note, text_allowed=True, allowed=USER_BLOCKS)
    if "display" in msg and type(msg["display"]) is not bool:
        note(f"{field}.display is {describe(msg['display'])}, expected true/false; read as true")
        fix.set("display", True)


def _summary(msg: dict[str, Any], fix: Fix, field: str, note: Note) -> None:
    if type(msg.get("summary")) is not str:
        raise Unusable(f"{field}.summary {_missing_or(msg, 'summary')}, expected text")
    if msg.get("role") == "branchSummary":
        _text_field(msg, "fromId", fix, field, note)
    elif "tokensBefore" in msg and not is_count(msg["tokensBefore"]):
        note(f"{field}.tokensBefore is {describe(msg['tokensBefore'])}, expected a token count; read as 0")
        fix.set("tokensBefore", 0)


_ROLE_CHECKS: dict[str, Callable[[dict[str, Any], Fix, str, Note], None]] = {
    "user": _user,
    "assistant": _assistant,
    "toolResult": _tool_result,
    "bashExecution": _bash_execution,
    "custom": _custom,
    "branchSummary": _summary,
    "compactionSummary": _summary,
}


def check_message(message: Any, note: Note, field: str = "message") -> dict[str, Any]:
    """``message`` if well formed, else a repaired copy; raises ``Unusable`` if it can't be used."""
    if type(message) is not dict:
        raise Unusable(f"{field} is {describe(message)}, expected an object")
    role = message.get("role")
    if type(role) is not str:
        raise Unusable(f"{field}.role {_missing_or(message, 'role')}, expected text")
    check = _ROLE_CHECKS.get(role)
    if check is None:
        raise Unusable(f"{field}.role {role!r} is not a role pi-tui knows")
    fix = Fix(message)
    check(message, fix, field, note)
    _timestamp(message, fix, field, note)
    return fix.result()


def user_content(value: Any, note: Note, field: str) -> Any:
    """A ``custom_message`` entry's content: text or text/image blocks (raises ``Unusable``)."""
    if type(value) is str:
        return value
    if type(value) is list:
        return check_blocks(value, USER_BLOCKS, field, note)
    raise Unusable(f"{field} is {describe(value)}, expected text or a list of blocks")
