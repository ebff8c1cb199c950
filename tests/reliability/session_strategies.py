"""Hypothesis strategies for session files that are valid JSON but wrong in type and shape.

``sessions()`` draws a well-formed pi v3 session (every entry type, every message role, every
content block kind, branches); ``damaged_sessions()`` then replaces values deep inside some
entries with values of the wrong type or shape: numbers where text belongs, text where a list
belongs, ``NaN``/``Infinity``, numbers past 2**53 or past a float, lone surrogates, nested
garbage, missing keys. What comes out is written with ``json.dumps`` (``NaN`` and ``\\udXXX``
escapes included), i.e. exactly what a confused tool, a bad merge or a hand edit leaves behind.
"""

from __future__ import annotations

import copy
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from pi_tui.core.messages import THINKING_LEVELS

TEXT = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), max_size=12)
STAMP = "2026-01-01T00:00:00.000Z"
MS = st.integers(min_value=1_600_000_000_000, max_value=1_900_000_000_000)


def _usage() -> st.SearchStrategy[dict[str, Any]]:
    count = st.integers(min_value=0, max_value=200_000)
    cost = st.floats(min_value=0, max_value=5, allow_nan=False)
    return st.fixed_dictionaries({
        "input": count, "output": count, "cacheRead": count, "cacheWrite": count, "totalTokens": count,
        "cost": st.fixed_dictionaries({"input": cost, "output": cost, "cacheRead": cost, "cacheWrite": cost,
                                       "total": cost}),
    })


TEXT_BLOCK = st.fixed_dictionaries({"type": st.just("text"), "text": TEXT})
IMAGE_BLOCK = st.fixed_dictionaries({"type": st.just("image"), "data": st.just("iVBORw0KGgo="),
                                     "mimeType": st.just("image/png")})
THINKING_BLOCK = st.fixed_dictionaries({"type": st.just("thinking"), "thinking": TEXT},
                                       optional={"thinkingSignature": TEXT})
JSON_LEAF = st.one_of(st.none(), st.booleans(), st.integers(-1000, 1000), TEXT)
ARGUMENTS = st.dictionaries(TEXT, st.recursive(JSON_LEAF, lambda inner: st.lists(inner, max_size=3)
                                               | st.dictionaries(TEXT, inner, max_size=3), max_leaves=6), max_size=3)
TOOL_CALL = st.fixed_dictionaries({"type": st.just("toolCall"), "id": TEXT, "name": st.sampled_from(["bash", "read"]),
                                   "arguments": ARGUMENTS})
USER_CONTENT = st.one_of(TEXT, st.lists(st.one_of(TEXT_BLOCK, IMAGE_BLOCK), max_size=3))

MESSAGES: dict[str, st.SearchStrategy[dict[str, Any]]] = {
    "user": st.fixed_dictionaries({"role": st.just("user"), "content": USER_CONTENT, "timestamp": MS}),
    "assistant": st.fixed_dictionaries({
        "role": st.just("assistant"),
        "content": st.lists(st.one_of(TEXT_BLOCK, THINKING_BLOCK, TOOL_CALL), max_size=3),
        "api": st.just("openai-completions"), "provider": st.just("fake"), "model": st.just("m1"),
        "usage": _usage(), "stopReason": st.sampled_from(["stop", "length", "toolUse", "error", "aborted"]),
        "timestamp": MS,
    }, optional={"errorMessage": TEXT}),
    "toolResult": st.fixed_dictionaries({
        "role": st.just("toolResult"), "toolCallId": TEXT, "toolName": st.just("bash"),
        "content": st.lists(st.one_of(TEXT_BLOCK, IMAGE_BLOCK), max_size=2), "isError": st.booleans(),
        "timestamp": MS,
    }, optional={"details": ARGUMENTS}),
    "bashExecution": st.fixed_dictionaries({
        "role": st.just("bashExecution"), "command": TEXT, "output": TEXT,
        "exitCode": st.one_of(st.none(), st.integers(0, 255)), "cancelled": st.booleans(),
        "truncated": st.booleans(), "timestamp": MS,
    }, optional={"excludeFromContext": st.booleans(), "fullOutputPath": TEXT}),
    "custom": st.fixed_dictionaries({"role": st.just("custom"), "customType": TEXT, "content": USER_CONTENT,
                                     "display": st.booleans(), "timestamp": MS}),
}

PAYLOADS: dict[str, st.SearchStrategy[dict[str, Any]]] = {
    **{f"message/{role}": st.fixed_dictionaries({"type": st.just("message"), "message": message})
       for role, message in MESSAGES.items()},
    "thinking_level_change": st.fixed_dictionaries({"type": st.just("thinking_level_change"),
                                                    "thinkingLevel": st.sampled_from(THINKING_LEVELS)}),
    "model_change": st.fixed_dictionaries({"type": st.just("model_change"), "provider": TEXT, "modelId": TEXT}),
    "compaction": st.fixed_dictionaries({"type": st.just("compaction"), "summary": TEXT,
                                         "tokensBefore": st.integers(0, 10**6)},
                                        optional={"details": ARGUMENTS, "fromHook": st.booleans()}),
    "branch_summary": st.fixed_dictionaries({"type": st.just("branch_summary"), "summary": TEXT},
                                            optional={"fromHook": st.booleans()}),
    "custom": st.fixed_dictionaries({"type": st.just("custom"), "customType": TEXT}, optional={"data": ARGUMENTS}),
    "custom_message": st.fixed_dictionaries({"type": st.just("custom_message"), "customType": TEXT,
                                             "content": USER_CONTENT, "display": st.booleans()}),
    "label": st.fixed_dictionaries({"type": st.just("label"), "label": st.one_of(st.none(), TEXT)}),
    "session_info": st.fixed_dictionaries({"type": st.just("session_info"), "name": TEXT}),
}
KINDS = sorted(PAYLOADS)


@st.composite
def sessions(draw: st.DrawFn, min_entries: int = 3, max_entries: int = 14) -> list[dict[str, Any]]:
    """Header + a well-formed tree: mostly a chain, sometimes a branch off an earlier entry."""
    count = draw(st.integers(min_entries, max_entries))
    header = {"type": "session", "version": 3, "id": "fuzz-session", "timestamp": STAMP, "cwd": "/work"}
    entries: list[dict[str, Any]] = []
    for index in range(count):
        kind = draw(st.sampled_from(KINDS))
        payload = draw(PAYLOADS[kind])
        entry_id = f"e{index:07d}"
        parent = None
        if entries:
            branch = draw(st.integers(0, 4)) == 0
            parent = entries[draw(st.integers(0, len(entries) - 1))]["id"] if branch else entries[-1]["id"]
        entry = {"type": payload.pop("type"), "id": entry_id, "parentId": parent, "timestamp": STAMP, **payload}
        if entry["type"] == "compaction":
            entry["firstKeptEntryId"] = entries[draw(st.integers(0, len(entries) - 1))]["id"] if entries else entry_id
        elif entry["type"] == "branch_summary":
            entry["fromId"] = parent or "root"
        elif entry["type"] == "label":
            entry["targetId"] = entries[-1]["id"] if entries else entry_id
            if entry["label"] is None:
                del entry["label"]
        entries.append(entry)
    return [header, *entries]


# --------------------------------------------------------------------------- damage

NEST = st.integers(20, 300)


def _nested(depth: int) -> Any:
    value: Any = "bottom"
    for level in range(depth):
        value = [value] if level % 2 else {"k": value}
    return value


WRONG = st.one_of(
    st.none(), st.booleans(),
    st.integers(-(2**70), 2**70),
    st.sampled_from([10**30, -(10**30), 2**53 + 1, 10**400]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([float("nan"), float("inf"), float("-inf")]),
    TEXT,
    st.tuples(TEXT, st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF), TEXT).map("".join),  # lone
    st.lists(JSON_LEAF, max_size=3),
    st.dictionaries(TEXT, JSON_LEAF, max_size=3),
    NEST.map(_nested),
)
"""A JSON value of any type or shape (the mutation keeps it only when its type differs)."""

MISSING = object()


def paths_of(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path to a value inside ``value`` (dict keys and list indexes), containers included."""
    found: list[tuple[Any, ...]] = []
    stack = [(value, prefix)]
    while stack:
        node, path = stack.pop()
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for key, child in items:
            found.append((*path, key))
            stack.append((child, (*path, key)))
    return sorted(found, key=repr)


def _set(target: Any, path: tuple[Any, ...], value: Any) -> None:
    for key in path[:-1]:
        target = target[key]
    if value is MISSING:
        del target[path[-1]]
    else:
        target[path[-1]] = value


def _harmless(value: Any, current: Any) -> bool:
    """``value`` in place of ``current`` would be well formed: same JSON type, a number pi could
    write, text without a lone surrogate (those replacements are skipped as not damage)."""
    if isinstance(value, bool) or isinstance(current, bool):
        return type(value) is type(current)
    if isinstance(value, int | float) and isinstance(current, int | float):
        return abs(value) <= 2**53 and (type(value) is int or math.isfinite(value))
    if isinstance(value, str) and isinstance(current, str):
        return not any("\ud800" <= ch <= "\udfff" for ch in value)
    return type(value) is type(current)


@dataclass
class DamagedSession:
    lines: list[dict[str, Any]]
    """Header first; the damaged entries as they are written."""
    damaged: dict[int, list[str]] = field(default_factory=dict)
    """Line number (1-based) of each damaged entry -> the paths changed."""

    def write(self, path: Path) -> Path:
        text = "".join(json.dumps(line, ensure_ascii=True) + "\n" for line in self.lines)  # NaN, \\udXXX as is
        path.write_text(text, encoding="ascii")
        return path

    def intact(self) -> list[dict[str, Any]]:
        """The entries nobody touched."""
        return [line for number, line in enumerate(self.lines, start=1) if number > 1 and number not in self.damaged]


@st.composite
def damaged_sessions(draw: st.DrawFn) -> DamagedSession:
    lines = draw(sessions())
    damaged = DamagedSession(copy.deepcopy(lines))
    victims = draw(st.lists(st.integers(1, len(lines) - 1), min_size=1, max_size=3, unique=True))
    for index in victims:
        entry = damaged.lines[index]
        changes: list[str] = []
        for _ in range(draw(st.integers(1, 2))):
            paths = [p for p in paths_of(entry) if p != ("id",)]  # an id of the wrong type: own test
            if not paths:
                break
            path = draw(st.sampled_from(paths))
            current: Any = entry
            for key in path:
                current = current[key]
            value = draw(st.one_of(WRONG, st.just(MISSING)))
            if value is not MISSING and _harmless(value, current):
                continue
            _set(entry, path, value)
            changes.append(".".join(map(str, path)) + (" removed" if value is MISSING else f" = {type(value).__name__}"))
        if changes:
            damaged.damaged[index + 1] = changes
    return damaged
