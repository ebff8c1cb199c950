"""Ctrl+P / Shift+Ctrl+P: the next or previous model (pi-behaviour.md §8.2).

The models cycled through are the ``enabledModels`` setting's patterns when it is set (what pi's
``/scoped-models`` writes; each pattern may glob and may carry a ``:thinking`` level), else every
model that has credentials (``ModelRegistry.list_models``).
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from typing import Any

from pi_tui.core.provider import ModelInfo
from pi_tui.providers.models import parse_model_ref


@dataclass(frozen=True, slots=True)
class CycleChoice:
    model: ModelInfo
    thinking_level: str | None = None


def scoped_choices(patterns: list[Any], available: list[ModelInfo]) -> list[CycleChoice]:
    """The available models each pattern of ``enabledModels`` names, in pattern order."""
    chosen: list[CycleChoice] = []
    for raw in patterns:
        if not isinstance(raw, str) or not raw.strip():
            continue
        pattern, level = parse_model_ref(raw.strip())
        needle = pattern.lower()
        for model in available:
            matches = fnmatch.fnmatchcase(model.ref.lower(), needle) or fnmatch.fnmatchcase(model.id.lower(), needle)
            if matches and all(model.ref != seen.model.ref for seen in chosen):
                chosen.append(CycleChoice(model, level))
    return chosen


def cycle_choices(session: Any) -> tuple[list[CycleChoice], bool]:
    """(models to cycle through, whether they come from ``enabledModels``)."""
    registry = getattr(session, "model_registry", None)
    available = list(registry.list_models()) if registry is not None else []
    settings: Any = getattr(session, "settings", None)
    patterns = settings.get("enabledModels", None) if hasattr(settings, "get") else None
    if isinstance(patterns, list) and patterns:
        return scoped_choices(patterns, available), True
    return [CycleChoice(m) for m in available], False


def next_choice(choices: list[CycleChoice], current: ModelInfo | None, step: int) -> CycleChoice | None:
    """The choice ``step`` places from the current model (wrapping); None when there is no other."""
    refs = [c.model.ref for c in choices]
    if current is None or current.ref not in refs:
        return (choices[0] if step > 0 else choices[-1]) if choices else None
    if len(choices) == 1:
        return None
    return choices[(refs.index(current.ref) + step) % len(choices)]
