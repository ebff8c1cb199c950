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
    # subscripts in one ``try`` rather than ``.get``: a missing key is a KeyError (not the fast
    # path), and a subscript costs less than a method call, 100,000 times per load
    if type(blocks) is not list:
        return False
    for block in blocks:
        if type(block) is not dict:
            return False
        try:
            kind = block["type"]
            if type(kind) is not str:
                return False
            block["type"] = kind = _share(kind)
            if kind == "text":
                if type(block["text"]) is not str or ("textSignature" in block and type(block["textSignature"]) is not str):
                    return False
            elif kind == "toolCall":
                name = block["name"]
                if type(block["id"]) is not str or type(name) is not str or type(block["arguments"]) is not dict:
                    return False
                if len(name) <= _SHARED_MAX:
                    block["name"] = _share(name)
                if "thoughtSignature" in block and type(block["thoughtSignature"]) is not str:
                    return False
            elif kind == "thinking":
                if (type(block["thinking"]) is not str
                        or ("thinkingSignature" in block and type(block["thinkingSignature"]) is not str)
                        or ("redacted" in block and type(block["redacted"]) is not bool)):
                    return False
            elif kind == "image":
                if type(block["data"]) is not str or type(block["mimeType"]) is not str:
                    return False
            else:
                return False
        except KeyError:
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
        if key == "cost" and kind is not dict:  # a number there is no cost object: the full check repairs it
            return False
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
        return _message_ok(message)
    except (KeyError, TypeError):
        return False


def _message_ok(message: dict[str, Any]) -> bool:
    """``message_ok`` for a dict; a missing key raises KeyError (the most common roles first)."""
    stamp = message["timestamp"]
    if type(stamp) not in _NUMBER or not MIN_MS <= stamp <= MAX_MS:
        return False
    role = message["role"]
    if type(role) is not str:
        return False
    message["role"] = role = _share(role)
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
    if role == "user":
        content = message["content"]
        return type(content) is str or _blocks_ok(content, USER_BLOCKS)
    return False  # the rarer roles always take the full check


def entry_ok(entry: Entry) -> bool:
    """True for the common entry, a well-formed message entry: ``check_entry`` would return it
    unchanged and report nothing (its type shared, as the words of its message)."""
    try:
        kind = entry["type"]
        if type(kind) is not str:
            return False
        entry["type"] = kind = _share(kind)
        if kind != "message":
            return False
        parent = entry["parentId"]  # missing: not the fast path
        message = entry["message"]
        if (type(entry["id"]) is not str or type(entry["timestamp"]) is not str
                or not (parent is None or type(parent) is str) or type(message) is not dict):
            return False
        return _message_ok(message)
    except (KeyError, TypeError):
        return False


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
