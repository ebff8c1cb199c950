"""What the compaction runner sees of its session (``compaction_steps.CompactionHost``).

The runner is given this port, not the session: the file, settings, model and thinking level
(read through the live state, so a replaced session file is seen at once), the model access,
the session's lock and events, the agent's history and the one way to replace it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from pi_tui.agent.agent import Agent
from pi_tui.core.messages import AgentMessage
from pi_tui.core.provider import ModelInfo, Provider
from pi_tui.core.session.manager import SessionManager
from pi_tui.session.live_state import LiveState
from pi_tui.session.model_access import ModelAccess

if TYPE_CHECKING:  # not imported at run time: a session without extensions never loads them (start-up)
    from pi_tui.extensions.runner import ExtensionRunner


class CompactionPort:
    def __init__(
        self, state: LiveState, agent: Agent, models: ModelAccess, *, extensions: ExtensionRunner | None,
        emit: Callable[[dict[str, Any]], None], subscribe: Callable[[Callable[[dict[str, Any]], None]], object],
        replace_messages: Callable[[list[AgentMessage]], None],
        pipeline_summarized: list[Callable[[str], Awaitable[None]]] | None = None,
    ) -> None:
        self._state = state
        self._models = models
        self.agent = agent
        self.extensions = extensions
        self.emit = emit
        self.subscribe = subscribe
        self.replace_messages = replace_messages
        self.pipeline_summarized = pipeline_summarized if pipeline_summarized is not None else []
        """``SessionHooks.pipeline_summarized`` (the session's list itself, so later appends count)."""

    @property
    def session_manager(self) -> SessionManager:
        return self._state.session_manager

    @property
    def settings(self) -> Any:
        return self._state.settings

    @property
    def thinking_level(self) -> str:
        return self._state.thinking_level

    @property
    def one_shot(self) -> bool:
        return self._state.one_shot

    @property
    def lock(self) -> asyncio.Lock:
        return self._state.lock

    def current_model(self) -> ModelInfo | None:
        return self._state.model

    def provider_for(self, model: ModelInfo) -> Provider:
        return self._models.provider_for(model)

    def api_key_for(self, model: ModelInfo) -> str | None:
        return self._models.api_key_for(model)

    def require_model(self) -> ModelInfo:
        return self._models.require_model()

    def check_credentials(self, model: ModelInfo) -> None:
        self._models.check_credentials(model)
