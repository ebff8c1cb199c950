"""Compaction edges from issue 12, each reproduced on a real SessionManager and the ScriptedProvider.

The pi strategy: what a summary must be before it replaces history, when automatic compaction
may start, what an abort leaves behind, and whose state the circuit breaker is.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from pi_tui.core.errors import PiError
from pi_tui.core.messages import user_message
from tests.session.compaction_host import FakeHost, summary_turn, usage_assistant


def seed(host: FakeHost, turns: int = 3, size: int = 3000) -> None:
    for i in range(turns):
        host.add(user_message(f"question {i} " + "q" * size))
        host.add(usage_assistant(f"answer {i} " + "a" * 40, total=1000 * (i + 1)))


def compactions(host: FakeHost) -> list[dict[str, Any]]:
    return [e for e in host.session_manager.get_entries() if e["type"] == "compaction"]


EMPTY_ANSWERS = [
    pytest.param({"text": ""}, id="empty"),
    pytest.param({"text": "  \n\n "}, id="whitespace"),
    pytest.param({"thinking": "I should summarize " * 50, "finish_reason": "length"}, id="thinking-only-length"),
    pytest.param({"thinking": "done thinking", "text": ""}, id="thinking-only-stop"),
]


@pytest.mark.parametrize("answer", EMPTY_ANSWERS)
async def test_an_empty_summary_is_a_failure_and_writes_nothing_manual(tmp_path: Path, answer: dict[str, Any]) -> None:
    host = FakeHost(tmp_path, [answer])
    seed(host)
    before = list(host.agent.messages)
    with pytest.raises(PiError, match="Summarization failed: the summarizer returned no summary text"):
        await host.runner.compact()
    assert compactions(host) == []
    assert host.agent.messages == before
    end = host.events_of("compaction_end")[-1]
    assert end["result"] is None and end["errorMessage"].startswith("Compaction failed: Summarization failed:")


@pytest.mark.parametrize("answer", EMPTY_ANSWERS)
async def test_an_empty_summary_is_a_failure_and_writes_nothing_automatic(tmp_path: Path, answer: dict[str, Any]) -> None:
    host = FakeHost(tmp_path, [answer])
    seed(host)
    host.add(user_message("more " + "m" * 3000))
    last = usage_assistant("big", total=18_500)  # > 20,000 − 2,000
    host.add(last)
    await host.runner.check_after_run(last)
    assert compactions(host) == []
    end = host.events_of("compaction_end")[-1]
    assert end["result"] is None and "no summary text" in end["errorMessage"]


async def test_a_truncated_summary_is_a_failure(tmp_path: Path) -> None:
    """Cut off at max_tokens: the sections that come last (Next Steps, Critical Context) are lost."""
    host = FakeHost(tmp_path, [{"text": "## Goal\nHalf a summ", "finish_reason": "length"}])
    seed(host)
    with pytest.raises(PiError, match=r"cut off at its output limit \(1600 tokens\)"):
        await host.runner.compact()
    assert compactions(host) == []


# --------------------------------------------------------------------------- 2: never a summary per turn

SUMMARIZER = {"system_contains": "summarize conversations"}


def chat_turns(count: int, *, summary: str = "## Goal\nA short summary.") -> list[dict[str, Any]]:
    """Answers for the agent (it sends tools) and as many summaries as could ever be asked for."""
    answers = [{"text": f"answer {i}", "when": {"has_tools": True}} for i in range(count)]
    summaries = [{"text": summary, "when": SUMMARIZER} for _ in range(count)]
    return answers + summaries


def summarizer_calls(provider: Any) -> int:
    return sum(1 for r in provider.requests if not r.tools)


async def test_keep_recent_larger_than_the_threshold_does_not_summarize_every_turn(make_session: Any) -> None:
    """A 32k-window model with pi's defaults (reserve 16,384, keep 20,000): threshold 15,616. Keep
    is bounded to half the threshold, so a compaction brings the context well below it and the
    next one comes only after the history grew again: a few summaries, not one per turn."""
    from pi_tui.core.provider import ModelInfo
    from pi_tui.resources.settings import SettingsManager

    model = ModelInfo(provider="fake", id="fake-model", context_window=32_000, max_tokens=4000)
    session, provider, events = make_session(chat_turns(20), model=model, settings=SettingsManager.in_memory({}))
    for i in range(20):
        await session.prompt(f"turn {i} " + "x" * 8000)  # ~2,000 tokens a turn
    assert summarizer_calls(provider) <= 5  # was 11: one per turn once the history passed 20,000
    starts = [e for e in events if e["type"] == "compaction_start"]
    ends = [e for e in events if e["type"] == "compaction_end"]
    assert len(starts) == len(ends) == summarizer_calls(provider) >= 1
    assert all(e["result"] is not None for e in ends)  # no empty start/end pairs
    # every compaction left the context below the threshold
    assert all(e["tokensAfter"] < 32_000 - 16_384 for e in ends)
    bounded = [e for e in events if e["type"] == "notify" and "keepRecentTokens 20,000" in e["message"]]
    assert len(bounded) == 1


async def test_no_empty_compaction_events_while_everything_is_kept(make_session: Any) -> None:
    """Above the threshold but with nothing old enough to cut (a large system prompt): no
    start/end pair per turn; the events pane says once why nothing happens."""
    from pi_tui.core.provider import ModelInfo
    from pi_tui.resources.settings import SettingsManager

    model = ModelInfo(provider="fake", id="fake-model", context_window=32_000, max_tokens=4000)
    session, provider, events = make_session(chat_turns(4), model=model, settings=SettingsManager.in_memory({}))
    session.base_system_prompt = "s" * 70_000  # ~17,500 tokens, above the threshold on its own
    session._system_prompt_builder = lambda resources, tools: "s" * 70_000
    for i in range(4):
        await session.prompt(f"turn {i}")
    assert summarizer_calls(provider) == 0
    assert [e for e in events if e["type"].startswith("compaction_")] == []
    notes = [e for e in events if e["type"] == "notify" and "nothing to summarize" in e["message"]]
    assert len(notes) == 1 and notes[0]["level"] == "warning"


async def test_a_compaction_that_left_the_context_above_the_threshold_is_not_repeated(tmp_path: Path) -> None:
    """A summary that shrinks the messages but, with what the provider counts beyond them (system
    prompt, tools), leaves the context above the threshold: the next turn would summarize again
    for the same reason. It does not, although each later turn brings more than keep-recent (so
    there is something to cut); the events pane says so once; /compact still works."""
    host = FakeHost(tmp_path, [{"text": "## Goal\n" + "s" * 24_000}, {"text": "## Goal\nshort"}, {"text": "## Goal\nshort"}])
    seed(host, turns=10)  # ~7,600 estimated tokens of messages
    for turn in range(3):
        host.add(user_message(f"more {turn} " + "m" * 4000))  # ~1,000 tokens: keep-recent is 1,000
        last = usage_assistant("big", total=19_900)  # threshold 18,000: ~10,300 beyond the messages
        last["timestamp"] += 1000 * turn  # answered after the compaction entry was written
        host.add(last)
        await host.runner.check_after_run(last)
    assert len(host.provider.requests) == 1
    assert len(compactions(host)) == 1
    notes = [e for e in host.events if e["type"] == "notify" and "above the compaction threshold" in e["message"]]
    assert len(notes) == 1 and "compacting again would do the same" in notes[0]["message"]
    seed(host, turns=2)
    await host.runner.compact()  # by hand it runs, and clears the guard
    assert len(host.provider.requests) == 2 and host.runner.state.threshold_stuck is None


# --------------------------------------------------------------------------- 5: abort reaches every step


async def test_abort_while_session_before_compact_runs_writes_nothing_and_the_handler_sees_it(tmp_path: Path) -> None:
    started = asyncio.Event()
    seen: dict[str, Any] = {}

    async def slow(event: dict[str, Any]) -> dict[str, Any]:
        seen["signal"] = event["signal"]
        started.set()
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            seen["cancelled"] = True
            raise
        return {}

    host = FakeHost(tmp_path, [summary_turn()], handlers={"session_before_compact": [slow]})
    seed(host)
    task = asyncio.ensure_future(host.runner.compact())
    await asyncio.wait_for(started.wait(), 5)
    assert host.runner.is_compacting
    host.runner.abort()
    with pytest.raises(PiError, match="Compaction cancelled"):
        await asyncio.wait_for(task, 5)
    assert seen["signal"].aborted and seen.get("cancelled")
    assert compactions(host) == [] and host.provider.requests == []
    assert host.events_of("compaction_end")[-1]["aborted"] is True
    assert not host.runner.is_compacting


async def test_a_handler_that_swallows_the_abort_still_gets_nothing_written(tmp_path: Path) -> None:
    started = asyncio.Event()

    async def stubborn(event: dict[str, Any]) -> dict[str, Any]:
        started.set()
        prep = event["preparation"]
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            pass  # ignores the abort and answers anyway
        return {"compaction": {"summary": "LATE", "firstKeptEntryId": prep["firstKeptEntryId"], "tokensBefore": 1}}

    host = FakeHost(tmp_path, [], handlers={"session_before_compact": [stubborn]})
    seed(host)
    task = asyncio.ensure_future(host.runner.compact())
    await asyncio.wait_for(started.wait(), 5)
    host.runner.abort()
    with pytest.raises(PiError, match="Compaction cancelled"):
        await asyncio.wait_for(task, 5)
    assert compactions(host) == []


async def test_a_call_never_started_because_of_an_abort_is_closed(tmp_path: Path) -> None:
    """Aborted between building a summarizer call and starting it: the call is closed, not left
    for the garbage collector to report as 'never awaited' (the state machine showed it)."""
    import inspect

    from pi_tui.session.summarizer import SummaryCancelled

    host = FakeHost(tmp_path, [])

    async def summarizer_call() -> str:
        return "never"

    with host.runner.operation() as signal:
        signal.abort()
        call = summarizer_call()
        with pytest.raises(SummaryCancelled):
            await host.runner.guarded(call)
    assert inspect.getcoroutinestate(call) == inspect.CORO_CLOSED


async def test_abort_while_waiting_for_the_lock_sends_nothing(tmp_path: Path) -> None:
    host = FakeHost(tmp_path, [summary_turn()])
    seed(host)
    await host.lock.acquire()  # a run holds it
    task = asyncio.ensure_future(host.runner.compact())
    await asyncio.sleep(0.01)
    assert host.runner.is_compacting
    host.runner.abort()
    host.lock.release()
    with pytest.raises(PiError, match="Compaction cancelled"):
        await asyncio.wait_for(task, 5)
    assert host.provider.requests == [] and compactions(host) == []


async def test_session_abort_during_a_threshold_compactions_hook_reports_aborted(make_session: Any, project: Path) -> None:
    folder = project / ".pi" / "extensions"
    folder.mkdir(parents=True)
    (folder / "slow.py").write_text(
        "import asyncio\n\ndef register(pi):\n    @pi.on('session_before_compact')\n"
        "    async def slow(event):\n        await asyncio.sleep(0.3)\n"
    )
    from pi_tui.core.provider import ModelInfo
    from pi_tui.resources.settings import SettingsManager

    small = ModelInfo(provider="fake", id="fake-model", context_window=8192, max_tokens=1000)
    settings = SettingsManager.in_memory({"compaction": {"reserveTokens": 2000, "keepRecentTokens": 1000}})
    turns = [{"text": "one", "usage": {"prompt_tokens": 1000, "completion_tokens": 10}},
             {"text": "two", "usage": {"prompt_tokens": 6500, "completion_tokens": 10}}, summary_turn()]
    session, provider, events = make_session(turns, model=small, settings=settings, load_extensions=True)
    await session.prompt("one " + "o" * 6000)

    def on_event(event: dict[str, Any]) -> None:
        if event["type"] == "compaction_start":
            asyncio.get_running_loop().call_later(0.05, lambda: asyncio.ensure_future(session.abort()))

    session.subscribe(on_event)
    await asyncio.wait_for(session.prompt("two " + "t" * 6000), 5)
    end = next(e for e in events if e["type"] == "compaction_end")
    assert end["aborted"] is True and end["result"] is None
    assert all(e["type"] != "compaction" for e in session.session_manager.get_entries())
    assert not session.is_compacting and len(provider.requests) == 2


# --------------------------------------------------------------------------- 7: the breaker belongs to one session


async def three_failures(host: FakeHost) -> None:
    for _ in range(3):
        host.add(user_message("more " + "m" * 3000))
        last = usage_assistant("big", total=19_000)
        host.add(last)
        await host.runner.check_after_run(last)


async def test_the_circuit_breaker_does_not_outlive_its_session(tmp_path: Path) -> None:
    error_turn = {"error": {"status": 400, "message": "bad summarizer"}}
    host = FakeHost(tmp_path, [error_turn, error_turn, error_turn, summary_turn("FRESH")])
    seed(host)
    await three_failures(host)
    assert host.runner.circuit_open
    host.session_manager.new_session()  # /new
    assert not host.runner.circuit_open and host.runner.consecutive_failures == 0
    seed(host)
    host.add(user_message("more " + "m" * 3000))
    last = usage_assistant("big", total=19_000)
    host.add(last)
    await host.runner.check_after_run(last)
    assert compactions(host)[-1]["summary"] == "FRESH"


async def test_pipeline_summary_rejections_do_not_switch_off_overflow_recovery(tmp_path: Path) -> None:
    settings = {"compaction": {"reserveTokens": 2000, "keepRecentTokens": 1000},
                "context": {"strategy": "pipeline", "pipeline": {"summaryThresholdBytes": 6000}}}
    bad = {"text": "not json", "when": {"system_contains": "condense the history"}}
    host = FakeHost(tmp_path, [bad, bad, bad, summary_turn("RECOVERED")], settings=settings)
    for _ in range(3):
        seed(host, turns=2)
        await host.runner.prepare_request_messages(list(host.session_manager.build_session_context().messages))
    assert host.runner.pipeline_circuit_open and not host.runner.circuit_open
    assert [e["source"] for e in host.events_of("compaction_circuit_open")] == ["pipeline"]
    host.add(user_message("overflowing"))
    failed = usage_assistant("", total=0, stop="error", error="400 prompt is too long")
    host.add(failed)
    assert await host.runner.check_after_run(failed) is True
    assert compactions(host)[-1]["summary"] == "RECOVERED"


# --------------------------------------------------------------------------- 6: nothing queued is left behind


async def test_messages_queued_during_a_threshold_compaction_are_sent_after_it(make_session: Any) -> None:
    from pi_tui.core.provider import ModelInfo
    from pi_tui.resources.settings import SettingsManager

    small = ModelInfo(provider="fake", id="fake-model", context_window=8192, max_tokens=1000)
    settings = SettingsManager.in_memory({"compaction": {"reserveTokens": 2000, "keepRecentTokens": 1000}})
    turns = [
        {"text": "one", "usage": {"prompt_tokens": 1000, "completion_tokens": 10}, "when": {"has_tools": True}},
        {"text": "two", "usage": {"prompt_tokens": 6500, "completion_tokens": 10}, "when": {"has_tools": True}},
        {**summary_turn(), "delay_ms": 50, "when": SUMMARIZER},
        {"text": "steered answer", "usage": {"prompt_tokens": 900, "completion_tokens": 10}, "when": {"last_user_contains": "steer me"}},
        {"text": "follow-up answer", "usage": {"prompt_tokens": 950, "completion_tokens": 10}, "when": {"last_user_contains": "follow me"}},
    ]
    session, provider, events = make_session(turns, model=small, settings=settings)
    await session.prompt("one " + "o" * 6000)

    def on_event(event: dict[str, Any]) -> None:
        if event["type"] == "compaction_start":
            session.steer("steer me")
            session.follow_up("follow me")

    session.subscribe(on_event)
    await asyncio.wait_for(session.prompt("two " + "t" * 6000), 5)
    assert next(e for e in events if e["type"] == "compaction_end")["result"] is not None
    last_users = [r.messages[-1] for r in provider.requests if r.tools]
    assert [m["content"][0]["text"] for m in last_users[-2:]] == ["steer me", "follow me"]
    assert session.state.steering == [] and session.state.follow_up == []
    assert session.agent.messages[-1]["content"][0]["text"] == "follow-up answer"


async def test_an_automatic_summary_that_does_not_shrink_the_context_is_a_failure(tmp_path: Path) -> None:
    """Shorter than its (serialized) input, yet not smaller than the many tiny messages it replaces."""
    host = FakeHost(tmp_path, [{"text": "## Goal\n" + "s" * 1800}])
    for i in range(100):
        host.add(user_message(f"q{i:03d}"))
        host.add(usage_assistant(f"a{i:03d}", total=100))
    host.add(user_message("more " + "m" * 4000))
    last = usage_assistant("big", total=18_500)
    host.add(last)
    await host.runner.check_after_run(last)
    assert host.events_of("compaction_end")[-1]["errorMessage"].startswith(
        "Auto-compaction failed: the summary did not make the context smaller")
    assert compactions(host) == []


async def test_a_failed_threshold_compaction_is_not_retried_before_the_next_prompt(tmp_path: Path) -> None:
    """One threshold compaction per user turn: a failure after the answer is retried after the
    next answer, not a second time in the same turn by the check before the next prompt."""
    host = FakeHost(tmp_path, [{"error": {"status": 400, "message": "broken"}}, summary_turn("SECOND TRY")])
    seed(host)
    host.add(user_message("more " + "m" * 3000))
    last = usage_assistant("big", total=18_500)
    host.add(last)
    await host.runner.check_after_run(last)
    await host.runner.check_before_prompt(last)
    assert len(host.provider.requests) == 1
    host.add(user_message("next"))
    again = usage_assistant("big again", total=18_600)
    again["timestamp"] += 10
    host.add(again)
    await host.runner.check_after_run(again)
    assert len(host.provider.requests) == 2 and compactions(host)[-1]["summary"] == "SECOND TRY"
