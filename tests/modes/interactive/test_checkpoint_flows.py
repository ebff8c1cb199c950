"""The TUI's file restores through the real app (Textual pilot), the real session and git:
/undo brings the files back with the prompt, and the /tree and /fork chooser shows the restore
preview and a "restore files" switch beside its summary choice before it writes anything."""

from __future__ import annotations

import shutil

import pytest

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


def _user_ids(session) -> list[str]:
    return [e["id"] for e in session.session_manager.get_entries()
            if e.get("type") == "message" and e["message"]["role"] == "user"]


def _options(app) -> list[str]:
    from textual.widgets import OptionList

    options = app.screen.query_one(OptionList)
    return [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]


def _text(app, selector: str) -> str:
    return str(app.screen.query_one(selector).render())


async def _choose_in_tree(app, pilot, target: str) -> None:
    await app.screen.slash._open_tree(select_id=target)
    await wait_for(pilot, lambda: type(app.screen).__name__ == "TreeScreen")
    await pilot.press("enter")
    await wait_for(pilot, lambda: type(app.screen).__name__ == "SummarizeChoiceScreen")


async def test_the_tree_chooser_shows_the_preview_beside_the_summary_choice(make_app, project):
    app, session = make_app([_write("f.txt", "one"), {"text": "1"}, _write("g.txt", "new"), {"text": "2"}])
    async with app.run_test(size=SIZE) as pilot:
        await _prompt(app, pilot, "first")
        await _prompt(app, pilot, "second")
        (project / "f.txt").write_text("edited by the user")  # since the last snapshot
        leaf = session.session_manager.leaf_id
        await _choose_in_tree(app, pilot, _user_ids(session)[1])
        assert _options(app) == ["No summary", "Summarize", "Summarize with custom prompt"]
        assert _text(app, "#restore-toggle").startswith("[x] Restore files too")
        preview = _text(app, "#files-preview")
        assert "1 changed: f.txt" in preview and "1 deleted: g.txt" in preview
        assert "Edited since the last snapshot (kept in the snapshot of the point you leave): f.txt" in preview
        assert (project / "g.txt").exists()  # nothing written before the choice
        await pilot.press("enter")  # No summary, files restored
        await wait_for(pilot, lambda: not (project / "g.txt").exists())
        await settle(app, pilot)
        assert (project / "f.txt").read_text() == "one"
        assert app.screen.query_one(PromptEditor).text == "second"
        await session.navigate_tree(leaf, restore_files=True)  # back where we were: the user's edit too
        assert (project / "f.txt").read_text() == "edited by the user"


async def test_switching_restore_off_moves_the_conversation_only(make_app, project):
    app, session = make_app([_write("f.txt", "one"), {"text": "1"}, _write("g.txt", "new"), {"text": "2"}])
    async with app.run_test(size=SIZE) as pilot:
        await _prompt(app, pilot, "first")
        await _prompt(app, pilot, "second")
        leaf = session.session_manager.leaf_id
        await _choose_in_tree(app, pilot, _user_ids(session)[1])
        await pilot.press("r")
        assert _text(app, "#restore-toggle").startswith("[ ] Restore files too")
        await pilot.press("enter")
        await wait_for(pilot, lambda: session.session_manager.leaf_id != leaf)
        await settle(app, pilot)
        assert (project / "g.txt").read_text() == "new"  # the files stayed


async def test_a_missing_snapshot_is_said_in_the_chooser(make_app, project, agent_dir):
    from pi_tui.checkpoints.git_store import store_dir_for

    app, session = make_app([_write("f.txt", "one"), {"text": "1"}, _write("f.txt", "two"), {"text": "2"}])
    async with app.run_test(size=SIZE) as pilot:
        await _prompt(app, pilot, "first")
        await _prompt(app, pilot, "second")
        shutil.rmtree(store_dir_for(agent_dir, project) / "objects")
        await _choose_in_tree(app, pilot, _user_ids(session)[1])
        assert "Files cannot come back" in _text(app, "#files-preview")
        assert not app.screen.query("#restore-toggle")


async def test_fork_shows_the_preview_and_restores_the_files(make_app, project):
    app, session = make_app([_write("f.txt", "one"), {"text": "1"}, _write("g.txt", "new"), {"text": "2"}])
    async with app.run_test(size=SIZE) as pilot:
        await _prompt(app, pilot, "first")
        await _prompt(app, pilot, "second")
        old_file = session.session_manager.session_file
        await _prompt(app, pilot, "/fork")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "ForkPickerScreen")
        await pilot.press("enter")  # newest first: "second"
        await wait_for(pilot, lambda: type(app.screen).__name__ == "SummarizeChoiceScreen")
        assert _options(app) == ["Fork"]
        assert "1 deleted: g.txt" in _text(app, "#files-preview")
        assert (project / "g.txt").exists()
        await pilot.press("enter")
        await wait_for(pilot, lambda: not (project / "g.txt").exists())
        await settle(app, pilot)
        assert session.session_manager.session_file != old_file  # a new session file
        assert (project / "f.txt").read_text() == "one"
        assert app.screen.query_one(PromptEditor).text == "second"
