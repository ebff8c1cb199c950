"""SessionPickerScreen on real session files: listing, search, scope toggle, open, delete."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from pi_tui.core.messages import now_ms, user_message
from pi_tui.core.session.manager import SessionManager
from pi_tui.modes.interactive.screens.confirm import ConfirmScreen
from pi_tui.modes.interactive.screens.session_picker import SessionPickerScreen, format_age
from tests.modes.interactive.screens.builders import ScreenHost, assistant

SIZE = (120, 40)


def _write_session(session_dir: Path, cwd: Path, prompt: str, *, name: str | None = None) -> Path:
    manager = SessionManager.create(cwd, session_dir)
    manager.append_message(user_message(prompt))
    manager.append_message(assistant(f"answer to {prompt}"))
    if name is not None:
        manager.append_session_info(name)
    path = manager.session_file
    manager.close()
    assert path is not None and path.exists()
    return path


@pytest.fixture
def sessions(tmp_path: Path) -> dict[str, Path]:
    root = tmp_path / "sessions"
    here, there = root / "--here--", root / "--there--"
    return {
        "root": root,
        "here": here,
        "refactor": _write_session(here, tmp_path, "refactor the parser", name="parser work"),
        "tests": _write_session(here, tmp_path, "run the tests and fix what fails"),
        "other": _write_session(there, tmp_path / "other", "an other project's question"),
    }


def _picker(sessions: dict[str, Path], **kwargs) -> SessionPickerScreen:
    return SessionPickerScreen(
        session_dir=sessions["here"],
        sessions_root=sessions["root"],
        now=lambda: datetime(2030, 1, 1, tzinfo=UTC),
        **kwargs,
    )


async def _loaded(app: ScreenHost, pilot) -> None:
    await app.workers.wait_for_complete()
    await pilot.pause()


async def test_lists_this_project_then_all_with_tab(sessions):
    screen = _picker(sessions)
    app = ScreenHost(screen)
    async with app.run_test(size=SIZE) as pilot:
        await _loaded(app, pilot)
        assert {info.path for info in screen.shown} == {sessions["refactor"], sessions["tests"]}
        assert {info.name or info.first_message for info in screen.shown} == {"parser work", "run the tests and fix what fails"}
        await pilot.press("tab")
        await _loaded(app, pilot)
        assert screen.all_projects
        assert {info.path for info in screen.shown} == {sessions["refactor"], sessions["tests"], sessions["other"]}
        await pilot.press("tab")
        assert len(screen.shown) == 2


async def test_typing_searches_every_message_and_enter_opens(sessions):
    screen = _picker(sessions)
    app = ScreenHost(screen)
    async with app.run_test(size=SIZE) as pilot:
        await _loaded(app, pilot)
        await pilot.press(*"answer parser")  # matches the assistant's text, not only the first message
        assert [info.path for info in screen.shown] == [sessions["refactor"]]
        await pilot.press("enter")
        assert app.results == [sessions["refactor"]]


async def test_named_only_and_no_match_message(sessions):
    screen = _picker(sessions)
    app = ScreenHost(screen)
    async with app.run_test(size=SIZE) as pilot:
        await _loaded(app, pilot)
        await pilot.press("ctrl+n")
        assert [info.name for info in screen.shown] == ["parser work"]
        await pilot.press(*"zzz")
        assert screen.shown == []
        await pilot.press("escape")
        assert app.results == [None]


async def test_ctrl_d_deletes_after_confirmation(sessions):
    deleted: list[Path] = []

    def delete(path: Path) -> None:
        deleted.append(path)
        path.unlink()

    screen = _picker(sessions, delete=delete)
    app = ScreenHost(screen)
    async with app.run_test(size=SIZE) as pilot:
        await _loaded(app, pilot)
        target = screen.shown[0].path
        await pilot.press("ctrl+d")
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("n")  # declined: nothing happens
        assert deleted == [] and target.exists()
        await pilot.press("ctrl+d")
        await pilot.press("y")
        await _loaded(app, pilot)
        assert deleted == [target] and not target.exists()
        assert target not in [info.path for info in screen.shown] and len(screen.shown) == 1


async def test_the_open_session_cannot_be_deleted(sessions):
    screen = _picker(sessions, current_session=sessions["tests"], delete=lambda path: path.unlink())
    app = ScreenHost(screen)
    async with app.run_test(size=SIZE) as pilot:
        await _loaded(app, pilot)
        index = [info.path for info in screen.shown].index(sessions["tests"])
        await pilot.press(*["down"] * index, "ctrl+d")
        assert app.screen is screen and sessions["tests"].exists()
        assert any("open session" in note.message for note in app._notifications)


async def test_an_empty_project_says_so(tmp_path: Path):
    screen = SessionPickerScreen(session_dir=tmp_path / "none", sessions_root=tmp_path)
    app = ScreenHost(screen)
    async with app.run_test(size=SIZE) as pilot:
        await _loaded(app, pilot)
        assert screen.shown == []
        assert str(screen.query_one("#picker-empty").render()) == "No sessions yet."
        await pilot.press("enter")
        assert app.results == []


@pytest.mark.parametrize(
    ("delta", "expected"),
    [
        (timedelta(seconds=20), "now"),
        (timedelta(minutes=5), "5m"),
        (timedelta(hours=3), "3h"),
        (timedelta(days=2), "2d"),
        (timedelta(days=15), "2w"),
        (timedelta(days=65), "2mo"),
        (timedelta(days=800), "2y"),
    ],
)
def test_format_age(delta, expected):
    now = datetime(2030, 1, 1, tzinfo=UTC)
    assert format_age(now - delta, now) == expected


def _write_fork(session_dir: Path, cwd: Path, parent: Path, prompt: str) -> Path:
    manager = SessionManager.create(cwd, session_dir)
    manager.new_session(parent_session=str(parent))
    # The newest session by a minute: written right after the others, its message could carry
    # the same millisecond (a tie the file mtimes, which may tick only every few ms, can't break).
    manager.append_message(user_message(prompt, timestamp=now_ms() + 60_000))
    manager.append_message(assistant("forked answer"))
    path = manager.session_file
    manager.close()
    assert path is not None
    return path


async def test_sorts_threaded_recent_and_relevance(sessions, tmp_path: Path):
    fork = _write_fork(sessions["here"], tmp_path, sessions["refactor"], "a fork about the tests of the parser")
    screen = _picker(sessions)
    app = ScreenHost(screen)
    async with app.run_test(size=SIZE) as pilot:
        await _loaded(app, pilot)
        assert screen.sort == "threaded"
        # The fork is newest, but threaded lists it right under the session it came from.
        paths = [info.path for info in screen.shown]
        assert paths.index(fork) == paths.index(sessions["refactor"]) + 1
        assert str(screen.session_row(paths.index(fork))).startswith("  └ ")
        await pilot.press("ctrl+s")
        assert screen.sort == "recent" and screen.shown[0].path == fork
        await pilot.press("ctrl+s", *"tests")
        assert screen.sort == "relevance"
        assert {info.path for info in screen.shown} == {sessions["tests"], fork}


async def test_ctrl_p_shows_paths_and_ctrl_r_renames(sessions):
    screen = _picker(sessions)
    app = ScreenHost(screen)
    async with app.run_test(size=SIZE) as pilot:
        await _loaded(app, pilot)
        await pilot.press("ctrl+p")
        first = str(screen.session_row(0))
        assert screen.shown[0].path.name[-40:] in first
        index = [info.path for info in screen.shown].index(sessions["tests"])
        await pilot.press(*["down"] * index, "ctrl+r")
        await pilot.press(*"test fixing", "enter")
        await _loaded(app, pilot)
        assert [info.name for info in screen.shown if info.path == sessions["tests"]] == ["test fixing"]
    reopened = SessionManager.open(sessions["tests"], cwd=sessions["tests"].parent)
    assert reopened.session_name == "test fixing"
    reopened.close()


async def test_renaming_the_open_session_goes_through_the_callback(sessions):
    names: list[str] = []
    screen = _picker(sessions, current_session=sessions["tests"], rename_current=names.append)
    app = ScreenHost(screen)
    async with app.run_test(size=SIZE) as pilot:
        await _loaded(app, pilot)
        index = [info.path for info in screen.shown].index(sessions["tests"])
        await pilot.press(*["down"] * index, "ctrl+r", *"now named", "enter")
        await _loaded(app, pilot)
        assert names == ["now named"]
        assert [info.name for info in screen.shown if info.path == sessions["tests"]] == ["now named"]


async def test_a_named_session_shows_its_name_then_its_first_message(sessions):
    screen = _picker(sessions)
    app = ScreenHost(screen)
    async with app.run_test(size=SIZE) as pilot:
        await _loaded(app, pilot)
        index = [info.path for info in screen.shown].index(sessions["refactor"])
        assert str(screen.session_row(index)).startswith("  parser work  refactor the parser")
