"""The state every part of ``AgentSession`` shares, declared once for the type checker.

``AgentSession`` is split over mixins by concern (``run_config.py``, ``session_control.py``);
they all derive from ``SessionBase`` so each sees the attributes and the cross-cutting methods
with their types. The attributes are set in ``AgentSession.__init__``; the methods below are
implemented by ``AgentSession`` (or one of the mixins) and only declared here.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pi_tui.agent.types import AfterToolCall, BeforeToolCall, PrepareRequest, TransformContext
from pi_tui.core.messages import AgentMessage, ImageContent, ThinkingLevel
from pi_tui.core.provider import CompletionRequest, ModelInfo, Provider
from pi_tui.core.redact import Redactor
from pi_tui.core.session.manager import SessionManager
from pi_tui.core.tool import Tool
from pi_tui.session.queue_mirror import QueueMirror
from pi_tui.session.retry import Clock, RetryState

if TYPE_CHECKING:
    from pi_tui.agent.agent import Agent
    from pi_tui.extensions.agent_hooks import AgentHooks
    from pi_tui.extensions.runner import ExtensionRunner


class SessionBase:
    cwd: Path
    session_manager: SessionManager
    settings: Any
    resources: Any
    model_registry: Any
    clock: Clock
    lock: asyncio.Lock
    agent: Agent
    extensions: ExtensionRunner | None
    compaction_runner: Any
    base_system_prompt: str
    last_request: CompletionRequest | None
    transform_context: TransformContext | None
    convert_to_llm: Callable[[list[AgentMessage]], list[Any]] | None
    prepare_request: PrepareRequest | None
    before_tool_call: BeforeToolCall | None
    after_tool_call: AfterToolCall | None
    _provider_factory: Callable[[ModelInfo], Provider]
    _providers: dict[tuple[str, str, str], Provider]
    _model: ModelInfo | None
    _thinking_level: ThinkingLevel
    _api_key_override: str | None
    _check_keys: bool
    _all_tools: dict[str, Tool]
    _active_tool_names: list[str]
    _resource_loader: Callable[..., Any] | None
    _system_prompt_builder: Callable[[Any, Sequence[Tool]], str] | None
    _hooks: AgentHooks | None
    _queue: QueueMirror
    _retry: RetryState
    _retrying: bool
    _run_system_prompt: str | None
    _background: set[asyncio.Future[Any]]
    _aborts: int
    _started: bool
    _run_task: asyncio.Task[Any] | None
    replacement_cancelled: bool
    fresh_start: Callable[[], tuple[ModelInfo | None, str | None]] | None
    project_trust: Any
    file_access: Any
    permissions: Any
    redactor: Redactor

    # Implemented by AgentSession.
    def emit(self, event: dict[str, Any]) -> None:
        raise NotImplementedError

    def _require_model(self) -> ModelInfo:
        raise NotImplementedError

    def provider_for(self, model: ModelInfo) -> Provider:
        raise NotImplementedError

    def api_key_for(self, model: ModelInfo) -> str | None:
        raise NotImplementedError

    @property
    def model(self) -> ModelInfo | None:
        raise NotImplementedError

    @property
    def thinking_level(self) -> ThinkingLevel:
        raise NotImplementedError

    @property
    def active_tools(self) -> list[Tool]:
        raise NotImplementedError

    @property
    def is_streaming(self) -> bool:
        raise NotImplementedError

    @property
    def is_compacting(self) -> bool:
        raise NotImplementedError

    async def abort(self) -> None:
        raise NotImplementedError

    async def prompt(
        self, text: str, *, images: Sequence[ImageContent] = (), streaming_behavior: str | None = None
    ) -> None:
        raise NotImplementedError

    async def continue_(self) -> None:
        raise NotImplementedError

    async def continue_if_idle(self) -> bool:
        raise NotImplementedError

    def follow_up(self, text: str) -> None:
        raise NotImplementedError

    def clear_queues(self) -> tuple[list[str], list[str]]:
        raise NotImplementedError

    # Implemented by the mixins.
    def _convert_for_request(self, messages: list[AgentMessage]) -> list[Any]:
        raise NotImplementedError

    def rebuild_system_prompt(self, *, reload: bool = True) -> str:
        raise NotImplementedError

    def replace_messages(self, messages: list[AgentMessage]) -> None:
        raise NotImplementedError

    def flush_pending_bash(self) -> None:
        raise NotImplementedError

    async def _lifecycle(self, event: str, payload: dict[str, Any]) -> None:
        raise NotImplementedError

    def _load_resources(self) -> Any:
        raise NotImplementedError

