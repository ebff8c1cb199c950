"""SettingsScreen: edits come back as new values; settings_changes maps them to settings paths."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Select, Switch

from pi_tui.modes.interactive.screens.settings import (
    SettingsScreen,
    SettingsValues,
    settings_changes,
)
from pi_tui.resources.settings import load_settings
from tests.modes.interactive.screens.builders import ScreenHost


def test_values_from_a_real_settings_file(tmp_path: Path, agent_dir: Path):
    (agent_dir / "settings.json").write_text(
        '{"theme": "light", "compaction": {"enabled": false}, "context": {"strategy": "pipeline"},'
        ' "branchSummary": {"skipPrompt": true}}',
        encoding="utf-8",
    )
    values = SettingsValues.from_settings(load_settings(tmp_path, agent_dir), thinking_level="high")
    assert values == SettingsValues(
        thinking_level="high", theme="light", auto_compaction=False, context_strategy="pipeline", skip_branch_summary_prompt=True
    )


async def test_changes_are_returned_on_close():
    original = SettingsValues(thinking_level="medium", theme="textual-dark")
    screen = SettingsScreen(original, thinking_levels=("off", "low", "medium", "high"))
    app = ScreenHost(screen)
    async with app.run_test(size=(120, 40)) as pilot:
        auto = screen.query_one("#setting-auto_compaction", Switch)
        auto.focus()
        await pilot.press("space")
        screen.query_one("#setting-context_strategy", Select).value = "pipeline"
        screen.query_one("#setting-thinking_level", Select).value = "high"
        await pilot.pause()
        await pilot.press("escape")
    [result] = app.results
    assert result == SettingsValues(thinking_level="high", theme="textual-dark", auto_compaction=False, context_strategy="pipeline")
    assert settings_changes(original, result) == {"compaction.enabled": False, "context.strategy": "pipeline"}


async def test_theme_previews_live_and_revert_restores():
    original = SettingsValues(thinking_level="off", theme="textual-dark")
    screen = SettingsScreen(original)
    app = ScreenHost(screen)
    async with app.run_test(size=(120, 40)) as pilot:
        screen.query_one("#setting-theme", Select).value = "nord"
        await pilot.pause()
        assert app.theme == "nord" and screen.values.theme == "nord"
        await pilot.press("ctrl+z")
        await pilot.pause()
        await pilot.press("escape")
    assert app.results == [None]


async def test_progress_notifications_and_titles_are_settings_too(tmp_path: Path, agent_dir: Path):
    (agent_dir / "settings.json").write_text('{"terminal": {"notifications": "bell"}}', encoding="utf-8")
    original = SettingsValues.from_settings(load_settings(tmp_path, agent_dir), thinking_level="off")
    assert (original.terminal_progress, original.notifications, original.session_titles) == (False, "bell", False)
    screen = SettingsScreen(original, themes=("textual-dark",))
    app = ScreenHost(screen)
    async with app.run_test(size=(120, 50)) as pilot:
        screen.query_one("#setting-terminal_progress", Switch).value = True
        screen.query_one("#setting-session_titles", Switch).value = True
        screen.query_one("#setting-notifications", Select).value = "off"
        await pilot.pause()
        await pilot.press("escape")
    [result] = app.results
    assert settings_changes(original, result) == {
        "terminal.showTerminalProgress": True, "terminal.notifications": "off", "sessionTitles.enabled": True}
