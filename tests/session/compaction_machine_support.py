"""The pieces of the compaction state machine (test_compaction_state_machine.py) that are not rules.

* ``WindowScript``: the ScriptedProvider's script, answering from the machine's current plan. Like
  a real endpoint it refuses a request larger than the model's window (pi's overflow text), and
  the summarizer answers with the fault the machine chose (error, overflow, empty, truncated,
  thinking-only, longer than its input, slow).
* ``EventLog``: the session's events with the compaction settings in force when each arrived.
* the invariant checks, each one a plain function raising ``AssertionError`` with a reason.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pi_tui.core.context.compaction import estimate_tokens_now_and_after
from pi_tui.core.context.pipeline import request_bytes, tool_pairing_problems
from pi_tui.core.context.pipeline_summary import PIPELINE_SUMMARY_PREFIX, SUMMARY_FIELDS
from pi_tui.core.session.loading import load_session_readonly
from pi_tui.providers.script import RequestView, Script

ALPHABETS = {
    "ascii": "The quick brown fox jumps over the lazy dog. 0123456789\n",
    "code": "def f(x):\n    return {'k': [x, x * 2]}  # ok\n",
    "cjk": "漢字の文章です。これは回答です。中文字符测试，한국어 문장입니다.\n",
    "emoji": "🙂🚀✨ naïve café — ünïcödé ✓\n",
}
FAULTS = ("ok", "error", "overflow", "empty", "truncated", "thinking", "longer", "slow")
INVALID_MARKERS = ("TRUNCATED-SUMMARY", "THINKING-ONLY")
"""Texts of summaries that must never become a compaction (cut off, or thinking only)."""
LONG_MARKER = "LONG-SUMMARY"
"""A summary longer than its input: automatic compaction refuses it (pi-tui), manual writes it."""
PIPELINE_SYSTEM_MARK = "condense the history"
TREE_MOVED = "test:tree_moved"
"""Logged by the machine after a /tree move (not a session event)."""


def make_text(alphabet: str, size: int, tag: str = "") -> str:
    source = ALPHABETS[alphabet]
    body = (source * (size // len(source) + 1))[:size]
    return f"{tag} {body}" if tag else body


def overflow_turn(window: int) -> dict[str, Any]:
    return {"error": {"status": 400, "code": "context_length_exceeded",
                      "message": f"This model's maximum context length is {window} tokens."}}


def summarizer_turn(fault: str, *, pipeline: bool) -> dict[str, Any]:
    """What the summarizer answers for ``fault``."""
    fields = {name: f"{name} so far" for name in SUMMARY_FIELDS}
    good = json.dumps(fields) if pipeline else "## Goal\nOK-SUMMARY of the work so far."
    if fault == "error":
        return {"error": {"status": 400, "message": "the summarizer is broken"}}
    if fault == "overflow":
        return overflow_turn(1)
    if fault == "empty":
        return {"text": ""}
    if fault == "truncated":
        return {"text": (good[:-2] if pipeline else "## Goal\nTRUNCATED-SUMMARY"), "finish_reason": "length"}
    if fault == "thinking":
        return {"thinking": "THINKING-ONLY " * 20, "finish_reason": "length"}
    if fault == "longer":
        if pipeline:
            return {"text": json.dumps(dict.fromkeys(SUMMARY_FIELDS, f"{LONG_MARKER} " * 4000))}
        return {"text": f"## Goal\n{LONG_MARKER} " + "x" * 60_000}
    if fault == "slow":
        return {"text": good, "delay_ms": 25}
    return {"text": good}


class WindowScript(Script):
    """Answers each request from ``plan(view)``, refusing requests beyond the model's window."""

    def __init__(self, plan: Callable[[RequestView, Any], dict[str, Any]], requests: list[Any]) -> None:
        super().__init__([])
        self._plan = plan
        self._provider_requests = requests

    def next_turn(self, view: RequestView) -> dict[str, Any] | None:
        self.requests.append(view)
        request = self._provider_requests[-1]  # the provider appended it just before asking
        if math.ceil(len(view.body_text) / 4) > request.model.context_window:
            return overflow_turn(request.model.context_window)
        return self._plan(view, request)


@dataclass
class Logged:
    event: dict[str, Any]
    key: tuple[Any, ...]
    """(model id, window, reserve, keep) as the runner used them when the event arrived."""


@dataclass
class EventLog:
    events: list[Logged] = field(default_factory=list)

    def kinds(self, kind: str, since: int = 0) -> list[dict[str, Any]]:
        return [item.event for item in self.events[since:] if item.event.get("type") == kind]


# --------------------------------------------------------------------------- invariants


def check_file_grows(path: Path, seen: dict[Path, tuple[bytes, set[str]]]) -> None:
    """The canonical file only grows; every entry ever appended is still there and loads."""
    if not path.exists():
        return
    data = path.read_bytes()
    before, ids = seen.get(path, (b"", set()))
    assert data.startswith(before), f"{path.name} was rewritten, not appended to"
    loaded = load_session_readonly(path)
    assert loaded.warnings == [], f"{path.name} loads with warnings: {loaded.warnings}"
    now = {str(e.get("id")) for e in loaded.entries}
    assert ids <= now, f"{path.name} lost entries {sorted(ids - now)}"
    seen[path] = (data, now)


def check_compaction_entries(entries: list[dict[str, Any]], manual_summaries: set[str]) -> None:
    """A compaction entry exists only with a non-empty summary that passed validation: not cut
    off, not thinking only, a pipeline summary with exactly its five fields, and an automatic
    pi summary that made the context smaller (recomputed here from the file's entries)."""
    by_id = {str(e.get("id")): e for e in entries}
    for entry in entries:
        if entry.get("type") != "compaction" or entry.get("fromHook"):
            continue
        summary = str(entry.get("summary", ""))
        assert summary.strip(), f"compaction {entry['id']} has an empty summary"
        assert not any(mark in summary for mark in INVALID_MARKERS), f"compaction {entry['id']} kept an invalid summary"
        if summary.startswith(PIPELINE_SUMMARY_PREFIX):
            body = summary[len(PIPELINE_SUMMARY_PREFIX):].split("\n\n<", 1)[0]
            data = json.loads(body)
            assert list(data) == list(SUMMARY_FIELDS) and all(isinstance(v, str) and v.strip() for v in data.values())
        elif summary not in manual_summaries:
            path = _path_to(by_id, entry.get("parentId"))
            kept = next(i for i, e in enumerate(path) if e.get("id") == entry.get("firstKeptEntryId"))
            before, after = estimate_tokens_now_and_after(path, kept, summary)
            assert after < before, f"automatic compaction {entry['id']} did not shrink the context ({before} → {after})"


def _path_to(by_id: dict[str, dict[str, Any]], leaf: Any) -> list[dict[str, Any]]:
    path: list[dict[str, Any]] = []
    while leaf is not None:
        entry = by_id[str(leaf)]
        path.append(entry)
        leaf = entry.get("parentId")
    return path[::-1]


def check_turn_bounds(log: EventLog, thresholds: dict[tuple[Any, ...], int]) -> None:
    """Per user turn (from one user message to the next) at most one threshold compaction and at
    most two in all (an overflow compacts and retries once; a good answer in between, e.g. a tool
    call, allows one more: the session continues at most twice after a run); after a threshold
    compaction that left even the messages above the threshold, no second one for the same
    settings."""
    threshold = overflow = 0
    stuck: tuple[Any, ...] | None = None
    for item in log.events:
        event = item.event
        kind = event.get("type")
        if kind == "message_start" and event.get("message", {}).get("role") == "user":
            threshold = overflow = 0
        elif kind == TREE_MOVED:  # another branch is another context
            threshold = overflow = 0
            stuck = None
        elif kind == "compaction_start" and event.get("reason") == "threshold":
            threshold += 1
            assert threshold <= 1, "two threshold compactions in one user turn"
            assert threshold + overflow <= 2, "three automatic compactions in one user turn"
            assert stuck != item.key, f"a threshold compaction repeated one that left the context above the threshold {item.key}"
        elif kind == "compaction_start" and event.get("reason") == "overflow":
            overflow += 1
            assert threshold + overflow <= 2, "three automatic compactions in one user turn"
        elif kind == "compaction_end" and event.get("reason") == "threshold" and event.get("result"):
            after = event.get("tokensAfter")
            stuck = item.key if isinstance(after, int) and after > thresholds[item.key] else None
        elif kind == "compaction_end" and event.get("result"):
            stuck = None


def check_request(request: Any, *, pipeline: bool, measured: int | None, threshold_bytes: int) -> list[str]:
    """Problems with one agent request: under the pipeline, the bytes it measured must be the
    bytes sent, and tool calls and results must pair up."""
    problems: list[str] = []
    if not pipeline:
        return problems
    sent = request_bytes(request.messages)
    if measured != sent:
        problems.append(f"the pipeline measured {measured} bytes, the request has {sent}")
    problems.extend(tool_pairing_problems(request.messages))
    return problems
