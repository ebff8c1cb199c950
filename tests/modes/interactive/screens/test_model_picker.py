"""ModelPickerScreen: filter by typing, choose with Enter, the current model marked."""

from __future__ import annotations

import pytest

from pi_tui.core.provider import ModelInfo
from pi_tui.modes.interactive.screens.model_picker import ModelPickerScreen, format_window
from tests.modes.interactive.screens.builders import ScreenHost

MODELS = [
    ModelInfo(provider="fake", id="fake-model", context_window=8000, context_window_source="models.json"),
    ModelInfo(provider="openai", id="gpt-4o", name="GPT-4o", context_window=128_000, input=("text", "image")),
    ModelInfo(provider="openai", id="o3-mini", context_window=200_000, reasoning=True),
    ModelInfo(provider="anthropic", id="claude-sonnet-4-5", context_window=1_000_000, reasoning=True),
]


async def test_typing_filters_and_enter_chooses():
    screen = ModelPickerScreen(MODELS, current=MODELS[0])
    app = ScreenHost(screen)
    async with app.run_test(size=(120, 40)) as pilot:
        assert [m.ref for m in screen.shown] == [m.ref for m in MODELS]
        await pilot.press(*"openai o")
        assert [m.ref for m in screen.shown] == ["openai/gpt-4o", "openai/o3-mini"]
        await pilot.press("down", "enter")
        assert app.results == [MODELS[2]]


async def test_initial_search_current_marker_and_escape():
    screen = ModelPickerScreen(MODELS, current=MODELS[1], search="gpt")
    app = ScreenHost(screen)
    async with app.run_test(size=(120, 40)) as pilot:
        assert [m.ref for m in screen.shown] == ["openai/gpt-4o"]
        prompt = str(screen.model_row(0))
        assert prompt.startswith("✓ openai/gpt-4o") and "128k ctx" in prompt and "images" in prompt
        await pilot.press("escape")
        assert app.results == [None]


async def test_no_models_explains_what_to_do():
    screen = ModelPickerScreen([])
    app = ScreenHost(screen)
    async with app.run_test(size=(120, 40)) as pilot:
        assert "set an API key or add models.json" in str(screen.query_one("#models-empty").render())
        await pilot.press("enter")
        assert app.results == []


@pytest.mark.parametrize(
    ("tokens", "expected"),
    [(8000, "8k"), (131_072, "131k"), (1_000_000, "1M"), (1_048_576, "1M"), (1_500_000, "1.5M"), (200, "200")],
)
def test_format_window(tokens, expected):
    assert format_window(tokens) == expected
