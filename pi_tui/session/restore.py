"""Model and thinking level at session start (pi-behaviour.md §1.6 with §13.1).

* A new session (no messages yet): ``model_change`` (when there is a model) and
  ``thinking_level_change`` are appended immediately.
* An existing session: the model comes from the context (its last ``model_change`` or assistant),
  unless the caller chose one explicitly; the thinking level from the branch's
  ``thinking_level_change``, else the settings default — and then that default is appended.
* The level is always clamped to what the model supports (``clamp_thinking_level``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pi_tui.core.messages import THINKING_LEVELS, ThinkingLevel
from pi_tui.core.provider import ModelInfo
from pi_tui.core.session.manager import SessionManager

DEFAULT_THINKING_LEVEL: ThinkingLevel = "medium"
"""pi's ``DEFAULT_THINKING_LEVEL``: the level when the settings name none."""


def clamp_thinking_level(level: str, model: ModelInfo | None) -> ThinkingLevel:
    """pi 0.73.1 ``clampThinkingLevel``: off only for non-reasoning models; ``xhigh`` only when
    the model's map defines it; a level mapped to None is unsupported; an unsupported level moves
    up to the next supported one, else down."""
    wanted: ThinkingLevel = next((lvl for lvl in THINKING_LEVELS if lvl == level), DEFAULT_THINKING_LEVEL)
    if model is None:
        return wanted
    if not model.reasoning:
        return "off"
    mapping = model.thinking_level_map

    def supported(candidate: str) -> bool:
        if candidate in mapping and mapping[candidate] is None:
            return False
        return not (candidate == "xhigh" and "xhigh" not in mapping)

    if supported(wanted):
        return wanted
    index = THINKING_LEVELS.index(wanted)
    for candidate in (*THINKING_LEVELS[index + 1 :], *reversed(THINKING_LEVELS[:index])):
        if supported(candidate):
            return candidate
    return "off"


@dataclass(slots=True, kw_only=True)
class Restored:
    model: ModelInfo | None
    thinking_level: ThinkingLevel
    notes: list[str]
    """Human-readable remarks (a stored model that no longer resolves, …) for stderr / the UI."""


def restore_model_and_thinking(
    manager: SessionManager,
    *,
    model: ModelInfo | None,
    model_explicit: bool,
    thinking_level: str | None,
    default_thinking_level: str,
    resolve: Callable[[str, str], ModelInfo | None],
) -> Restored:
    """Apply the restore rules, appending the entries they call for; see the module docstring."""
    context = manager.build_session_context()
    has_messages = bool(context.messages)
    notes: list[str] = []
    if not has_messages:
        level = clamp_thinking_level(thinking_level or default_thinking_level, model)
        if model is not None:
            manager.append_model_change(model.provider, model.id)
        manager.append_thinking_level_change(level)
        return Restored(model=model, thinking_level=level, notes=notes)

    chosen = model
    if context.model is not None:
        stored = resolve(context.model.provider, context.model.model_id)
        if stored is None:
            notes.append(f"The session's model {context.model.provider}/{context.model.model_id} is not available; "
                         f"using {model.ref if model else 'no model'}.")
        elif not model_explicit or model is None:
            chosen = stored
    if chosen is not None and model_explicit and (
        context.model is None or (context.model.provider, context.model.model_id) != (chosen.provider, chosen.id)
    ):
        manager.append_model_change(chosen.provider, chosen.id)

    has_level_entry = manager.latest_on_branch("thinking_level_change") is not None
    restored_level = context.thinking_level if has_level_entry else None
    level = clamp_thinking_level(thinking_level or restored_level or default_thinking_level, chosen)
    if not has_level_entry or level != restored_level:
        manager.append_thinking_level_change(level)
    return Restored(model=chosen, thinking_level=level, notes=notes)
