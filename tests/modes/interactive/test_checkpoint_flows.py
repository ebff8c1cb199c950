"""The TUI's file restores through the real app (Textual pilot), the real session and git:
/undo brings the files back with the prompt, and a /tree choice asks "Restore files too?" with
the preview before it writes anything."""

from __future__ import annotations

import shutil

import pytest

from pi_tui.modes.interactive.screens.tree import TreeChoice
from pi_tui.modes.interactive.widgets.editor import PromptEditor
from tests.modes.interactive.conftest import ready, settle, wait_for

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="LOUD SKIP: no git on PATH")
SIZE = (120, 40)


def _write(path: str, content: str) -> dict:
    return {"tool_calls": [{"name": "write", "arguments": {"path": path, "content": content}}]}


async def _prompt(app, pilot, text: str) -> None:
    await ready(pilot)
    app.screen.query_one(PromptEditor).insert(text)
    await pilot.pause()
    await pilot.press("enter")
    await settle(app, pilot)


async def test_undo_restores_the_files_and_the_prompt(make_app, project):
    app, _session = make_app([_write("f.txt", "one"), {"text": "1"}, _write("f.txt", "two"), {"text": "2"}])
    async with app.run_test(size=SIZE) as pilot:
        await _prompt(app, pilot, "first")
        await _prompt(app, pilot, "second")
        assert (project / "f.txt").read_text() == "two"
        await _prompt(app, pilot, "/undo")
        await wait_for(pilot, lambda: (project / "f.txt").read_text() == "one")
        await settle(app, pilot)
        editor = app.screen.query_one(PromptEditor)
        assert editor.text == "second"
        editor.clear()
        await _prompt(app, pilot, "/redo")
        await wait_for(pilot, lambda: (project / "f.txt").read_text() == "two")


async def test_a_tree_move_asks_before_restoring_and_shows_the_preview(make_app, project):
    app, session = make_app([_write("f.txt", "one"), {"text": "1"}, _write("g.txt", "new"), {"text": "2"}])
    async with app.run_test(size=SIZE) as pilot:
        await _prompt(app, pilot, "first")
        await _prompt(app, pilot, "second")
        second = [e["id"] for e in session.session_manager.get_entries()
                  if e.get("type") == "message" and e["message"]["role"] == "user"][1]
        app.screen.slash._tree_chosen(TreeChoice(target_id=second))
        await wait_for(pilot, lambda: type(app.screen).__name__ == "ConfirmScreen")
        detail = str(app.screen.query_one("#confirm-detail").render())
        assert "1 deleted: g.txt" in detail
        assert (project / "g.txt").exists()  # nothing written before the answer
        await pilot.press("y")
        await wait_for(pilot, lambda: not (project / "g.txt").exists())
        await settle(app, pilot)
        assert (project / "f.txt").read_text() == "one"
        assert app.screen.query_one(PromptEditor).text == "second"
