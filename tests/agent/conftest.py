"""Helpers for the agent-loop tests: a model, tools and an event recorder."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from pi_tui.agent.types import AgentContext, AgentLoopConfig
from pi_tui.core.messages import AgentMessage, LlmMessage
from pi_tui.core.provider import ModelInfo
from pi_tui.core.tool import FunctionTool, ToolContext, ToolResult, text_result
from pi_tui.testing.scripted import ScriptedProvider

MODEL = ModelInfo(provider="fake", id="fake-model", context_window=8192)


def plain_convert(messages: list[AgentMessage]) -> list[LlmMessage]:
    return [m for m in messages if m["role"] in ("user", "assistant", "toolResult")]  # type: ignore[misc]


class Recorder:
    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []

    def __call__(self, event: dict[str, Any]) -> None:
        self.events.append(event)

    def types(self, *, skip_updates: bool = True) -> list[str]:
        return [e["type"] for e in self.events if not (skip_updates and e["type"] == "message_update")]

    def tool_events(self) -> list[tuple[str, str]]:
        out = []
        for e in self.events:
            if e["type"].startswith("tool_execution") and e["type"] != "tool_execution_update":
                out.append((e["type"], e["toolCallId"]))
            elif e["type"] in ("message_start", "message_end") and e["message"]["role"] == "toolResult":
                out.append((e["type"], e["message"]["toolCallId"]))
        return out


def echo_tool(name: str = "echo", *, delay: float = 0.0, mode: str = "parallel", log: list[str] | None = None) -> FunctionTool:
    async def run(call_id: str, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        if log is not None:
            log.append(f"start {call_id}")
        await asyncio.sleep(delay)
        if log is not None:
            log.append(f"end {call_id}")
        return text_result(f"{name}: {args.get('text')}", details={"n": 1})

    return FunctionTool(
        name=name,
        description=f"{name} tool",
        parameters={"type": "object", "required": ["text"], "properties": {"text": {"type": "string"}}},
        run=run,
        execution_mode=mode,  # type: ignore[arg-type]
    )


def make_config(provider: ScriptedProvider, **kwargs: Any) -> AgentLoopConfig:
    return AgentLoopConfig(model=MODEL, provider=provider, convert_to_llm=plain_convert, **kwargs)


def make_context(*tools: FunctionTool, system_prompt: str = "sys") -> AgentContext:
    return AgentContext(system_prompt=system_prompt, messages=[], tools=list(tools))


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()
