"""Adapters from the runner's event rules to ``AgentLoopConfig``'s hook signatures.

The session plugs these in when extensions are loaded::

    hooks = AgentHooks(runner)
    AgentLoopConfig(..., transform_context=hooks.transform_context,
                    before_tool_call=hooks.before_tool_call, after_tool_call=hooks.after_tool_call,
                    finalize_message=hooks.finalize_message, on_payload=hooks.on_payload)
"""

from __future__ import annotations

from typing import Any

from pi_tui.agent.types import AfterToolCallResult, BeforeToolCallResult, ToolCallInfo
from pi_tui.core.messages import AgentMessage
from pi_tui.core.tool import ToolResult
from pi_tui.extensions.runner import ExtensionRunner


class AgentHooks:
    def __init__(self, runner: ExtensionRunner) -> None:
        self.runner = runner

    async def transform_context(self, messages: list[AgentMessage]) -> list[AgentMessage]:
        """The ``context`` event (skipped cheaply when no extension listens)."""
        if not self.runner.has_handlers("context"):
            return messages
        return await self.runner.emit_context(messages)

    async def before_tool_call(self, info: ToolCallInfo) -> BeforeToolCallResult | None:
        call = info.tool_call
        return await self.runner.emit_tool_call(call["name"], call["id"], info.args)

    async def after_tool_call(self, info: ToolCallInfo, result: ToolResult) -> AfterToolCallResult | None:
        call = info.tool_call
        return await self.runner.emit_tool_result(
            call["name"], call["id"], info.args, list(result.content), result.details, result.is_error
        )

    async def finalize_message(self, message: AgentMessage) -> AgentMessage:
        if not self.runner.has_handlers("message_end"):
            return message
        return await self.runner.emit_message_end(message)

    def on_payload(self, payload: dict[str, Any]) -> dict[str, Any] | None:
        """``before_provider_request`` through the synchronous provider hook."""
        if not self.runner.has_handlers("before_provider_request"):
            return None
        return self.runner.before_provider_request_sync(payload)
