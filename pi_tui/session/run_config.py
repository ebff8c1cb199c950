"""Building the agent loop's configuration for one run: model, provider, and the hook chain.

Per model call (ARCHITECTURE.md): session projection → extension ``context`` handlers, then the
SDK's ``transform_context`` → the built-in reducers (compaction runner, pipeline strategy) →
``prepare_request`` → ``convert_to_llm`` → provider (``before_provider_request`` on the body).
Tool hooks chain the session's tool gates (permissions, ``hooks.py``), the extension
``tool_call``/``tool_result`` handlers and the SDK's ``before_tool_call``/``after_tool_call``;
every finished message passes the artifact step (tool results) and the extension ``message_end``
hook before it is recorded.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from pi_tui.agent.types import (
    AfterToolCallResult,
    AgentLoopConfig,
    BeforeToolCallResult,
    ToolCallInfo,
    TransformContext,
)
from pi_tui.core.context.convert import convert_to_llm
from pi_tui.core.messages import AgentMessage, JsonValue, LlmMessage, ToolCall, ToolResultMessage
from pi_tui.core.provider import CompletionRequest
from pi_tui.core.tool import ToolContext, ToolResult
from pi_tui.session.hooks import SessionHooks, gate_tool_call
from pi_tui.session.live_state import LiveState
from pi_tui.session.model_access import ModelAccess
from pi_tui.session.persistence import apply_artifacts_to_results

if TYPE_CHECKING:  # not imported at run time: a session without extensions never loads them (start-up)
    from pi_tui.extensions.agent_hooks import AgentHooks
    from pi_tui.extensions.runner import ExtensionRunner

Reducer = Callable[[list[AgentMessage], TransformContext | None], Awaitable[list[AgentMessage]] | list[AgentMessage]]
"""``(messages, transform)``: ``transform`` is the context transform the loop ran before it, for a
request the reducer rebuilds (``pipeline_runner``)."""


class RunConfig:
    def __init__(
        self, state: LiveState, models: ModelAccess, hooks: SessionHooks, *, extensions: ExtensionRunner | None,
        extension_hooks: AgentHooks | None, reducer: Reducer | None, emit: Callable[[dict[str, Any]], None],
        before_request: Reducer | None = None,
    ) -> None:
        self._state = state
        self._models = models
        self._hooks = hooks
        self._extensions = extensions
        self._extension_hooks = extension_hooks
        self._reducer = reducer
        """The compaction runner's request reducer (used under ``context.strategy = "pipeline"``)."""
        self._before_request = before_request
        """The runner's threshold check between a one-shot session's turns (``LiveState.one_shot``)."""
        self._emit = emit

    def loop_config(self) -> AgentLoopConfig:
        state = self._state
        model = self._models.require_model()
        execution = state.settings.get("toolExecution") if state.settings is not None else None
        ext = self._extension_hooks
        return AgentLoopConfig(
            model=model,
            provider=self._models.provider_for(model),
            convert_to_llm=self.convert_for_request,
            thinking_level=state.thinking_level,
            session_id=state.session_manager.session_id,
            thinking_budgets=self._thinking_budgets(),
            get_api_key=self._models.api_key_for,
            transform_context=self._transform_for_request if self._transforms_context() else None,
            reduce_messages=self._reduce_with(self._request_reducer()),
            prepare_request=self._hooks.prepare_request,
            before_tool_call=self._before_tool_call,
            after_tool_call=self._after_tool_call,
            finalize_message=self._finalize_message,
            transform_tool_results=self._tool_results_to_artifacts,
            on_payload=ext.on_payload if ext is not None else None,
            on_request=self._remember_request,
            tool_execution="sequential" if execution == "sequential" else "parallel",
            tool_context=self._tool_context,
        )

    def context_strategy(self) -> str:
        getter = getattr(self._state.settings, "context_strategy", None)
        return str(getter()) if callable(getter) else "pi"

    def convert_for_request(self, messages: list[AgentMessage]) -> list[LlmMessage]:
        if self._hooks.convert_to_llm is not None:
            return list(self._hooks.convert_to_llm(messages))
        block = False
        images = getattr(self._state.settings, "image_settings", None)
        if callable(images):
            block = bool(images().block_images)
        return convert_to_llm(messages, block_images=block)

    def _thinking_budgets(self) -> dict[str, int] | None:
        getter = getattr(self._state.settings, "thinking_budgets", None)
        budgets = getter() if callable(getter) else None
        return budgets if isinstance(budgets, dict) else None

    def _remember_request(self, request: CompletionRequest) -> None:
        self._state.last_request = request

    def _request_reducer(self) -> Reducer | None:
        if self.context_strategy() == "pipeline":
            return self._reducer
        return self._before_request if self._state.one_shot else None

    def _reduce_with(self, reducer: Reducer | None) -> Callable[[list[AgentMessage]], Awaitable[list[AgentMessage]]] | None:
        if reducer is None:
            return None

        async def reduce(messages: list[AgentMessage]) -> list[AgentMessage]:
            transform = self._transform_for_request if self._transforms_context() else None
            result = reducer(messages, transform)
            if inspect.isawaitable(result):
                result = await result
            return list(result)

        return reduce

    def _transforms_context(self) -> bool:
        """Does anything outside pi-tui see the context before the request? Only then does the
        loop hand out a deep copy (pi's structuredClone for ``context`` handlers; SDK hooks,
        ``convert_to_llm`` included, may edit what they get); otherwise the reducers get the
        history's own message objects, which the preparation cache recognises in O(1). Nothing of
        ours mutates them, and no request body shares them (tests/providers/
        test_encoders_leave_history_alone.py)."""
        has_handlers = self._extensions is not None and self._extensions.has_handlers("context")
        hooks = self._hooks
        return has_handlers or any(h is not None for h in (hooks.transform_context, hooks.prepare_request, hooks.convert_to_llm))

    async def _transform_for_request(self, messages: list[AgentMessage]) -> list[AgentMessage]:
        if self._extension_hooks is not None:
            messages = await self._extension_hooks.transform_context(messages)
        if self._hooks.transform_context is not None:
            messages = await self._hooks.transform_context(messages)
        return messages

    async def _before_tool_call(self, info: ToolCallInfo) -> BeforeToolCallResult | None:
        inner = inner_mcp_call(info)
        # The permission gate judges what runs: for ``mcp`` action=call, the server's tool by its
        # own name and arguments (asked once, not once for ``mcp`` and again for the tool).
        gated = await gate_tool_call(self._hooks.tool_gates, inner or info)
        if gated is not None:
            return gated
        if self._extension_hooks is not None:  # extensions see the call to ``mcp`` and the tool it runs
            for seen in (info, inner) if inner is not None else (info,):
                verdict = await self._extension_hooks.before_tool_call(seen)
                if verdict is not None and verdict.block:
                    return verdict
        if self._hooks.before_tool_call is not None:
            return await self._hooks.before_tool_call(info)
        return None

    async def _after_tool_call(self, info: ToolCallInfo, result: ToolResult) -> AfterToolCallResult | None:
        original = result
        if self._extension_hooks is not None:
            change = await self._extension_hooks.after_tool_call(info, result)
            result = change.applied_to(result) if change is not None else result
        if self._hooks.after_tool_call is not None:
            mine = await self._hooks.after_tool_call(info, result)
            result = mine.applied_to(result) if mine is not None else result
        if result is original:
            return None
        return AfterToolCallResult(content=result.content, details=result.details, replace_details=True,
                                   is_error=result.is_error)

    async def _tool_results_to_artifacts(
        self, messages: list[ToolResultMessage], recorded: list[ToolResultMessage]
    ) -> list[ToolResultMessage]:
        results, events = apply_artifacts_to_results(messages, artifact_dir=self._state.saved_artifact_dir(),
                                                     recorded=recorded,
                                                     strategy=self.context_strategy(), limits=self._artifact_limits())
        for event in events:
            self._emit(event)
        return results

    def _artifact_limits(self) -> Any:
        """``context.pipeline.artifactThresholdBytes`` / ``turnInlineLimitBytes`` / ``previewBytes``."""
        from pi_tui.tools.artifacts import ArtifactLimits

        getter = getattr(self._state.settings, "pipeline_settings", None)
        return ArtifactLimits.from_settings(getter()) if callable(getter) else ArtifactLimits()

    async def _finalize_message(self, message: AgentMessage) -> AgentMessage:
        if self._extension_hooks is not None:
            message = await self._extension_hooks.finalize_message(message)
        return message

    def _tool_context(self) -> ToolContext:
        state = self._state
        settings: dict[str, Any] = {}
        if state.settings is not None and hasattr(state.settings, "as_dict"):
            settings = state.settings.as_dict()
        model = state.model
        return ToolContext(
            cwd=state.cwd,
            artifact_dir=state.session_manager.artifact_dir,
            settings=settings,
            model_supports_images=model.supports_images if model is not None else True,
            files=state.file_access,
            secret_values=state.redactor.values,
            sandbox=state.sandbox,
            pins=state.sandbox,  # the permission gate pins the paths it checked
        )


def inner_mcp_call(info: ToolCallInfo) -> ToolCallInfo | None:
    """The server tool an ``mcp`` action=call runs, as if the model had called it directly: a
    permission rule or an extension's block on ``mcp__server__tool`` must not be passed by going
    through the ``mcp`` tool (pi_tui/mcp/tools.py). None for any other call."""
    args = info.args
    if info.tool_call["name"] != "mcp" or args.get("action") != "call" or not isinstance(args.get("tool"), str):
        return None
    arguments = args.get("arguments")
    inner_args: dict[str, JsonValue] = dict(arguments) if isinstance(arguments, dict) else {}
    call: ToolCall = {"type": "toolCall", "id": info.tool_call["id"], "name": str(args["tool"]),
                      "arguments": inner_args}
    return ToolCallInfo(tool_call=call, args=inner_args, assistant_message=info.assistant_message,
                        context=info.context)
