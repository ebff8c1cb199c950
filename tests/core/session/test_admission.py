"""The entries' fast check runs while a large file is parsed, a block at a time
(``well_formed.Admission``, issue 19 item 15): what a session loads to must be what the checks
alone give, for damaged entries in any block, a torn last line, and a migrated file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import pi_tui.core.session.jsonl as jsonl
from pi_tui.core.session.loading import ReadSession, checked_session, read_session
from pi_tui.core.session.well_formed import entry_ok
from tests.reliability.session_strategies import paths_of

USAGE = {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2,
         "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}


def header(version: int = 3) -> dict[str, Any]:
    return {"type": "session", "version": version, "id": "s1", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/p"}


def message(n: int, parent: str | None) -> dict[str, Any]:
    if n % 2:
        body: dict[str, Any] = {"role": "assistant", "api": "openai-completions", "provider": "fake", "model": "m",
                                "stopReason": "stop", "timestamp": 1767225601000 + n, "usage": USAGE,
                                "content": [{"type": "text", "text": f"answer {n}"}]}
    else:
        body = {"role": "user", "timestamp": 1767225601000 + n, "content": f"question {n}"}
    return {"type": "message", "id": f"e{n}", "parentId": parent, "timestamp": "2026-01-01T00:00:01.000Z",
            "message": body}


DAMAGE = {
    5: lambda e: e["message"].update(stopReason="finished"),  # not one of pi's stop reasons
    11: lambda e: e["message"]["usage"].__setitem__("input", -3),
    13: lambda e: e.pop("timestamp"),
    20: lambda e: e.update(parentId=7),
    31: lambda e: e["message"].update(content=[{"type": "text", "text": 5}]),
    44: lambda e: e.update(id="e3"),  # a duplicate id
    47: lambda e: e["message"].update(role="toolResult", toolCallId="c", toolName=None, isError=False),
}


def write(path: Path, entries: list[dict[str, Any]], tail: str = "") -> None:
    path.write_text("".join(json.dumps(e) + "\n" for e in entries) + tail)


def session(count: int = 60) -> list[dict[str, Any]]:
    entries = [header()]
    for n in range(count):
        entry = message(n, f"e{n - 1}" if n else None)
        entry["message"] = json.loads(json.dumps(entry["message"]))  # its own usage dict
        DAMAGE.get(n, lambda e: None)(entry)
        entries.append(entry)
    return entries


def unadmitted(path: Path) -> Any:
    """The checks alone: no flags from the parse (the length differs, so none are used)."""
    return checked_session(ReadSession(jsonl.read_session_file(path), bytearray()))


@pytest.fixture(autouse=True)
def small_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("orjson", reason="blocks are read with orjson only (the default install)")
    monkeypatch.setattr(jsonl, "READ_BLOCK_BYTES", 2048)  # many blocks, damage in several


@pytest.mark.parametrize("tail", ["", '{"type":"message","id":"torn"'], ids=["whole", "torn last line"])
def test_a_damaged_file_read_in_blocks_loads_as_the_checks_alone_load_it(tmp_path: Path, tail: str) -> None:
    path = tmp_path / "s.jsonl"
    write(path, session(), tail)
    read = read_session(path)
    assert len(read.well_formed) == len(read.parsed.entries) == 61
    bad = {n + 1 for n in DAMAGE} - {45}  # the duplicate id is well formed; the position check finds it
    assert [i for i, ok in enumerate(read.well_formed) if not ok] == [0, *sorted(bad)]
    admitted, alone = checked_session(read), unadmitted(path)
    assert admitted.entries == alone.entries and admitted.warnings == alone.warnings
    assert len(admitted.warnings) >= len(DAMAGE)


def test_the_flags_are_the_checks_verdicts(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    write(path, session())
    read = read_session(path)
    fresh = jsonl.read_session_file(path).entries
    assert list(read.well_formed) == [int(entry_ok(e)) for e in fresh]


def test_a_migrated_file_read_in_blocks_loads_as_the_checks_alone_load_it(tmp_path: Path) -> None:
    """A v2 file: the migration rewrites entries (hookMessage → custom) after the parse admitted
    them; what loads is what the checks alone give."""
    entries = [header(2), *session(30)[1:]]
    entries[9]["message"] = {"role": "hookMessage", "customType": "note", "content": "hi", "display": True,
                             "timestamp": 1767225601000}
    path = tmp_path / "s.jsonl"
    write(path, entries)
    admitted, alone = checked_session(read_session(path)), unadmitted(path)
    assert admitted.migrated_from == 2
    assert admitted.entries == alone.entries and admitted.warnings == alone.warnings
    assert admitted.entries[8]["message"]["role"] == "custom"


FULL_MESSAGES: list[dict[str, Any]] = [
    {"role": "user", "timestamp": 1767225601000, "content": [
        {"type": "text", "text": "look", "textSignature": "s"}, {"type": "image", "data": "AA==", "mimeType": "image/png"}]},
    {"role": "user", "timestamp": 1767225601000, "content": "plain"},
    {"role": "assistant", "api": "anthropic-messages", "provider": "anthropic", "model": "claude",
     "stopReason": "toolUse", "timestamp": 1767225601000, "usage": USAGE, "errorMessage": "e", "responseId": "r",
     "retryAfterMs": 5, "diagnostics": [],
     "content": [{"type": "thinking", "thinking": "hm", "thinkingSignature": "sig", "redacted": False},
                 {"type": "text", "text": "ok", "textSignature": "t"},
                 {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "a"}, "thoughtSignature": "x"}]},
    {"role": "toolResult", "toolCallId": "c1", "toolName": "read", "isError": False, "timestamp": 1767225601000,
     "content": [{"type": "text", "text": "file"}, {"type": "image", "data": "AA==", "mimeType": "image/png"}]},
]
_GONE = object()
WRONG_VALUES: list[Any] = [_GONE, None, True, 0, -1, 1.5, 2**60, float("nan"), "", "x", [], {}, [{}], {"type": "text"}]


def test_the_fast_check_passes_nothing_the_full_check_would_change() -> None:
    """Every field of a message of each role (each block kind, the optional fields too) and of the
    entry around it, made missing or each of a dozen wrong values in turn: whenever ``entry_ok``
    still says yes, ``check_entry`` must leave the entry as it is and say nothing. (A random
    sample of damage missed a fast check that forgot ``isError``.)"""
    import copy

    from pi_tui.core.session.validation import check_entry

    tried = passed = 0
    for body in FULL_MESSAGES:
        entry: dict[str, Any] = {"type": "message", "id": "m1", "parentId": None,
                                 "timestamp": "2026-01-01T00:00:01.000Z", "message": body}
        assert entry_ok(copy.deepcopy(entry)), body["role"]  # the well-formed ones stay on the fast path
        for path in paths_of(entry):
            for value in WRONG_VALUES:
                damaged = copy.deepcopy(entry)
                target: Any = damaged
                for key in path[:-1]:
                    target = target[key]
                if value is _GONE:
                    if isinstance(target, list):
                        continue
                    del target[path[-1]]
                else:
                    target[path[-1]] = copy.deepcopy(value)
                tried += 1
                if entry_ok(damaged):
                    passed += 1
                    notes: list[str] = []
                    assert check_entry(damaged, notes.append) is damaged and notes == [], (path, value)
    assert tried > 1000 and passed > 0  # harmless changes (another text, a different count) stay fast
