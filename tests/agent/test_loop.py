"""The agent loop end to end on the scripted provider: event sequences and the history."""

from __future__ import annotations

import asyncio
from typing import Any

from pi_tui.agent.abort import AbortSignal
from pi_tui.agent.agent import Agent
from pi_tui.agent.loop import run_agent_loop
from pi_tui.agent.types import PreparedRequest, PrepareRequestResult, RequestContext
from pi_tui.core.messages import AgentMessage, user_message
from pi_tui.core.tool import FunctionTool, ToolContext, ToolResult
from pi_tui.testing.scripted import ScriptedProvider
from tests.agent.conftest import Recorder, echo_tool, make_config, make_context


async def test_text_reply_event_sequence(recorder: Recorder) -> None:
    provider = ScriptedProvider([{"text": "hello there, friend"}])
    context = make_context()
    new = await run_agent_loop([user_message("hi")], context, make_config(provider), recorder)
    assert recorder.types() == [
        "agent_start", "turn_start", "message_start", "message_end",
        "message_start", "message_end", "turn_end", "agent_end",
    ]
    updates = [e for e in recorder.events if e["type"] == "message_update"]
    assert [u["assistantMessageEvent"]["type"] for u in updates][:2] == ["text_start", "text_delta"]
    assert [m["role"] for m in new] == ["user", "assistant"]
    assert context.messages == new
    assert new[1]["content"] == [{"type": "text", "text": "hello there, friend"}]
    assert recorder.events[-1]["messages"] == new
    request = provider.requests[0]
    assert request.system_prompt == "sys" and request.reasoning is None


async def test_tool_round_trip_with_split_arguments(recorder: Recorder) -> None:
    provider = ScriptedProvider([
        {"tool_calls": [{"id": "c1", "name": "echo", "arguments": {"text": "split me please"}, "chunks": 4}]},
        {"text": "done"},
    ])
    context = make_context(echo_tool())
    new = await run_agent_loop([user_message("go")], context, make_config(provider), recorder)
    assert [m["role"] for m in new] == ["user", "assistant", "toolResult", "assistant"]
    call = new[1]["content"][0]
    assert call == {"type": "toolCall", "id": "c1", "name": "echo", "arguments": {"text": "split me please"}}
    deltas = [e for e in recorder.events if e["type"] == "message_update"
              and e["assistantMessageEvent"]["type"] == "toolcall_delta"]
    assert len(deltas) == 4
    result = new[2]
    assert result["toolCallId"] == "c1" and result["isError"] is False
    assert result["content"] == [{"type": "text", "text": "echo: split me please"}]
    assert result["details"] == {"n": 1}
    assert [m["role"] for m in provider.requests[1].messages] == ["user", "assistant", "toolResult"]
    assert recorder.types() == [
        "agent_start", "turn_start", "message_start", "message_end", "message_start", "message_end",
        "tool_execution_start", "tool_execution_end", "message_start", "message_end", "turn_end",
        "turn_start", "message_start", "message_end", "turn_end", "agent_end",
    ]
    turn_end = next(e for e in recorder.events if e["type"] == "turn_end")
    assert turn_end["toolResults"] == [result]


async def test_parallel_tools_end_in_completion_order_and_results_in_source_order(recorder: Recorder) -> None:
    log: list[str] = []
    provider = ScriptedProvider([
        {"tool_calls": [
            {"id": "slow", "name": "slow", "arguments": {"text": "a"}},
            {"id": "fast", "name": "fast", "arguments": {"text": "b"}},
        ]},
        {"text": "ok"},
    ])
    context = make_context(echo_tool("slow", delay=0.05, log=log), echo_tool("fast", delay=0.0, log=log))
    await run_agent_loop([user_message("go")], context, make_config(provider), recorder)
    assert recorder.tool_events() == [
        ("tool_execution_start", "slow"), ("tool_execution_start", "fast"),
        ("tool_execution_end", "fast"), ("tool_execution_end", "slow"),
        ("message_start", "slow"), ("message_end", "slow"),
        ("message_start", "fast"), ("message_end", "fast"),
    ]
    assert log[:2] == ["start slow", "start fast"]  # they overlapped


async def test_sequential_by_setting_and_by_tool_mode(recorder: Recorder) -> None:
    for kwargs, tools in (
        ({"tool_execution": "sequential"}, (echo_tool("slow", delay=0.02), echo_tool("fast"))),
        ({}, (echo_tool("slow", delay=0.02, mode="sequential"), echo_tool("fast"))),
    ):
        rec = Recorder()
        provider = ScriptedProvider([
            {"tool_calls": [
                {"id": "slow", "name": "slow", "arguments": {"text": "a"}},
                {"id": "fast", "name": "fast", "arguments": {"text": "b"}},
            ]},
            {"text": "ok"},
        ])
        await run_agent_loop([user_message("go")], make_context(*tools), make_config(provider, **kwargs), rec)
        assert rec.tool_events() == [
            ("tool_execution_start", "slow"), ("tool_execution_end", "slow"),
            ("message_start", "slow"), ("message_end", "slow"),
            ("tool_execution_start", "fast"), ("tool_execution_end", "fast"),
            ("message_start", "fast"), ("message_end", "fast"),
        ]


async def test_schema_invalid_and_unknown_tool_answer_with_errors(recorder: Recorder) -> None:
    provider = ScriptedProvider([
        {"tool_calls": [
            {"id": "bad", "name": "echo", "arguments": {}},
            {"id": "nope", "name": "missing", "arguments": {"x": 1}},
            {"id": "coerced", "name": "echo", "arguments": {"text": 5}},
        ]},
        {"text": "ok"},
    ])
    context = make_context(echo_tool())
    new = await run_agent_loop([user_message("go")], context, make_config(provider), recorder)
    results = [m for m in new if m["role"] == "toolResult"]
    assert results[0]["isError"] is True
    assert results[0]["content"][0]["text"] == (
        'Validation failed for tool "echo":\n  - text: must have required properties text\n\n'
        "Received arguments:\n{}"
    )
    assert results[1]["content"][0]["text"] == "Tool missing not found"
    assert results[2]["isError"] is False and results[2]["content"][0]["text"] == "echo: 5"
    # immediate failures end right away, before the runnable call runs
    assert recorder.tool_events()[:5] == [
        ("tool_execution_start", "bad"), ("tool_execution_end", "bad"),
        ("tool_execution_start", "nope"), ("tool_execution_end", "nope"),
        ("tool_execution_start", "coerced"),
    ]


async def test_before_hook_blocks_and_after_hook_applies_to_errors(recorder: Recorder) -> None:
    from pi_tui.agent.types import AfterToolCallResult, BeforeToolCallResult

    async def failing(call_id: str, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        raise RuntimeError("disk on fire")

    fail_tool = FunctionTool(name="fail", description="d", parameters={"type": "object"}, run=failing)

    async def before(info: Any) -> BeforeToolCallResult | None:
        return BeforeToolCallResult(block=True) if info.tool_call["name"] == "echo" else None

    seen: list[bool] = []

    async def after(info: Any, result: ToolResult) -> AfterToolCallResult:
        seen.append(result.is_error)
        return AfterToolCallResult(content=[{"type": "text", "text": "recovered"}], is_error=False)

    provider = ScriptedProvider([
        {"tool_calls": [{"id": "a", "name": "echo", "arguments": {"text": "x"}},
                        {"id": "b", "name": "fail", "arguments": {}}]},
        {"text": "ok"},
    ])
    config = make_config(provider, before_tool_call=before, after_tool_call=after)
    new = await run_agent_loop([user_message("go")], make_context(echo_tool(), fail_tool), config, recorder)
    results = [m for m in new if m["role"] == "toolResult"]
    assert results[0]["content"][0]["text"] == "Tool execution was blocked" and results[0]["isError"]
    assert seen == [True]
    assert results[1]["content"] == [{"type": "text", "text": "recovered"}] and results[1]["isError"] is False


async def test_error_reply_stops_without_running_tools(recorder: Recorder) -> None:
    provider = ScriptedProvider([{"error": {"status": 503}}])
    new = await run_agent_loop([user_message("go")], make_context(echo_tool()), make_config(provider), recorder)
    assert new[-1]["stopReason"] == "error"
    assert new[-1]["errorMessage"] == "503 Service unavailable"
    assert new[-1]["errorKind"] == "transient"
    assert recorder.types()[-4:] == ["message_start", "message_end", "turn_end", "agent_end"]


async def test_terminate_skips_the_next_model_call(recorder: Recorder) -> None:
    async def stop(call_id: str, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return ToolResult(content=[{"type": "text", "text": "bye"}], terminate=True)

    tool = FunctionTool(name="stop", description="d", parameters={"type": "object"}, run=stop)
    provider = ScriptedProvider([{"tool_calls": [{"id": "s", "name": "stop", "arguments": {}}]}, {"text": "never"}])
    new = await run_agent_loop([user_message("go")], make_context(tool), make_config(provider), recorder)
    assert [m["role"] for m in new] == ["user", "assistant", "toolResult"]
    assert len(provider.requests) == 1


async def test_steering_mid_tools_does_not_interrupt_the_batch() -> None:
    holder: dict[str, Agent] = {}

    async def steer_then_echo(call_id: str, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        if call_id == "w1":
            holder["agent"].steering.push(user_message("change of plan"))
        await asyncio.sleep(0.01)
        return ToolResult(content=[{"type": "text", "text": "did " + call_id}])

    tool = FunctionTool(name="work", description="d", parameters={"type": "object"}, run=steer_then_echo)
    provider = ScriptedProvider([
        {"tool_calls": [{"id": "w1", "name": "work", "arguments": {}}, {"id": "w2", "name": "work", "arguments": {}}]},
        {"text": "adjusted", "when": {"last_user_contains": "change of plan"}},
    ])
    rec = Recorder()
    agent = Agent(make_context(tool), lambda: make_config(provider))
    holder["agent"] = agent
    agent.subscribe(rec)
    new = await agent.prompt([user_message("go")])
    roles = [m["role"] for m in new]
    assert roles == ["user", "assistant", "toolResult", "toolResult", "user", "assistant"]
    assert all(not m["isError"] for m in new if m["role"] == "toolResult")
    assert new[-1]["content"][0]["text"] == "adjusted"
    assert len(provider.requests) == 2
    types = rec.types()
    assert types.index("turn_end") < types.index("turn_start", 2)


async def test_follow_up_is_delivered_when_the_agent_would_stop() -> None:
    provider = ScriptedProvider([{"text": "first"}, {"text": "second", "when": {"last_user_contains": "later"}}])
    agent = Agent(make_context(), lambda: make_config(provider))
    agent.follow_ups.push(user_message("later please"))
    rec = Recorder()
    agent.subscribe(rec)
    new = await agent.prompt([user_message("now")])
    assert [m["role"] for m in new] == ["user", "assistant", "user", "assistant"]
    assert new[-1]["content"][0]["text"] == "second"
    assert rec.types().count("agent_end") == 1 and rec.types().count("turn_start") == 2


async def test_abort_during_stream_records_the_partial_reply(recorder: Recorder) -> None:
    provider = ScriptedProvider([{"text": "a long answer that streams slowly", "chunk_size": 4, "chunk_delay_ms": 20}])
    signal = AbortSignal()

    def on_event(event: dict[str, Any]) -> None:
        recorder(event)
        if event["type"] == "message_update" and event["assistantMessageEvent"]["type"] == "text_delta":
            signal.abort()

    context = make_context()
    new = await run_agent_loop([user_message("go")], context, make_config(provider), on_event, signal)
    last = new[-1]
    # pi 0.73.1's providers: the partial as it stood, errorMessage (no dot) added last.
    assert last["stopReason"] == "aborted" and last["errorMessage"] == "Request was aborted"
    assert list(last) == ["role", "content", "api", "provider", "model", "usage", "stopReason", "timestamp",
                          "responseId", "errorMessage"]
    assert last["responseId"]
    assert last["content"][0]["text"].startswith("a lo")
    assert context.messages[-1] is last or context.messages[-1] == last
    assert recorder.types()[-4:] == ["message_start", "message_end", "turn_end", "agent_end"]
    # The open text block is closed before message_end, as pi's providers do when a stream stops.
    updates = [e["assistantMessageEvent"] for e in recorder.events if e["type"] == "message_update"]
    assert updates[-1]["type"] == "text_end" and updates[-1]["content"] == last["content"][0]["text"]
    ends = [i for i, e in enumerate(recorder.events) if e["type"] == "message_end"]
    assert recorder.events[ends[-1] - 1]["assistantMessageEvent"]["type"] == "text_end"


async def test_abort_before_the_reply_streams_keeps_pis_dotted_text(recorder: Recorder) -> None:
    """No partial yet: pi reports its HTTP client's abort error, ``Request was aborted.``, with
    ``errorMessage`` after ``timestamp``."""
    provider = ScriptedProvider([{"text": "late", "delay_ms": 5000}])
    signal = AbortSignal()

    def on_event(event: dict[str, Any]) -> None:
        recorder(event)
        if event["type"] == "message_end" and event["message"]["role"] == "user":
            asyncio.get_running_loop().call_later(0.05, signal.abort)

    new = await asyncio.wait_for(run_agent_loop([user_message("go")], make_context(), make_config(provider),
                                                on_event, signal), 3)
    last = new[-1]
    assert last["stopReason"] == "aborted" and last["errorMessage"] == "Request was aborted."
    assert list(last)[-2:] == ["timestamp", "errorMessage"]
    assert not [e for e in recorder.events if e["type"] == "message_update"]


async def test_abort_during_tool_answers_every_call(recorder: Recorder) -> None:
    provider = ScriptedProvider([
        {"tool_calls": [{"id": "t1", "name": "slow", "arguments": {"text": "a"}},
                        {"id": "t2", "name": "echo", "arguments": {"text": "b"}}]},
        {"text": "never"},
    ])
    signal = AbortSignal()

    def on_event(event: dict[str, Any]) -> None:
        recorder(event)
        if event["type"] == "tool_execution_end" and event["toolCallId"] == "t2":
            signal.abort()

    context = make_context(echo_tool("slow", delay=5), echo_tool())
    new = await asyncio.wait_for(
        run_agent_loop([user_message("go")], context, make_config(provider), on_event, signal), 2
    )
    assert [m["role"] for m in new] == ["user", "assistant", "toolResult", "toolResult", "assistant"]
    assert new[2]["content"][0]["text"] == "Operation aborted" and new[2]["isError"]
    assert new[3]["isError"] is False
    assert new[-1]["stopReason"] == "aborted"
    assert len(provider.requests) == 1
    assert recorder.types()[-1] == "agent_end"


async def test_transform_context_and_prepare_request_shape_one_request_only() -> None:
    provider = ScriptedProvider([{"text": "one"}, {"text": "two"}])

    async def keep_last(messages: list[AgentMessage]) -> list[AgentMessage]:
        return messages[-1:]

    async def rebuild(request: PreparedRequest) -> PrepareRequestResult:
        extra = user_message("<state>x</state>")
        return PrepareRequestResult(context=RequestContext(
            system_prompt="rebuilt", messages=[*request.context.messages, extra], tools=[]))

    context = make_context(echo_tool())
    await run_agent_loop([user_message("a")], context, make_config(provider), lambda e: None)
    await run_agent_loop([user_message("b")], context,
                         make_config(provider, transform_context=keep_last, prepare_request=rebuild), lambda e: None)
    second = provider.requests[1]
    assert second.system_prompt == "rebuilt" and second.tools == []
    assert [m["content"][0]["text"] for m in second.messages] == ["b", "<state>x</state>"]
    assert len(context.messages) == 4  # the canonical history is untouched


async def test_finalize_message_replaces_what_is_recorded(recorder: Recorder) -> None:
    provider = ScriptedProvider([{"text": "raw"}])

    async def redact(message: AgentMessage) -> AgentMessage:
        if message["role"] == "assistant":
            return {**message, "content": [{"type": "text", "text": "redacted"}]}  # type: ignore[typeddict-item]
        return {"role": "custom", "customType": "x", "content": "", "display": False, "timestamp": 0}

    new = await run_agent_loop([user_message("go")], make_context(), make_config(provider, finalize_message=redact), recorder)
    assert new[0]["role"] == "user"  # a role change is refused
    assert new[1]["content"][0]["text"] == "redacted"
    ends = [e for e in recorder.events if e["type"] == "message_end"]
    assert ends[1]["message"]["content"][0]["text"] == "redacted"


async def test_tool_updates_come_before_the_end_event() -> None:
    async def chatty(call_id: str, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        ctx.on_update(ToolResult(content=[{"type": "text", "text": "partial"}]))
        ctx.on_update(ToolResult(content=[{"type": "text", "text": "more"}]))
        return ToolResult(content=[{"type": "text", "text": "done"}])

    tool = FunctionTool(name="chatty", description="d", parameters={"type": "object"}, run=chatty)
    provider = ScriptedProvider([{"tool_calls": [{"id": "c", "name": "chatty", "arguments": {}}]}, {"text": "ok"}])
    rec = Recorder()

    async def listener(event: dict[str, Any]) -> None:  # an async listener, as the Agent's are
        rec(event)

    agent = Agent(make_context(tool), lambda: make_config(provider))
    agent.subscribe(listener)
    await agent.prompt([user_message("go")])
    kinds = [e["type"] for e in rec.events if e["type"].startswith("tool_execution")]
    assert kinds == ["tool_execution_start", "tool_execution_update", "tool_execution_update", "tool_execution_end"]
    end = next(e for e in rec.events if e["type"] == "tool_execution_end")
    assert end["result"] == {"content": [{"type": "text", "text": "done"}]}  # no details key, as pi


async def test_a_broken_hook_ends_the_run_with_pis_failure_shape(recorder: Recorder) -> None:
    """A failure outside the model call (here the context hook) closes the run with pi's
    ``handleRunFailure`` message: one empty text block, ``errorMessage`` before ``timestamp``."""

    async def broken(messages: list[Any]) -> list[Any]:
        raise RuntimeError("hook broke")

    config = make_config(ScriptedProvider([{"text": "never"}]), transform_context=broken)
    new = await run_agent_loop([user_message("go")], make_context(), config, recorder)
    last = new[-1]
    assert last["stopReason"] == "error" and last["errorMessage"] == "hook broke"
    assert last["content"] == [{"type": "text", "text": ""}]
    assert list(last)[-2:] == ["errorMessage", "timestamp"]
    assert recorder.types()[-1] == "agent_end"
