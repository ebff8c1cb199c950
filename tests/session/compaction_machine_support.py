"""The pieces of the compaction state machine (test_compaction_state_machine.py) that are not rules.

* ``WindowScript``: the ScriptedProvider's script, answering from the machine's current plan. Like
  a real endpoint it refuses a request larger than the model's window in real (o200k) tokens,
  prompt plus the output it asks for (chars/4 undercounts CJK text ~2.4×), and
  the summarizer answers with the fault the machine chose (error, overflow, empty, truncated,
  thinking-only, longer than its input, slow).
* ``EventLog``: the session's events with the compaction settings in force when each arrived.
* the invariant checks, each one a plain function raising ``AssertionError`` with a reason.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pi_tui.core.context.compaction import estimate_tokens_now_and_after
from pi_tui.core.context.compaction_prompts import SPLIT_TURN_SEPARATOR
from pi_tui.core.context.convert import convert_to_llm
from pi_tui.core.context.pipeline import tool_pairing_problems
from pi_tui.core.context.pipeline_summary import PIPELINE_SUMMARY_PREFIX, SUMMARY_FIELDS
from pi_tui.core.session.loading import load_session_readonly
from pi_tui.testing.script import RequestView, Script
from pi_tui.testing.scripted import request_tokens

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
"""A 60,000-character summary: an automatic compaction it does not shrink is refused (pi-tui), manual writes it."""
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


def summarizer_turn(fault: str, *, pipeline: bool, marker: str = "") -> dict[str, Any]:
    """What the summarizer answers for ``fault``. ``marker`` (``SUM-<n>``) names the answer: it
    ends every section (and every JSON field), the part a capped previous summary keeps, so that
    ``check_previous_summary_carried`` can follow a summary into the next one."""
    tag = f" {marker}" if marker else ""
    fields = {name: f"{name} so far{tag}" for name in SUMMARY_FIELDS}
    good = json.dumps(fields) if pipeline else f"## Goal\nOK-SUMMARY of the work so far.{tag}"
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
            return {"text": json.dumps(dict.fromkeys(SUMMARY_FIELDS, f"{LONG_MARKER} " * 4000 + marker))}
        # structured, half CJK: ~25k o200k tokens, more than an 8k–16k window can take whole
        done = "".join(f"- [x] step {i}: 漢字の文章です。これは回答です。中文字符测试\n" for i in range(900))
        return {"text": f"## Goal\n{LONG_MARKER} " + "x" * 30_000 + f"{tag}\n\n## Progress\n### Done\n{done}{marker}\n"
                        f"## Next Steps\n1. go on{tag}"}
    if fault == "slow":
        return {"text": good, "delay_ms": 25}
    return {"text": good}


class WindowScript(Script):
    """Answers each request from ``plan(view)``, refusing requests beyond the model's window."""

    def __init__(self, plan: Callable[[RequestView, Any], dict[str, Any]], requests: list[Any]) -> None:
        super().__init__([])
        self._plan = plan
        self._provider_requests = requests
        self.summary_refusals: list[str] = []
        """Summarizer requests refused for their size: each is a compaction that could not succeed."""

    def next_turn(self, view: RequestView) -> dict[str, Any] | None:
        self.requests.append(view)
        request = self._provider_requests[-1]  # the provider appended it just before asking
        window = request.model.context_window
        if math.ceil(len(view.body_text) / 4) > window or self._tokens_beyond(view, request, window):
            if not view.has_tools:
                self.summary_refusals.append(
                    f"a summarizer request of {request_tokens(request)} + {request.max_tokens} tokens on a {window}-token window")
            return overflow_turn(window)
        return self._plan(view, request)

    @staticmethod
    def _tokens_beyond(view: RequestView, request: Any, window: int) -> bool:
        """Real tokens are at most the UTF-8 bytes: most requests are decided without counting."""
        if len(view.body_text.encode("utf-8", "surrogatepass")) + (request.max_tokens or 0) <= window:
            return False
        return request_tokens(request) + (request.max_tokens or 0) > window


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
            # a pi compaction of a split turn carries the JSON whole and adds pi's turn context
            body = summary[len(PIPELINE_SUMMARY_PREFIX):].split(SPLIT_TURN_SEPARATOR, 1)[0].split("\n\n<", 1)[0]
            data = json.loads(body)
            assert list(data) == list(SUMMARY_FIELDS) and all(isinstance(v, str) and v.strip() for v in data.values())
        pi_made = not summary.startswith(PIPELINE_SUMMARY_PREFIX) or SPLIT_TURN_SEPARATOR in summary
        if pi_made and summary not in manual_summaries:
            path = _path_to(by_id, entry.get("parentId"))
            kept = next(i for i, e in enumerate(path) if e.get("id") == entry.get("firstKeptEntryId"))
            before, after = estimate_tokens_now_and_after(path, kept, summary)
            assert after < before, f"automatic compaction {entry['id']} did not shrink the context ({before} → {after})"


SUMMARY_MARK = re.compile(r"SUM-\d+")


def check_previous_summary_carried(entries: list[dict[str, Any]], requests: dict[str, str]) -> int:
    """No history lost (issue 19): a compaction made after another on its path carries that one's
    summary, whole (a split turn's carried history part) or through a summarizer request that
    had it (as ``<previous-summary>``). ``requests`` maps each summarizer answer's marker to the
    request it answered. Returns how many summaries were carried whole."""
    by_id = {str(e.get("id")): e for e in entries}
    whole = 0
    for entry in entries:
        if entry.get("type") != "compaction" or entry.get("fromHook"):
            continue
        previous = next((e for e in reversed(_path_to(by_id, entry.get("parentId")))
                         if e.get("type") == "compaction"), None)
        if previous is None or previous.get("fromHook"):
            continue
        earlier = set(SUMMARY_MARK.findall(str(previous.get("summary", ""))))
        if not earlier:
            continue
        summary = str(entry.get("summary", ""))
        if earlier & set(SUMMARY_MARK.findall(summary.split(SPLIT_TURN_SEPARATOR, 1)[0])):
            whole += 1
            continue
        sources = [requests.get(marker, "") for marker in SUMMARY_MARK.findall(summary)]
        assert any(earlier & set(SUMMARY_MARK.findall(source)) for source in sources), (
            f"compaction {entry['id']} lost the previous summary ({previous['id']}, {sorted(earlier)}): "
            f"it is neither in the new summary nor in a summarizer request that wrote it")
    return whole


def _path_to(by_id: dict[str, dict[str, Any]], leaf: Any) -> list[dict[str, Any]]:
    path: list[dict[str, Any]] = []
    while leaf is not None:
        entry = by_id[str(leaf)]
        path.append(entry)
        leaf = entry.get("parentId")
    return path[::-1]


def check_turn_bounds(log: EventLog, thresholds: dict[tuple[Any, ...], int]) -> None:
    """Per user turn (from one user message to the next) at most one threshold compaction, and
    at most one overflow compaction per good answer (an overflow compacts and retries once; a
    good answer in between, e.g. a tool round of a long turn, allows the next one); after a threshold
    compaction that left even the messages above the threshold, no second one for the same
    settings."""
    threshold = overflow = 0
    stuck: tuple[Any, ...] | None = None
    for item in log.events:
        event = item.event
        kind = event.get("type")
        if kind == "message_start" and event.get("message", {}).get("role") == "user":
            threshold = overflow = 0
        elif kind == "message_end" and event.get("message", {}).get("role") == "assistant" and \
                event["message"].get("stopReason") not in ("error", "aborted"):
            overflow = 0  # a good answer (a tool round) between two overflows allows the next one
        elif kind == TREE_MOVED:  # another branch is another context
            threshold = overflow = 0
            stuck = None
        elif kind == "compaction_start" and event.get("reason") == "threshold":
            threshold += 1
            assert threshold <= 1, "two threshold compactions in one user turn"
            assert stuck != item.key, f"a threshold compaction repeated one that left the context above the threshold {item.key}"
        elif kind == "compaction_start" and event.get("reason") == "overflow":
            overflow += 1
            assert overflow <= 1, "two overflow compactions without a good answer between them"
        elif kind == "compaction_end" and event.get("reason") == "threshold" and event.get("result"):
            after = event.get("tokensAfter")
            stuck = item.key if isinstance(after, int) and after > thresholds[item.key] else None
        elif kind == "compaction_end" and event.get("result"):
            stuck = None


WIRE_KEYS = ("role", "content", "toolCallId", "toolName", "isError")


def sent_bytes(messages: list[Any]) -> int:
    """The request's size counted here, independently of the pipeline's own measure: the compact
    UTF-8 JSON of what each message puts on the wire (docs/compaction.md), no usage, timestamps,
    model ids, tool ``details`` or failed answers (the replay drops those)."""
    total = 0
    for message in convert_to_llm(messages):
        if message.get("role") == "assistant" and message.get("stopReason") in ("error", "aborted"):
            continue
        wire = {key: message[key] for key in WIRE_KEYS if key in message}  # type: ignore[literal-required]
        total += len(json.dumps(wire, separators=(",", ":"), ensure_ascii=False).encode("utf-8", "surrogatepass"))
    return total


def check_request(request: Any, *, pipeline: bool, measured: int | None, threshold_bytes: int) -> list[str]:
    """Problems with one agent request: under the pipeline, the bytes it measured must be the
    bytes sent, and tool calls and results must pair up."""
    problems: list[str] = []
    if not pipeline:
        return problems
    sent = sent_bytes(request.messages)
    if measured != sent:
        problems.append(f"the pipeline measured {measured} bytes, the request has {sent}")
    problems.extend(tool_pairing_problems(request.messages))
    return problems


ONCE_NOTES = ("compaction.keepRecentTokens ", "The context is above the compaction threshold", "cache-aware pruning:")
"""Notices the events pane shows once per session (the keep bound, nothing to cut, the bounded
cache-aware budgets); the same text twice means the runner said it again."""


def check_events(log: EventLog) -> None:
    """Per session: no empty threshold ``compaction_start``/``compaction_end`` pair (nothing is
    started when nothing can be cut), and each once-only notice at most once."""
    seen: set[str] = set()
    for item in log.events:
        event = item.event
        if event.get("type") == "compaction_end" and event.get("reason") == "threshold":
            empty = event.get("result") is None and not event.get("aborted") and not event.get("errorMessage")
            assert not empty, "an empty threshold compaction_start/compaction_end pair"
        if event.get("type") == "notify" and str(event.get("message", "")).startswith(ONCE_NOTES):
            text = str(event["message"])
            assert text not in seen, f"said twice in one session: {text}"
            seen.add(text)


@dataclass
class AbortMark:
    """Where an abort was requested: the log position and what had been written by then."""

    log_index: int
    compactions: int
    branch_summaries: int
    compacting: bool


def count_entries(entries: list[dict[str, Any]], kind: str) -> int:
    return sum(1 for e in entries if e.get("type") == kind)


def check_abort(mark: AbortMark, log: EventLog, entries: list[dict[str, Any]], written_at: dict[int, int]) -> None:
    """An abort requested while a compaction, pipeline summary or branch summary ran: that
    operation writes nothing after the request. Its outcome is the first compaction_end or
    pipeline summary event after the mark; ``written_at`` maps a log index to the number of
    compaction entries when that event arrived (a success whose entry was written before the
    abort, e.g. while ``session_compact`` handlers ran, is fine)."""
    if not mark.compacting:
        return
    for index in range(mark.log_index, len(log.events)):
        event = log.events[index].event
        kind = event.get("type")
        if kind == "compaction_end":
            if event.get("result") is not None:
                assert written_at[index] == mark.compactions, "a compaction was written after its abort"
            return
        if kind == "context_reduced" and event.get("step") in ("summary", "summary_rejected"):
            assert event.get("step") != "summary", "a pipeline summary was written after its abort"
            return
        if kind == TREE_MOVED:
            assert count_entries(entries, "branch_summary") == mark.branch_summaries, "a branch summary was written after its abort"
            return


ARTIFACT_MARK = "[Tool result saved as an artifact"


def check_inline_per_turn(entries: list[dict[str, Any]], since: int, limit: int) -> None:
    """Under the pipeline, the results of one assistant message's tool calls kept inline are at
    most ``turnInlineLimitBytes`` together, with parallel and with sequential execution."""
    inline: dict[str, int] = {}
    owner: dict[str, str] = {}
    for entry in entries[since:]:
        message = entry.get("message") if entry.get("type") == "message" else None
        if not isinstance(message, dict):
            continue
        if message.get("role") == "assistant":
            for block in message.get("content") or []:
                if isinstance(block, dict) and block.get("type") == "toolCall":
                    owner[str(block.get("id"))] = str(entry.get("id"))
        elif message.get("role") == "toolResult":
            text = "".join(str(b.get("text", "")) for b in message.get("content") or [] if b.get("type") == "text")
            if not text.startswith(ARTIFACT_MARK):
                turn = owner.get(str(message.get("toolCallId")), "?")
                inline[turn] = inline.get(turn, 0) + len(text.encode("utf-8", "surrogatepass"))
    over = {turn: size for turn, size in inline.items() if size > limit}
    assert not over, f"tool results kept inline beyond {limit} bytes in one turn: {over}"
