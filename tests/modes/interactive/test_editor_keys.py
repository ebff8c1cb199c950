"""pi's editor and app keys in the real app (pilot): rebinding, kill ring, jumps, ctrl+d, model
cycling, the external editor."""

from __future__ import annotations

import json
import stat
from pathlib import Path

from textual.widgets import DataTable

from pi_tui.modes.interactive.screens.hotkeys import HotkeysScreen
from pi_tui.modes.interactive.widgets.chat_items import Notice
from pi_tui.modes.interactive.widgets.editor import PromptEditor
from pi_tui.modes.interactive.widgets.events_pane import EventsPane
from pi_tui.modes.interactive.widgets.footer import StatusFooter
from tests.modes.interactive.conftest import ready, settle

SIZE = (120, 40)


async def _editor(pilot, text: str = "") -> PromptEditor:
    await ready(pilot)
    editor = pilot.app.screen.query_one(PromptEditor)
    if text:
        editor.insert(text)
    await pilot.pause()
    return editor


def _notices(app) -> list[str]:
    return [str(n.text) for n in app.screen.query(Notice)]


async def test_a_rebound_editor_key_moves_the_action_off_its_default(make_app, agent_dir):
    (agent_dir / "keybindings.json").write_text(json.dumps({"tui.editor.cursorLineStart": "ctrl+x"}))
    app, _ = make_app()
    async with app.run_test(size=SIZE) as pilot:
        editor = await _editor(pilot, "hello world")
        assert editor.cursor_location == (0, 11)
        await pilot.press("ctrl+a")
        assert editor.cursor_location == (0, 11), "the default key no longer moves the cursor"
        await pilot.press("ctrl+x")
        assert editor.cursor_location == (0, 0)
        await pilot.press("ctrl+e")
        assert editor.cursor_location == (0, 11), "other editor keys keep their defaults"


async def test_pi_emacs_moves_and_deletions(make_app):
    app, _ = make_app()
    async with app.run_test(size=SIZE) as pilot:
        editor = await _editor(pilot, "one two three")
        await pilot.press("ctrl+b", "ctrl+b")
        assert editor.cursor_location == (0, 11)
        await pilot.press("ctrl+f")
        assert editor.cursor_location == (0, 12)
        await pilot.press("alt+left")
        assert editor.cursor_location == (0, 8)
        await pilot.press("ctrl+k")
        assert editor.text == "one two "
        await pilot.press("ctrl+a", "alt+d")
        assert editor.text == " two "
        await pilot.press("end", "ctrl+u")
        assert editor.text == ""


async def test_kill_ring_yank_accumulates_and_yank_pop_cycles(make_app):
    app, _ = make_app()
    async with app.run_test(size=SIZE) as pilot:
        editor = await _editor(pilot, "one two three")
        await pilot.press("ctrl+w", "ctrl+w")
        assert editor.text == "one "
        await pilot.press("ctrl+y")
        assert editor.text == "one two three", "consecutive kills form one entry"

        editor.set_text("alpha beta")
        await pilot.press("ctrl+w", "left", "ctrl+w")
        assert editor.text == " "
        assert editor.kill_ring.entries[-2:] == ["beta", "alpha"]
        await pilot.press("ctrl+y")
        assert editor.text == "alpha "
        await pilot.press("alt+y")
        assert editor.text == "beta ", "yankPop swaps the yanked text for the older entry"
        await pilot.press("alt+y")
        assert editor.text == "two three ", "and on through the ring"
        await pilot.press("alt+y")
        assert editor.text == "alpha ", "back to the newest"
        await pilot.press("x", "alt+y")
        assert editor.text == "alphax ", "yankPop only works right after a yank"


async def test_undo_reverts_a_deletion(make_app):
    app, _ = make_app()
    async with app.run_test(size=SIZE) as pilot:
        editor = await _editor(pilot, "keep this")
        await pilot.press("ctrl+w")
        assert editor.text == "keep "
        await pilot.press("ctrl+underscore")  # what a terminal sends for ctrl+-
        assert editor.text == "keep this"


async def test_jump_to_the_next_and_previous_typed_character(make_app):
    app, _ = make_app()
    async with app.run_test(size=SIZE) as pilot:
        editor = await _editor(pilot, "abcabc\nxcx")
        editor.move_cursor((0, 0))
        await pilot.press("ctrl+right_square_bracket", "c")
        assert editor.cursor_location == (0, 2)
        await pilot.press("ctrl+right_square_bracket", "c")
        assert editor.cursor_location == (0, 5)
        await pilot.press("ctrl+right_square_bracket", "c")
        assert editor.cursor_location == (1, 1), "jumps cross lines"
        await pilot.press("alt+ctrl+right_square_bracket", "a")
        assert editor.cursor_location == (0, 3)
        assert editor.text == "abcabc\nxcx", "the target character is not typed"
        await pilot.press("ctrl+right_square_bracket", "escape", "z")
        assert editor.text == "abczabc\nxcx", "esc cancels the jump; the next key types"


async def test_ctrl_d_deletes_in_a_non_empty_editor_and_quits_an_empty_one(make_app):
    app, _ = make_app()
    async with app.run_test(size=SIZE) as pilot:
        editor = await _editor(pilot, "abc")
        await pilot.press("home", "ctrl+d")
        assert editor.text == "bc"
        assert app.is_running
        await pilot.press("ctrl+d", "ctrl+d")
        assert editor.text == ""
        assert app.is_running
        await pilot.press("ctrl+d")
        await pilot.pause()
    assert not app.is_running


def _three_models(agent_dir: Path) -> None:
    (agent_dir / "models.json").write_text(json.dumps({"providers": {"fake": {
        "baseUrl": "http://127.0.0.1:9/v1", "api": "openai-completions", "apiKey": "test-key",
        "models": [{"id": "m1", "contextWindow": 8000}, {"id": "m2", "contextWindow": 8000},
                   {"id": "m3", "contextWindow": 8000}],
    }}}))


async def test_ctrl_p_cycles_models_forward_and_shift_ctrl_p_backward(make_app, agent_dir):
    _three_models(agent_dir)
    app, session = make_app(model="fake/m1")
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        assert session.state.model.ref == "fake/m1"
        await pilot.press("ctrl+p")
        await settle(app, pilot)
        assert session.state.model.ref == "fake/m2"
        assert "fake/m2" in app.screen.query_one(StatusFooter).data.model
        assert "Switched to fake/m2" in _notices(app)
        events = " ".join(f"{line.title} {line.detail}" for line in app.screen.query_one(EventsPane).lines)
        assert "m2" in events
        await pilot.press("ctrl+shift+p", "ctrl+shift+p")
        await settle(app, pilot)
        assert session.state.model.ref == "fake/m3"
        await pilot.press("ctrl+p")
        await settle(app, pilot)
        assert session.state.model.ref == "fake/m1", "wraps around"


async def test_ctrl_p_cycles_only_the_enabled_models_when_set(make_app, agent_dir):
    _three_models(agent_dir)
    app, session = make_app(model="fake/m1", settings={"enabledModels": ["fake/m3", "m1"]})
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await pilot.press("ctrl+p")
        await settle(app, pilot)
        assert session.state.model.ref == "fake/m3"
        await pilot.press("ctrl+p")
        await settle(app, pilot)
        assert session.state.model.ref == "fake/m1"


async def test_ctrl_g_edits_the_message_in_the_external_editor(make_app, tmp_path, monkeypatch):
    script = tmp_path / "fake-editor.sh"
    script.write_text('#!/bin/sh\nsed "s/draft/final/" "$1" > "$1.new" && mv "$1.new" "$1"\n')
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv("EDITOR", str(script))
    app, _ = make_app()
    async with app.run_test(size=SIZE) as pilot:
        editor = await _editor(pilot, "a draft\nof two lines")
        await pilot.press("ctrl+g")
        await pilot.pause()
        assert editor.text == "a final\nof two lines"


async def test_ctrl_g_without_an_editor_variable_says_so(make_app, monkeypatch):
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.delenv("EDITOR", raising=False)
    app, _ = make_app()
    async with app.run_test(size=SIZE) as pilot:
        editor = await _editor(pilot, "unchanged")
        await pilot.press("ctrl+g")
        await pilot.pause()
        assert editor.text == "unchanged"
        assert any("$VISUAL or $EDITOR" in n for n in _notices(app))


async def test_hotkeys_lists_every_action_with_its_keys(make_app, agent_dir):
    from pi_tui.modes.interactive.keymap import ACTIONS

    (agent_dir / "keybindings.json").write_text(json.dumps({"tui.editor.yank": ["ctrl+x", "alt+p"]}))
    app, _ = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await pilot.press("f1")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, HotkeysScreen)
        keys_by_id = {row.action_id: row.keys for row in screen.rows if row.action_id}
        assert set(keys_by_id) == {action.id for action in ACTIONS}
        assert keys_by_id["tui.editor.yank"] == "ctrl+x, alt+p"
        assert keys_by_id["tui.editor.jumpBackward"] == "ctrl+alt+]"
        assert keys_by_id["app.session.fork"] == "(unbound)"
        await pilot.press(*"yankpop")
        table = screen.query_one(DataTable)
        assert table.row_count == 1
        assert [str(cell) for cell in table.get_row_at(0)][1:] == [
            "alt+y", "After a yank: replace it with the older kill ring entry", "tui.editor.yankPop"]


async def test_shift_motions_select_and_a_deletion_takes_the_selection(make_app, agent_dir):
    (agent_dir / "keybindings.json").write_text(json.dumps({"tui.editor.selectLeft": "alt+s"}))
    app, _ = make_app()
    async with app.run_test(size=SIZE) as pilot:
        editor = await _editor(pilot, "keep this part")
        await pilot.press("shift+home")
        assert editor.selected_text == "keep this part"
        await pilot.press("end", "alt+s", "alt+s", "alt+s", "alt+s")
        assert editor.selected_text == "part"
        await pilot.press("backspace")
        assert editor.text == "keep this "
        await pilot.press("shift+left")
        assert editor.selected_text == "", "rebinding selectLeft took shift+left away"
