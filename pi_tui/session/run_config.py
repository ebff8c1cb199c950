"""Building the agent loop's configuration for one run: model, provider, and the hook chain.

Per model call (ARCHITECTURE.md): session projection → extension ``context`` handlers, then the
SDK's ``transform_context`` → the built-in reducers (compaction runner, pipeline strategy) →
``prepare_request`` → ``convert_to_llm`` → provider (``before_provider_request`` on the body).
Tool hooks chain the extension ``tool_call``/``tool_result`` handlers with the SDK's
``before_tool_call``/``after_tool_call``; every finished message passes the artifact step (tool
results) and the extension ``message_end`` hook before it is recorded.
"""

from __future__ import annotations

import inspect
from typing import Any

from pi_tui.agent.types import (
    AfterToolCallResult,
    AgentLoopConfig,
    BeforeToolCallResult,
    ToolCallInfo,
)
from pi_tui.core.context.convert import convert_to_llm
from pi_tui.core.messages import AgentMessage, LlmMessage, ToolResultMessage
from pi_tui.core.provider import CompletionRequest
from pi_tui.core.tool import ToolContext, ToolResult
from pi_tui.session.persistence import apply_artifacts_to_results
from pi_tui.session.session_base import SessionBase


class RunConfigMixin(SessionBase):
    def _loop_config(self) -> AgentLoopConfig:
        model = self._require_model()
        execution = self.settings.get("toolExecution") if self.settings is not None else None
        runner = self.compaction_runner
        reduce = None
        if runner is not None and hasattr(runner, "prepare_request_messages") and self._context_strategy() == "pipeline":
            reduce = self._reduce_with_runner
        return AgentLoopConfig(
            model=model,
            provider=self.provider_for(model),
            convert_to_llm=self._convert_for_request,
            thinking_level=self.thinking_level,
            session_id=self.session_manager.session_id,
            thinking_budgets=self._thinking_budgets(),
            get_api_key=self.api_key_for,
            transform_context=self._transform_for_request if self._transforms_context() else None,
            reduce_messages=reduce,
            prepare_request=self.prepare_request,
            before_tool_call=self._before_tool_call,
            after_tool_call=self._after_tool_call,
            finalize_message=self._finalize_message,
            transform_tool_results=self._tool_results_to_artifacts,
            on_payload=self._hooks.on_payload if self._hooks is not None else None,
            on_request=self._remember_request,
            tool_execution="sequential" if execution == "sequential" else "parallel",
            tool_context=self._tool_context,
        )

    def _thinking_budgets(self) -> dict[str, int] | None:
        getter = getattr(self.settings, "thinking_budgets", None)
        budgets = getter() if callable(getter) else None
        return budgets if isinstance(budgets, dict) else None

    def _remember_request(self, request: CompletionRequest) -> None:
        self.last_request = request

    def _context_strategy(self) -> str:
        getter = getattr(self.settings, "context_strategy", None)
        return str(getter()) if callable(getter) else "pi"

    async def _reduce_with_runner(self, messages: list[AgentMessage]) -> list[AgentMessage]:
        transform = self._transform_for_request if self._transforms_context() else None
        result = self.compaction_runner.prepare_request_messages(messages, transform)
        if inspect.isawaitable(result):
            result = await result
        return list(result)

    def _convert_for_request(self, messages: list[AgentMessage]) -> list[LlmMessage]:
        if self.convert_to_llm is not None:
            return list(self.convert_to_llm(messages))
        block = False
        images = getattr(self.settings, "image_settings", None)
        if callable(images):
            block = bool(images().block_images)
        return convert_to_llm(messages, block_images=block)

    def _transforms_context(self) -> bool:
        """Does anything outside pi-tui see the context before the request? Only then does the
        loop hand out a deep copy (pi's structuredClone for ``context`` handlers; SDK hooks,
        ``convert_to_llm`` included, may edit what they get); otherwise the reducers get the
        history's own message objects, which the preparation cache recognises in O(1). Nothing of
        ours mutates them, and no request body shares them (tests/providers/
        test_encoders_leave_history_alone.py)."""
        has_handlers = self.extensions is not None and self.extensions.has_handlers("context")
        sdk_hooks = (self.transform_context, self.prepare_request, self.convert_to_llm)
        return has_handlers or any(hook is not None for hook in sdk_hooks)

    async def _transform_for_request(self, messages: list[AgentMessage]) -> list[AgentMessage]:
        if self._hooks is not None:
            messages = await self._hooks.transform_context(messages)
        if self.transform_context is not None:
            messages = await self.transform_context(messages)
        return messages

    async def _before_tool_call(self, info: ToolCallInfo) -> BeforeToolCallResult | None:
        if self._hooks is not None:
            verdict = await self._hooks.before_tool_call(info)
            if verdict is not None and verdict.block:
                return verdict
        if self.permissions is not None:
            gated: BeforeToolCallResult | None = await self.permissions.before_tool_call(info)
            if gated is not None and gated.block:
                return gated
        if self.before_tool_call is not None:
            return await self.before_tool_call(info)
        return None

    async def _after_tool_call(self, info: ToolCallInfo, result: ToolResult) -> AfterToolCallResult | None:
        original = result
        if self._hooks is not None:
            change = await self._hooks.after_tool_call(info, result)
            result = change.applied_to(result) if change is not None else result
        if self.after_tool_call is not None:
            mine = await self.after_tool_call(info, result)
            result = mine.applied_to(result) if mine is not None else result
        if result is original:
            return None
        return AfterToolCallResult(content=result.content, details=result.details, replace_details=True,
                                   is_error=result.is_error)

    async def _tool_results_to_artifacts(
        self, messages: list[ToolResultMessage], recorded: list[ToolResultMessage]
    ) -> list[ToolResultMessage]:
        artifact_dir = self.session_manager.artifact_dir if self.session_manager.session_file is not None else None
        results, events = apply_artifacts_to_results(messages, artifact_dir=artifact_dir, recorded=recorded,
                                                     strategy=self._context_strategy(), limits=self._artifact_limits())
        for event in events:
            self.emit(event)
        return results

    def _artifact_limits(self) -> Any:
        """``context.pipeline.artifactThresholdBytes`` / ``turnInlineLimitBytes`` / ``previewBytes``."""
        from pi_tui.tools.artifacts import ArtifactLimits

        getter = getattr(self.settings, "pipeline_settings", None)
        return ArtifactLimits.from_settings(getter()) if callable(getter) else ArtifactLimits()

    async def _finalize_message(self, message: AgentMessage) -> AgentMessage:
        if self._hooks is not None:
            message = await self._hooks.finalize_message(message)
        return message

    def _tool_context(self) -> ToolContext:
        settings: dict[str, Any] = {}
        if self.settings is not None and hasattr(self.settings, "as_dict"):
            settings = self.settings.as_dict()
        model = self.model
        return ToolContext(
            cwd=self.cwd,
            artifact_dir=self.session_manager.artifact_dir,
            settings=settings,
            model_supports_images=model.supports_images if model is not None else True,
            files=self.file_access,
            secret_values=self.redactor.values,
            sandbox=self.permissions,
        )
