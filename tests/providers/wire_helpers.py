"""Shared by the wire tests of each provider: one call to the final message, a tool result."""

from __future__ import annotations

from typing import Any

from pi_tui.core.provider import CompletionRequest, Provider, ToolSpec

BASH = ToolSpec(name="bash", description="Run a command",
                parameters={"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]})


async def final_message(provider: Provider, request: CompletionRequest) -> dict[str, Any]:
    """Stream one request to its end: the ``done`` message or the ``error`` one."""
    events = [event async for event in provider.stream(request)]
    last = events[-1]
    final: dict[str, Any] = last["message"] if last["type"] == "done" else last["error"]  # type: ignore[typeddict-item]
    return final


def tool_result(call_id: str, text: str, *, error: bool = False) -> dict[str, Any]:
    return {"role": "toolResult", "toolCallId": call_id, "toolName": "bash", "content": [{"type": "text", "text": text}],
            "isError": error, "timestamp": 3}
