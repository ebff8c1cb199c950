from __future__ import annotations

from pi_tui.core.provider import ModelInfo
from pi_tui.modes.interactive.model_cycle import CycleChoice, next_choice, scoped_choices

M1, M2, M3 = (ModelInfo(provider="fake", id=f"m{i}") for i in (1, 2, 3))
OTHER = ModelInfo(provider="other", id="big-model")


def test_enabled_model_patterns_glob_keep_their_order_and_thinking_level():
    available = [M1, M2, M3, OTHER]
    chosen = scoped_choices(["other/*:high", "fake/m3", "m1", "fake/m*", 7, "nothing"], available)
    assert chosen == [CycleChoice(OTHER, "high"), CycleChoice(M3), CycleChoice(M1), CycleChoice(M2)]


def test_next_choice_wraps_both_ways_and_needs_another_model():
    choices = [CycleChoice(M1), CycleChoice(M2), CycleChoice(M3)]
    assert next_choice(choices, M3, 1) == CycleChoice(M1)
    assert next_choice(choices, M1, -1) == CycleChoice(M3)
    assert next_choice(choices, OTHER, 1) == CycleChoice(M1), "a model outside the scope starts at its edge"
    assert next_choice(choices, OTHER, -1) == CycleChoice(M3)
    assert next_choice([CycleChoice(M1)], M1, 1) is None
    assert next_choice([], M1, 1) is None
