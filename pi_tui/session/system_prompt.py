"""The session's system prompt: rebuilt from the resources before each run and after changes.

Resources are read from disk again first (AGENTS.md, SYSTEM.md, skills …, with the paths
extensions discovered), so an edit made between two prompts is what the next run sees; context
files are then cut to the model's share of its window. A run may replace the prompt for itself
(an extension's ``before_agent_start``): that is ``LiveState.run_system_prompt``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pi_tui.core.tool import Tool
from pi_tui.resources.loader import LoadedResources
from pi_tui.session.live_state import LiveState

PromptBuilder = Callable[[Any, Sequence[Tool]], str]


class SystemPrompt:
    def __init__(
        self, state: LiveState, *, load: Callable[[], Any] | None, builder: PromptBuilder | None,
        notify: Callable[[str, str], None],
    ) -> None:
        self._state = state
        self._load = load
        self.builder = builder
        """Replaces the resources' own ``build_system_prompt`` (SDK option; tests set it)."""
        self._notify = notify

    def rebuild(self, *, reload: bool = True) -> str:
        state = self._state
        if reload and self._load is not None:
            try:
                state.resources = self._load()
            except Exception as err:
                self._notify(f"Reloading resources failed: {err}", "warning")
        resources = state.resources
        if isinstance(resources, LoadedResources):  # context files: the model's share of its window
            resources.apply_context_budget(state.model.context_window if state.model is not None else None)
        if self.builder is not None:
            state.base_system_prompt = self.builder(resources, state.active_tools())
        elif resources is not None and hasattr(resources, "build_system_prompt"):
            state.base_system_prompt = resources.build_system_prompt(state.active_tools())
        return state.base_system_prompt

    def current(self) -> str:
        return self._state.run_system_prompt or self._state.base_system_prompt
