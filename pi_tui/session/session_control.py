"""Changing what the session is: model, thinking level, name, tools, and the agent's history.

Model and thinking changes are persisted (§1.7: ``thinking_level_change`` only when the level
really changes) and made the settings' defaults, as pi does; extensions hear of them without
being awaited. Tools keep their registration order, late ones (MCP) at the end, so the tool list
a provider caches only ever grows at its end.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pi_tui.agent.agent import Agent
from pi_tui.core.errors import PiError
from pi_tui.core.messages import THINKING_LEVELS, AgentMessage, ThinkingLevel
from pi_tui.core.provider import ModelInfo
from pi_tui.core.tool import Tool
from pi_tui.session.live_state import LiveState
from pi_tui.session.restore import DEFAULT_THINKING_LEVEL, clamp_thinking_level


class SessionControl:
    def __init__(
        self, state: LiveState, agent: Agent, *, emit: Callable[[dict[str, Any]], None],
        tell_extensions: Callable[[str, dict[str, Any]], None], rebuild_system_prompt: Callable[[], str],
    ) -> None:
        self._state = state
        self._agent = agent
        self._emit = emit
        self._tell_extensions = tell_extensions
        self._rebuild = rebuild_system_prompt

    # ------------------------------------------------------------------ model and thinking

    def set_model(self, model: ModelInfo, *, source: str = "set", thinking_level: str | None = None) -> None:
        """See ``AgentSession.set_model``."""
        state = self._state
        previous = state.model
        level = thinking_level if thinking_level is not None else self._thinking_level_for_switch()
        state.model = model
        state.session_manager.append_model_change(model.provider, model.id)
        self._emit({"type": "model_changed", "provider": model.provider, "modelId": model.id})
        setter = getattr(state.settings, "set_global", None)
        if callable(setter):
            setter("defaultProvider", model.provider)
            setter("defaultModel", model.id)
        self.set_thinking_level(level)
        self._tell_extensions("model_select", {
            "model": model.ref, "previousModel": previous.ref if previous else None, "source": source,
        })

    def _thinking_level_for_switch(self) -> str:
        state = self._state
        if state.model is not None and state.model.reasoning:
            return state.thinking_level
        return getattr(state.settings, "default_thinking_level", None) or DEFAULT_THINKING_LEVEL

    def set_thinking_level(self, level: str) -> None:
        """See ``AgentSession.set_thinking_level``."""
        state = self._state
        clamped = clamp_thinking_level(level, state.model)
        if clamped == state.thinking_level:
            return
        previous = state.thinking_level
        state.thinking_level = clamped
        state.session_manager.append_thinking_level_change(clamped)
        setter = getattr(state.settings, "set_global", None)
        if callable(setter) and ((state.model is not None and state.model.reasoning) or clamped != "off"):
            setter("defaultThinkingLevel", clamped)
        self._emit({"type": "thinking_level_changed", "level": clamped})
        self._tell_extensions("thinking_level_select", {"level": clamped, "previousLevel": previous})

    def cycle_thinking_level(self) -> ThinkingLevel:
        state = self._state
        levels = [lvl for lvl in THINKING_LEVELS if clamp_thinking_level(lvl, state.model) == lvl]
        if len(levels) <= 1:
            return state.thinking_level
        index = levels.index(state.thinking_level) if state.thinking_level in levels else -1
        self.set_thinking_level(levels[(index + 1) % len(levels)])
        return state.thinking_level

    def set_session_name(self, name: str) -> None:
        manager = self._state.session_manager
        manager.append_session_info(name)
        self._emit({"type": "session_info_changed", "name": manager.session_name})

    # ------------------------------------------------------------------ tools

    def set_active_tools(self, names: list[str]) -> None:
        state = self._state
        state.active_tool_names = [n for n in names if n in state.all_tools]
        self._agent.context.tools = state.active_tools()
        self._rebuild()

    def replace_tool(self, tool: Tool) -> None:
        """Put ``tool`` in place of the tool of the same name, keeping whether it is active."""
        state = self._state
        state.all_tools[tool.name] = tool
        self._agent.context.tools = state.active_tools()

    def add_tools(self, tools: Sequence[Tool], *, active: bool = True) -> list[str]:
        """Register tools that arrive after start-up (MCP servers connect late): appended after
        the existing ones, so what a provider cached of the tool list stays valid. A name that is
        taken is refused (``PiError`` naming it) and nothing is added. Returns the names added.
        The tools reach the model with its next request; the system prompt lists them from now."""
        state = self._state
        names = [t.name for t in tools]
        taken = [n for n in names if n in state.all_tools]
        if taken or len(set(names)) != len(names):
            clash = taken or [n for n in names if names.count(n) > 1]
            raise PiError(f"Cannot add tool {clash[0]!r}: a tool of that name is already registered")
        for tool in tools:
            state.all_tools[tool.name] = tool
        if active:
            state.active_tool_names += names
        self._agent.context.tools = state.active_tools()
        self._rebuild()
        return names

    # ------------------------------------------------------------------ history

    def replace_messages(self, messages: list[AgentMessage]) -> None:
        """Rebuild the agent's history (after compaction or tree navigation)."""
        self._agent.context.messages[:] = list(messages)
        self._rebuild()
