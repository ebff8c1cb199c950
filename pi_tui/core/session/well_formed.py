"""The fast path of ``message_checks``: is a message well formed, answered without building anything.

Loading a 100,000-entry session must stay about a second (bench/RESULTS.md), so well-formed
messages are recognised by the predicates below, which test exactly what the checks in
``message_checks`` test but build no strings and no copies. Anything they reject goes through
those checks, which find and report the problem. (tests/reliability/test_session_wrong_types.py
holds them to agreeing: a message these accept must pass the checks untouched.)

As they read the words every entry repeats (the entry type, role, api, provider, model, stop
reason, tool names, block types) they replace each by one shared string: the parser gives every
entry its own copies, 28 MB of a 100,000-entry session. Equal values, so nothing can tell; doing
it in the one pass that reads them anyway saves a second walk over every entry (~0.2 s of that
session's load). ``Admission`` runs them a block at a time while the file is parsed, so the
copies are freed before the next block is read.
"""

from __future__ import annotations

import sys
from typing import Any

from pi_tui.core.session.entries import Entry
from pi_tui.core.session.message_checks import (
    ASSISTANT_BLOCKS,
    MAX_COUNT,
    MAX_MS,
    MIN_MS,
    STOP_REASONS,
    USER_BLOCKS,
    is_count,
)

_share = sys.intern
_SHARED_MAX = 64
"""Longer api, provider, model and tool names are left alone (no one repeats a long name much, and
a damaged file's megabyte-long "name" is not worth hashing)."""


def _blocks_ok(blocks: Any, allowed: frozenset[str]) -> bool:
    if type(blocks) is not list:
        return False
    for block in blocks:
        if type(block) is not dict:
            return False
        kind = block.get("type")
        if type(kind) is str:
            block["type"] = kind = _share(kind)
        if kind == "text":
            if type(block.get("text")) is not str:
                return False
            if "textSignature" in block and type(block["textSignature"]) is not str:
                return False
        elif kind == "toolCall":
            name = block.get("name")
            if type(block.get("id")) is not str or type(name) is not str or type(block.get("arguments")) is not dict:
                return False
            if len(name) <= _SHARED_MAX:
                block["name"] = _share(name)
            if "thoughtSignature" in block and type(block["thoughtSignature"]) is not str:
                return False
        elif kind == "thinking":
            if type(block.get("thinking")) is not str:
                return False
            if "thinkingSignature" in block and type(block["thinkingSignature"]) is not str:
                return False
            if "redacted" in block and type(block["redacted"]) is not bool:
                return False
        elif kind == "image":
            if type(block.get("data")) is not str or type(block.get("mimeType")) is not str:
                return False
        else:
            return False
        if kind not in allowed:
            return False
    return True


_NUMBER = frozenset({int, float})
_MAX = MAX_COUNT
_MAX_FLOAT = float(MAX_COUNT)  # exact: 2**53 is a float


def _usage_ok(usage: Any) -> bool:
    """Stricter than ``_usage`` on unknown keys (any other value sends it to the full check,
    which leaves unknown keys alone): the usual usage is five counts and a cost object."""
    if type(usage) is not dict:
        return False
    if len(usage) == 6:
        try:  # the usual shape, tested without a loop (most of a large session is this)
            a, b, c, d, e = usage["input"], usage["output"], usage["cacheRead"], usage["cacheWrite"], usage["totalTokens"]
            cost = usage["cost"]
        except KeyError:
            pass
        else:
            # whole non-negative counts below 2**53: their bitwise OR is too (and is negative if any is)
            if (type(a) is int and type(b) is int and type(c) is int and type(d) is int and type(e) is int
                    and 0 <= (a | b | c | d | e) <= _MAX and type(cost) is dict and len(cost) == 5):
                try:
                    a, b, c, d, e = cost["input"], cost["output"], cost["cacheRead"], cost["cacheWrite"], cost["total"]
                except KeyError:
                    return False
                number = _NUMBER
                low, high = -_MAX_FLOAT, _MAX_FLOAT  # a float compared with a float: no big-int path
                return bool(type(a) in number and type(b) in number and type(c) in number and type(d) in number
                            and type(e) in number and low <= a <= high and low <= b <= high
                            and low <= c <= high and low <= d <= high and low <= e <= high)
    for key, value in usage.items():
        kind = type(value)
        if kind is int or kind is float:
            if not 0 <= value <= MAX_COUNT:  # NaN fails too
                return False
        elif kind is dict and key == "cost":
            for amount in value.values():
                kind = type(amount)
                if (kind is not int and kind is not float) or not -MAX_COUNT <= amount <= MAX_COUNT:
                    return False
        else:
            return False
    return True


def _optional_texts_ok(message: dict[str, Any], keys: tuple[str, ...]) -> bool:
    return all(type(message[key]) is str for key in keys if key in message)


_ASSISTANT_OPTIONAL_TEXTS = ("errorMessage", "errorKind", "responseId", "responseModel")
_ASSISTANT_REQUIRED = 8
"""role, content, api, provider, model, usage, stopReason, timestamp: all read before the length
is compared, so a message of exactly that length has no optional field to check."""


def _assistant_optional_ok(message: dict[str, Any]) -> bool:
    return (
        _optional_texts_ok(message, _ASSISTANT_OPTIONAL_TEXTS)
        and ("retryAfterMs" not in message or is_count(message["retryAfterMs"]))
        and ("diagnostics" not in message or type(message["diagnostics"]) is list)
    )


def message_ok(message: Any) -> bool:
    """True when ``check_message`` would return ``message`` unchanged and report nothing (its
    repeated words shared on the way, see the module's docstring)."""
    if type(message) is not dict:
        return False
    try:
        stamp = message["timestamp"]
        if type(stamp) not in _NUMBER or not MIN_MS <= stamp <= MAX_MS:
            return False
        role = message["role"]
        if type(role) is str:
            message["role"] = role = _share(role)
        if role == "assistant":
            api, provider, model, reason = message["api"], message["provider"], message["model"], message["stopReason"]
            if not (type(api) is str and type(provider) is str and type(model) is str and type(reason) is str
                    and reason in STOP_REASONS):
                return False
            message["stopReason"] = _share(reason)
            if len(api) <= _SHARED_MAX:
                message["api"] = _share(api)
            if len(provider) <= _SHARED_MAX:
                message["provider"] = _share(provider)
            if len(model) <= _SHARED_MAX:
                message["model"] = _share(model)
            return (
                _blocks_ok(message["content"], ASSISTANT_BLOCKS)
                and _usage_ok(message["usage"])
                and (len(message) == _ASSISTANT_REQUIRED or _assistant_optional_ok(message))
            )
        if role == "toolResult":
            name = message["toolName"]
            if type(name) is not str:
                return False
            if len(name) <= _SHARED_MAX:
                message["toolName"] = _share(name)
            return (
                type(message["toolCallId"]) is str
                and type(message["isError"]) is bool
                and _blocks_ok(message["content"], USER_BLOCKS)
            )
        if role == "user":
            content = message["content"]
            return type(content) is str or _blocks_ok(content, USER_BLOCKS)
    except (KeyError, TypeError):
        return False
    return False  # the rarer roles always take the full check


def entry_ok(entry: Entry) -> bool:
    """True for the common entry, a well-formed message entry: ``check_entry`` would return it
    unchanged and report nothing (its type shared, as the words of its message)."""
    kind = entry.get("type")
    if type(kind) is str:
        entry["type"] = kind = _share(kind)
    parent = entry.get("parentId", 0)  # missing: not the fast path
    return (
        kind == "message"
        and type(entry.get("id")) is str
        and type(entry.get("timestamp")) is str
        and (parent is None or type(parent) is str)
        and message_ok(entry.get("message"))
    )


class Admission:
    """``entry_ok`` for each entry of a file as it is parsed, a block at a time (the callback of
    ``jsonl.read_session_file``): ``well_formed[i]`` is 1 where entry ``i`` (the header is 0) passed."""

    __slots__ = ("well_formed",)

    def __init__(self) -> None:
        self.well_formed = bytearray()

    def __call__(self, entries: list[Entry], start: int) -> None:
        assert start == len(self.well_formed), "blocks are admitted in order, each once"
        flags, ok = self.well_formed, entry_ok
        for index in range(start, len(entries)):
            flags.append(ok(entries[index]))
