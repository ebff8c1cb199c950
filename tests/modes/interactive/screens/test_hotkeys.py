"""HotkeysScreen: the app's keys plus every full-screen view's, filterable."""

from __future__ import annotations

from textual.widgets import DataTable

from pi_tui.modes.interactive.keymap import Keymap
from pi_tui.modes.interactive.screens.hotkeys import (
    HotkeyRow,
    HotkeysScreen,
    keymap_rows,
    screen_hotkey_rows,
)
from tests.modes.interactive.screens.builders import ScreenHost


def test_screen_rows_come_from_the_screens_bindings():
    rows = {(row.group, row.description): row.keys for row in screen_hotkey_rows()}
    assert rows[("/tree", "Close")] == "esc"
    assert rows[("/resume", "All projects")] == "tab"


def test_the_screens_rebindable_keys_are_listed_with_their_screen_and_pi_id():
    keymap = Keymap.defaults()
    keymap.apply({"app.tree.foldOrUp": "alt+h"})
    rows = {row.action_id: row for row in keymap_rows(keymap)}
    assert (rows["app.tree.foldOrUp"].group, rows["app.tree.foldOrUp"].keys) == ("/tree", "alt+h")
    assert (rows["app.session.delete"].group, rows["app.session.delete"].keys) == ("/resume", "ctrl+d")
    assert rows["app.session.deleteNoninvasive"].keys == "ctrl+backspace"
    assert (rows["app.tree.editLabel"].group, rows["app.tree.editLabel"].keys) == ("/tree", "shift+l")
    assert rows["app.tree.filter.cycleBackward"].keys == "shift+ctrl+o"
    fixed = {row.description for row in screen_hotkey_rows() if row.group == "/tree"}
    assert not fixed & {"Fold", "Label", "Default filter"}  # listed once, not twice


async def test_typing_filters_the_table():
    app_rows = [HotkeyRow(group="app", keys="ctrl+l", description="Open the model picker")]
    screen = HotkeysScreen(app_rows)
    app = ScreenHost(screen)
    async with app.run_test(size=(120, 40)) as pilot:
        table = screen.query_one(DataTable)
        assert table.row_count == len(screen.rows) > 20
        await pilot.press(*"model picker")
        assert table.row_count == 1
        assert [str(cell) for cell in table.get_row_at(0)] == ["app", "ctrl+l", "Open the model picker", ""]
        await pilot.press("escape")
        assert app.results == [None]
