"""A tool call whose arguments did not finish streaming never runs, even when the provider
reports the reply as finished (a proxy that closes cleanly, a careless extension provider)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from pi_tui.agent.loop import run_agent_loop
from pi_tui.core.messages import user_message
from pi_tui.core.provider import AssistantMessageEvent, CompletionRequest
from pi_tui.core.tool import FunctionTool, ToolContext, ToolResult, text_result
from pi_tui.providers.stream_assembler import StreamAssembler
from tests.agent.conftest import MODEL, Recorder, make_config, make_context


def _call(fragment: str, *, index: int = 0, call_id: str | None = "c1", name: str | None = "bash") -> dict[str, Any]:
    call: dict[str, Any] = {"index": index, "function": {"arguments": fragment}}
    if call_id:
        call["id"], call["function"]["name"] = call_id, name
    return {"id": "r1", "choices": [{"index": 0, "delta": {"tool_calls": [call]}, "finish_reason": None}]}


class ReportsDoneAnyway:
    """Streams what it is given, then says ``done`` (stopReason toolUse), like a client that
    takes a clean end of the body for the end of the answer."""

    def __init__(self, *replies: list[dict[str, Any]], drop_end_events: bool = False) -> None:
        self.replies = list(replies)
        self.drop_end_events = drop_end_events
        self.calls = 0

    async def stream(self, request: CompletionRequest) -> AsyncIterator[AssistantMessageEvent]:
        self.calls += 1
        chunks = self.replies.pop(0) if self.replies else [
            {"id": "r2", "choices": [{"index": 0, "delta": {"content": "ok"}, "finish_reason": "stop"}]}]
        assembler = StreamAssembler(request.model)
        yield assembler.start()
        for chunk in chunks:
            for event in assembler.feed(chunk):
                yield event
        for event in assembler.finish():
            if self.drop_end_events and event["type"] == "toolcall_end":
                continue
            yield event


def _bash(ran: list[dict[str, Any]]) -> FunctionTool:
    async def run(call_id: str, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        ran.append(args)
        return text_result("ran")

    return FunctionTool(name="bash", description="run", run=run,
                        parameters={"type": "object", "properties": {"command": {"type": "string"}}})


@pytest.mark.parametrize("fragments", [
    ['{"command": "touch ran && rm', "-rf build"],  # inside a string
    ['{"command": "echo hi", "timeout": 1'],  # inside the object
    ['{"command": ["a", "b"'],  # inside an array
])
async def test_arguments_cut_short_are_refused_although_the_provider_said_done(recorder: Recorder, fragments: list[str]) -> None:
    ran: list[dict[str, Any]] = []
    chunks = [_call(fragments[0])] + [_call(f, call_id=None) for f in fragments[1:]]
    chunks.append({"id": "r1", "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})
    provider = ReportsDoneAnyway(chunks)
    new = await run_agent_loop([user_message("go")], make_context(_bash(ran)), make_config(provider), recorder)
    assert ran == [] and provider.calls == 1
    reply = new[-1]
    assert reply["stopReason"] == "error" and reply["errorKind"] == "transient"
    assert reply["errorMessage"] == "The stream ended before the arguments of tool call 'bash' were complete; not run"
    assert not any(e["type"].startswith("tool_execution") for e in recorder.events)
    assert [e["type"] for e in recorder.events][-2:] == ["turn_end", "agent_end"]


async def test_a_tool_call_that_never_ended_is_refused(recorder: Recorder) -> None:
    ran: list[dict[str, Any]] = []
    provider = ReportsDoneAnyway([_call('{"command": "ls"}')], drop_end_events=True)
    new = await run_agent_loop([user_message("go")], make_context(_bash(ran)), make_config(provider), recorder)
    assert ran == [] and new[-1]["stopReason"] == "error" and "'bash'" in new[-1]["errorMessage"]


async def test_finished_arguments_run_including_repaired_ones_and_calls_without_arguments(recorder: Recorder) -> None:
    ran: list[dict[str, Any]] = []
    chunks = [
        _call('{"command": "printf \'a\nb\'"}'),  # a raw newline inside the string: repaired, complete
        _call("", index=1, call_id="c2"),  # no arguments at all
        {"id": "r1", "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
    ]
    provider = ReportsDoneAnyway(chunks)
    new = await run_agent_loop([user_message("go")], make_context(_bash(ran)), make_config(provider), recorder)
    assert ran == [{"command": "printf 'a\nb'"}, {}]
    assert new[-1]["content"] == [{"type": "text", "text": "ok"}] and MODEL.id == new[-1]["model"]
