"""Defects found in review, each reproduced through the real session, files and ScriptedProvider."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, ClassVar

from tests.session.conftest import FakeClock

SLOW_AGENT_END = '''
import asyncio

def register(pi):
    @pi.on("agent_end")
    async def slow(event):
        await asyncio.sleep(0.05)
'''


async def test_abort_while_run_winds_down_stops_the_retry(make_session, project: Path, clock: FakeClock) -> None:
    """Esc pressed after the error reply arrived but before the retry wait began (here: while an
    extension's agent_end handler runs) must cancel the retry, not be forgotten."""
    folder = project / ".pi" / "extensions"
    folder.mkdir(parents=True)
    (folder / "slow.py").write_text(SLOW_AGENT_END)
    session, provider, _ = make_session([{"error": {"status": 503}}, {"text": "never"}], load_extensions=True)
    aborts: list[asyncio.Future[Any]] = []

    def on_event(event: dict[str, Any]) -> None:
        if event["type"] == "turn_end" and event["message"].get("stopReason") == "error" and not aborts:
            aborts.append(asyncio.ensure_future(session.abort()))

    session.subscribe(on_event)
    await asyncio.wait_for(session.prompt("hi"), 5)
    await asyncio.gather(*aborts)
    assert len(provider.requests) == 1
    assert not session.is_streaming


async def test_silent_overflow_compacts_without_raising_from_prompt(make_session) -> None:
    """A ``stop`` reply whose input exceeded the window is an overflow (§7.6): compaction runs
    and pi's continue() finds an assistant last, which pi swallows. prompt() must not raise
    ``Cannot continue from message role: assistant`` after a successful compaction."""
    from pi_tui.core.provider import ModelInfo
    from pi_tui.resources.settings import SettingsManager

    small = ModelInfo(provider="fake", id="fake-model", context_window=8192, max_tokens=1000)
    settings = SettingsManager.in_memory({"compaction": {"reserveTokens": 2000, "keepRecentTokens": 1000}})
    turns = [
        {"text": "first answer", "usage": {"prompt_tokens": 1500, "completion_tokens": 10}},
        {"text": "middle answer", "usage": {"prompt_tokens": 3000, "completion_tokens": 10}},
        {"text": "too big", "usage": {"prompt_tokens": 9000, "completion_tokens": 10}},
        {"text": "## Goal\nSUMMARY", "when": {"system_contains": "summarize conversations"}},
        {"text": "unexpected extra call"},
    ]
    session, provider, events = make_session(turns, model=small, settings=settings)
    await session.prompt("first " + "f" * 6000)
    await session.prompt("middle " + "m" * 6000)
    await session.prompt("second question")
    end = next(e for e in events if e["type"] == "compaction_end")
    assert end["reason"] == "overflow" and end["result"] is not None, end.get("errorMessage")
    assert not session.is_streaming
    assert session.messages[-1]["role"] == "assistant"
    assert len(provider.requests) == 4  # three answers and the summary; no continue() call


class _SlowTool:
    name = "slow"
    label = "slow"
    description = "Sleeps"
    prompt_snippet = None
    prompt_guidelines = ()
    execution_mode = "parallel"
    parameters: ClassVar[dict[str, Any]] = {"type": "object", "properties": {"s": {"type": "number"}}}

    async def execute(self, call_id: str, args: dict[str, Any], ctx: Any) -> Any:
        from pi_tui.core.tool import text_result

        await asyncio.sleep(float(args.get("s", 0)))
        return text_result("slept")


async def test_bash_run_while_streaming_stays_in_its_session_after_new_session(make_session) -> None:
    """A ``!cmd`` held back during a run belongs to that session: /new must not carry it into
    the next session's history and file."""
    from tests.session.conftest import entries_of

    turns = [{"tool_calls": [{"name": "slow", "arguments": {"s": 5}}]}, {"text": "fresh answer"}]
    session, provider, _ = make_session(turns, tools=[_SlowTool()])
    run = asyncio.ensure_future(session.prompt("go"))
    for _ in range(200):
        if session.is_streaming and session.messages and session.messages[-1].get("role") == "assistant":
            break
        await asyncio.sleep(0.01)
    await session.run_user_bash("echo held-back")
    old_file = session.session_manager.session_file
    await session.new_session()
    await run
    await session.prompt("in the new session")
    new_roles = [m["role"] for m in session.messages]
    assert "bashExecution" not in new_roles
    assert not any(e.get("message", {}).get("role") == "bashExecution" for e in entries_of(session))
    assert "bashExecution" not in [m["role"] for m in provider.requests[-1].messages]
    assert old_file is not None and "held-back" in old_file.read_text()


class _PathDetailsTool(_SlowTool):
    """A tool (think: an extension written in Python) whose details hold a ``Path``."""

    name = "where"

    async def execute(self, call_id: str, args: dict[str, Any], ctx: Any) -> Any:
        from pi_tui.core.tool import ToolResult

        return ToolResult(content=[{"type": "text", "text": "here"}], details={"path": Path("/tmp/x"), "tags": {"a"}})


async def test_a_result_with_non_json_details_does_not_stop_the_file_being_written(make_session) -> None:
    """One entry that ``json`` cannot encode must not raise out of the run nor leave every
    later entry unwritten (it stayed pending, so each flush failed again)."""
    from tests.session.conftest import entries_of

    turns = [{"tool_calls": [{"name": "where", "arguments": {}}]}, {"text": "done"}]
    session, _, _ = make_session(turns, tools=[_PathDetailsTool()])
    await session.prompt("where?")
    session.set_session_name("later entry")
    entries = entries_of(session)
    stored = [e["message"] for e in entries if e["type"] == "message"]
    assert [m["role"] for m in stored] == ["user", "assistant", "toolResult", "assistant"]
    assert stored[2]["details"] == {"path": "/tmp/x", "tags": ["a"]}
    assert stored[-1]["content"][0]["text"] == "done"
    assert entries[-1]["type"] == "session_info" and entries[-1]["name"] == "later entry"


async def test_abort_during_the_pipeline_summary_stops_it_at_once(make_session) -> None:
    """Esc while the pipeline strategy's summary call runs (inside the run, between two model
    calls) must cancel that call, not wait for it to finish and record its compaction."""
    from pi_tui.core.provider import ModelInfo
    from pi_tui.resources.settings import SettingsManager

    small = ModelInfo(provider="fake", id="fake-model", context_window=8192, max_tokens=1000)
    settings = SettingsManager.in_memory({
        "compaction": {"reserveTokens": 2000, "keepRecentTokens": 1000},
        "context": {"strategy": "pipeline", "pipeline": {"summaryThresholdBytes": 6000}},
    })
    turns = [
        {"text": "one done"},
        {"text": "{}", "delay_ms": 3000, "when": {"system_contains": "condense the history"}},
        {"text": "two done"},
    ]
    session, _, _ = make_session(turns, model=small, settings=settings)
    await session.prompt("one " + "o" * 6000)
    run = asyncio.ensure_future(session.prompt("two " + "t" * 4000))
    for _ in range(200):
        if session.is_compacting:
            break
        await asyncio.sleep(0.01)
    assert session.is_compacting
    started = asyncio.get_running_loop().time()
    await asyncio.wait_for(session.abort(), 5)
    await asyncio.wait_for(run, 5)
    assert asyncio.get_running_loop().time() - started < 1.0
    assert not session.is_streaming and not session.is_compacting
    assert session.messages[-1].get("stopReason") == "aborted"
    assert "compaction" not in [e["type"] for e in session.session_manager.get_branch()]


async def test_prompt_sent_during_overflow_recovery_does_not_break_the_recovering_run(make_session) -> None:
    """Run A overflows and compacts (a slow summary, the lock is free meanwhile); prompt B, sent
    then, runs first on the compacted context. A's continue() must then not fail with
    ``Cannot continue from message role: assistant``."""
    from pi_tui.core.provider import ModelInfo
    from pi_tui.resources.settings import SettingsManager

    small = ModelInfo(provider="fake", id="fake-model", context_window=8192, max_tokens=1000)
    settings = SettingsManager.in_memory({"compaction": {"reserveTokens": 2000, "keepRecentTokens": 1000}})
    turns = [
        {"text": "first answer", "usage": {"prompt_tokens": 1500, "completion_tokens": 10}},
        {"text": "middle answer", "usage": {"prompt_tokens": 3000, "completion_tokens": 10}},
        {"error": {"status": 400, "code": "context_length_exceeded"}, "when": {"last_user_contains": "second"}},
        {"text": "## Goal\nSUMMARY", "delay_ms": 300, "when": {"system_contains": "summarize conversations"}},
        {"text": "answer to B", "when": {"last_user_contains": "prompt B"}},
        {"text": "answer to A"},
    ]
    session, _, events = make_session(turns, model=small, settings=settings)
    await session.prompt("first " + "f" * 6000)
    await session.prompt("middle " + "m" * 6000)
    run_a = asyncio.ensure_future(session.prompt("second question"))
    for _ in range(300):
        if any(e["type"] == "compaction_start" for e in events):
            break
        await asyncio.sleep(0.01)
    await asyncio.wait_for(session.prompt("prompt B"), 5)
    await asyncio.wait_for(run_a, 5)  # raised PiError before the fix
    assert not session.is_streaming
    texts = [m["content"][0]["text"] for m in session.messages if m["role"] == "assistant" and m["content"]]
    assert "answer to B" in texts


ABORTING_GATE = '''
def register(pi):
    @pi.on("tool_call")
    async def gate(event, ctx):
        await ctx.abort()
        return {"block": True, "reason": "stopped by policy"}
'''


async def test_extension_awaiting_ctx_abort_inside_a_run_hook_does_not_hang(make_session, project: Path) -> None:
    """``await ctx.abort()`` (docs/extensions.md) from a hook the run itself awaits waited for
    the run to become idle: a deadlock until the 60 s handler timeout."""
    folder = project / ".pi" / "extensions"
    folder.mkdir(parents=True)
    (folder / "gate.py").write_text(ABORTING_GATE)
    turns = [{"tool_calls": [{"name": "read", "arguments": {"path": "x"}}]}, {"text": "never"}]
    session, provider, _ = make_session(turns, load_extensions=True)
    await asyncio.wait_for(session.prompt("go"), 5)
    assert [(m["role"], m.get("stopReason")) for m in session.messages][-1] == ("assistant", "aborted")
    assert len(provider.requests) == 1
    assert not session.is_streaming


COMPACTING_HOOK = '''
def register(pi):
    state = {"done": False}

    @pi.on("turn_end")
    async def compact_when_asked(event, ctx):
        message = event["message"]
        if not state["done"] and any(b.get("text") == "please compact" for b in message["content"]):
            state["done"] = True
            await ctx.compact()
'''


async def test_extension_awaiting_ctx_compact_inside_a_run_does_not_deadlock(make_session, project: Path) -> None:
    """``await ctx.compact()`` from a run hook (pi's trigger-compact pattern) waited for the
    session lock its own run holds: a deadlock until the handler timeout, and no compaction."""
    from pi_tui.core.provider import ModelInfo
    from pi_tui.resources.settings import SettingsManager

    folder = project / ".pi" / "extensions"
    folder.mkdir(parents=True)
    (folder / "compact_hook.py").write_text(COMPACTING_HOOK)
    small = ModelInfo(provider="fake", id="fake-model", context_window=8192, max_tokens=1000)
    settings = SettingsManager.in_memory({"compaction": {"reserveTokens": 2000, "keepRecentTokens": 1000}})
    turns = [
        {"text": "first answer", "usage": {"prompt_tokens": 1500, "completion_tokens": 10}},
        {"text": "please compact", "usage": {"prompt_tokens": 3000, "completion_tokens": 10}},
        {"text": "## Goal\nSUMMARY", "when": {"system_contains": "summarize conversations"}},
    ]
    session, _, _ = make_session(turns, model=small, settings=settings, load_extensions=True)
    await session.prompt("first " + "f" * 6000)
    await asyncio.wait_for(session.prompt("middle " + "m" * 6000), 5)
    for _ in range(200):
        if not session.is_compacting and "compaction" in [e["type"] for e in session.session_manager.get_branch()]:
            break
        await asyncio.sleep(0.01)
    assert "compaction" in [e["type"] for e in session.session_manager.get_branch()]
    assert session.extensions is not None and session.extensions.errors == []


ABORT_ON_COMPACT = '''
def register(pi):
    @pi.on("session_compact")
    async def stop_here(event, ctx):
        await ctx.abort()  # stands for Esc pressed while the overflow compaction finishes
'''


async def test_abort_as_the_overflow_compaction_finishes_skips_the_continue(make_session, project: Path) -> None:
    from pi_tui.core.provider import ModelInfo
    from pi_tui.resources.settings import SettingsManager

    folder = project / ".pi" / "extensions"
    folder.mkdir(parents=True)
    (folder / "stop.py").write_text(ABORT_ON_COMPACT)
    small = ModelInfo(provider="fake", id="fake-model", context_window=8192, max_tokens=1000)
    settings = SettingsManager.in_memory({"compaction": {"reserveTokens": 2000, "keepRecentTokens": 1000}})
    turns = [
        {"text": "first answer", "usage": {"prompt_tokens": 1500, "completion_tokens": 10}},
        {"text": "middle answer", "usage": {"prompt_tokens": 3000, "completion_tokens": 10}},
        {"error": {"status": 400, "code": "context_length_exceeded"}, "when": {"last_user_contains": "second"}},
        {"text": "## Goal\nSUMMARY", "when": {"system_contains": "summarize conversations"}},
        {"text": "should not be asked"},
    ]
    session, provider, _ = make_session(turns, model=small, settings=settings, load_extensions=True)
    await session.prompt("first " + "f" * 6000)
    await session.prompt("middle " + "m" * 6000)
    await asyncio.wait_for(session.prompt("second question"), 5)
    assert "compaction" in [e["type"] for e in session.session_manager.get_branch()]
    assert len(provider.requests) == 4  # no continue() after the abort


async def test_context_usage_is_unknown_right_after_a_compaction(make_session) -> None:
    """§2.2 getContextUsage: with a compaction on the branch and no good assistant reply after it,
    the usage is unknown (``{tokens: null, contextWindow, percent: null}``, not None), not the
    pre-compaction usage of a kept message."""
    from pi_tui.core.provider import ModelInfo
    from pi_tui.resources.settings import SettingsManager

    small = ModelInfo(provider="fake", id="fake-model", context_window=8192, max_tokens=1000)
    settings = SettingsManager.in_memory({"compaction": {"reserveTokens": 2000, "keepRecentTokens": 1000}})
    turns = [
        {"text": "answer one", "usage": {"prompt_tokens": 1000, "completion_tokens": 10}},
        {"text": "answer two", "usage": {"prompt_tokens": 6500, "completion_tokens": 10}},
        {"text": "## Goal\nSUMMARY", "when": {"system_contains": "summarize conversations"}},
        {"text": "answer three", "usage": {"prompt_tokens": 1200, "completion_tokens": 10}},
    ]
    session, _, _ = make_session(turns, model=small, settings=settings)
    await session.prompt("one " + "o" * 6000)
    await session.prompt("two " + "t" * 6000)
    assert "compaction" in [e["type"] for e in session.session_manager.get_branch()]
    unknown = session.get_context_usage()
    assert unknown is not None and (unknown.tokens, unknown.context_window, unknown.percent) == (None, 8192, None)
    await session.prompt("three")
    usage = session.get_context_usage()
    assert usage is not None and usage.tokens == 1210
