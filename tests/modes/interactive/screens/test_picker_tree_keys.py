"""The /resume picker's and the /tree navigator's keys are pi's keybinding ids: rebindable in
keybindings.json (through the app's keymap), shown in the help lines, and checked here on what
the screen draws."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from pi_tui.modes.interactive.keymap import Keymap
from pi_tui.modes.interactive.screens.confirm import ConfirmScreen
from pi_tui.modes.interactive.screens.session_picker import SessionPickerScreen
from pi_tui.modes.interactive.screens.tree import TreeScreen
from tests.modes.interactive.screens.builders import (
    BranchedSession,
    ScreenHost,
    build_branched_session,
)
from tests.modes.interactive.screens.test_session_picker import _write_session

SIZE = (120, 40)


def screen_text(app: Any) -> str:
    """The characters on the terminal for the current screen, line by line."""
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


def keymap(overrides: dict[str, object]) -> Keymap:
    km = Keymap.defaults()
    km.apply(overrides)
    assert km.diagnostics == []
    return km


@pytest.fixture
def sessions(tmp_path: Path) -> dict[str, Path]:
    here = tmp_path / "sessions" / "--here--"
    return {
        "root": tmp_path / "sessions",
        "here": here,
        "named": _write_session(here, tmp_path, "refactor the parser", name="parser work"),
        "plain": _write_session(here, tmp_path, "run the tests and fix what fails"),
    }


def picker(sessions: dict[str, Path], **kwargs: Any) -> SessionPickerScreen:
    return SessionPickerScreen(session_dir=sessions["here"], sessions_root=sessions["root"],
                               now=lambda: datetime(2030, 1, 1, tzinfo=UTC), **kwargs)


class KeymapHost(ScreenHost):
    """A host app with a keymap, as ``PiApp`` has (its keybindings.json applied)."""

    def __init__(self, screen: Any, km: Keymap) -> None:
        super().__init__(screen)
        self.keymap = km


async def loaded(app: Any, pilot: Any) -> None:
    await app.workers.wait_for_complete()
    await pilot.pause()


async def test_default_picker_keys_show_in_the_help_and_act(sessions):
    app = ScreenHost(picker(sessions))
    async with app.run_test(size=SIZE) as pilot:
        await loaded(app, pilot)
        text = screen_text(app)
        assert "ctrl+s sort  ctrl+n named  ctrl+p paths  ctrl+r rename  ctrl+d delete" in text
        assert "run the tests and fix what fails" in text and "sorted: threaded" in text
        await pilot.press("ctrl+n")
        text = screen_text(app)
        assert "named only" in text and "parser work" in text and "run the tests" not in text
        await pilot.press("ctrl+s")
        assert "sorted: recent" in screen_text(app)
        await pilot.press("ctrl+p")
        assert ".jsonl" in screen_text(app)  # the file's path is on the row now


async def test_rebound_picker_keys_from_the_apps_keymap(sessions):
    km = keymap({"app.session.toggleSort": "alt+s", "toggleSessionNamedFilter": ["f5"],
                 "app.session.togglePath": "f6", "app.session.delete": "f8"})
    screen = picker(sessions, delete=lambda path: path.unlink())
    app = KeymapHost(screen, km)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(app, pilot)
        assert "alt+s sort  f5 named  f6 paths  ctrl+r rename  f8 delete" in screen_text(app)
        await pilot.press("ctrl+s", "ctrl+n", "ctrl+p")  # the old keys no longer act
        text = screen_text(app)
        assert "sorted: threaded" in text and "named only" not in text and ".jsonl" not in text
        await pilot.press("alt+s", "f5", "f6")
        text = screen_text(app)
        assert "sorted: recent" in text and "named only" in text and ".jsonl" in text
        await pilot.press("ctrl+d")
        assert app.screen is screen
        await pilot.press("f8")
        assert isinstance(app.screen, ConfirmScreen)
        assert "Delete session “parser work”?" in screen_text(app)
        await pilot.press("y")
        await loaded(app, pilot)
        assert not sessions["named"].exists() and "No sessions match." in screen_text(app)


async def test_rename_key_names_the_highlighted_session(sessions):
    km = keymap({"app.session.rename": "f2"})
    app = KeymapHost(picker(sessions), km)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(app, pilot)
        await pilot.press("ctrl+r")
        assert isinstance(app.screen, SessionPickerScreen)
        await pilot.press("f2")
        assert "Session name" in screen_text(app)
        await pilot.press(*"better name", "enter")
        await loaded(app, pilot)
        assert "better name" in screen_text(app)


async def test_noninvasive_delete_edits_the_search_then_deletes_when_it_is_empty(sessions):
    removed: list[Path] = []

    def delete(path: Path) -> str:
        removed.append(path)
        path.unlink()
        return "trash"

    screen = picker(sessions, delete=delete)
    app = ScreenHost(screen)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(app, pilot)
        await pilot.press(*"parser work")
        await pilot.press("ctrl+backspace")  # a word of the search goes, not the session
        assert screen.query_one("#picker-search").value == "parser "
        assert app.screen is screen and removed == []
        await pilot.press("ctrl+backspace")
        assert screen.query_one("#picker-search").value == ""
        await pilot.press(*"fix what")
        await pilot.press("ctrl+u")  # the search field's own clear
        await pilot.press("ctrl+backspace")  # empty search: delete, after the question
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("y")
        await loaded(app, pilot)
        assert len(removed) == 1 and not removed[0].exists()
        assert any(f"Moved {removed[0].name} to the trash" in n.message for n in app._notifications)


@pytest.fixture
def branched(tmp_path: Path) -> BranchedSession:
    return build_branched_session(tmp_path, tmp_path / "sessions")


async def test_tree_fold_keys_fold_what_the_person_sees(branched: BranchedSession):
    app = ScreenHost(TreeScreen(branched.manager))
    async with app.run_test(size=SIZE) as pilot:
        assert "ctrl+←/→ fold" in screen_text(app)
        await pilot.press("ctrl+left", "ctrl+right")  # to the start of the other branch
        text = screen_text(app)
        assert "third answer after compaction" in text and "⊟" in text
        await pilot.press("alt+left")  # pi's second key folds it
        text = screen_text(app)
        assert "⊞" in text and "third answer after compaction" not in text
        await pilot.press("alt+right")
        assert "third answer after compaction" in screen_text(app)


async def test_tree_fold_keys_rebound_in_the_keymap(branched: BranchedSession):
    km = keymap({"treeFoldOrUp": "alt+h", "app.tree.unfoldOrDown": "alt+l"})
    app = KeymapHost(TreeScreen(branched.manager), km)
    async with app.run_test(size=SIZE) as pilot:
        assert "alt+h/alt+l fold" in screen_text(app)
        screen = app.screen
        assert isinstance(screen, TreeScreen)
        before = screen.selected
        await pilot.press("ctrl+left")  # no longer a tree key
        assert screen.selected == before
        await pilot.press("alt+h", "alt+l")
        assert "third answer after compaction" in screen_text(app)
        await pilot.press("alt+h")
        text = screen_text(app)
        assert "⊞" in text and "third answer after compaction" not in text
        await pilot.press("alt+l")
        assert "third answer after compaction" in screen_text(app)


def test_the_ids_act_so_they_are_no_longer_accepted_silently():
    from pi_tui.modes.interactive.keymap import ACTIONS_BY_ID, PI_ONLY_IDS

    for pi_id in ("app.session.toggleNamedFilter", "app.session.togglePath", "app.session.toggleSort",
                  "app.session.rename", "app.session.delete", "app.session.deleteNoninvasive",
                  "app.tree.foldOrUp", "app.tree.unfoldOrDown"):
        assert pi_id in ACTIONS_BY_ID and pi_id not in PI_ONLY_IDS


async def test_tree_filter_and_label_keys_are_pi_ids_too(branched: BranchedSession):
    km = keymap({"app.tree.filter.userOnly": "f3", "app.tree.editLabel": "f4", "app.tree.toggleLabelTimestamp": "T"})
    app = KeymapHost(TreeScreen(branched.manager), km)
    async with app.run_test(size=SIZE) as pilot:
        text = screen_text(app)
        assert "f4 label" in text and "ctrl+d/ctrl+t/f3/ctrl+l/ctrl+a/ctrl+o filters" in text
        assert "assistant: answer on new branch" in text
        await pilot.press("ctrl+u")  # no longer the user-only filter
        assert "assistant: answer on new branch" in screen_text(app)
        await pilot.press("f3")
        text = screen_text(app)
        assert "assistant: answer on new branch" not in text and "user: second prompt" in text
        await pilot.press("L")  # typed into the search now, not the label key
        assert "Type to search: L" in screen_text(app)
        await pilot.press("escape", "f4")
        assert "label" in screen_text(app).lower()
        from pi_tui.modes.interactive.screens.tree_dialogs import LabelEditScreen

        assert isinstance(app.screen, LabelEditScreen)
