"""TreeScreen driven with the Textual pilot on a real session file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.widgets import OptionList, TextArea

from pi_tui.modes.interactive.screens.tree import ALREADY_HERE, TreeChoice, TreeScreen
from pi_tui.modes.interactive.screens.tree_dialogs import (
    CustomInstructionsScreen,
    LabelEditScreen,
    SummarizeChoiceScreen,
    SummarizingScreen,
)
from tests.modes.interactive.screens.builders import (
    BranchedSession,
    ScreenHost,
    build_branched_session,
)

SIZE = (120, 40)


@pytest.fixture
def branched(tmp_path: Path) -> BranchedSession:
    return build_branched_session(tmp_path, tmp_path / "sessions")


def _label_entries(path: Path, target: str) -> list[str | None]:
    """The label entries written for ``target``, read straight from the session file."""
    entries = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return [e.get("label") for e in entries if e.get("type") == "label" and e.get("targetId") == target]


def _selected_id(screen: TreeScreen) -> str | None:
    row = screen.selected
    return row.entry_id if row else None


async def test_opens_on_the_current_leaf_and_moves(branched: BranchedSession):
    screen = TreeScreen(branched.manager)
    app = ScreenHost(screen)
    async with app.run_test(size=SIZE) as pilot:
        assert _selected_id(screen) == branched.new_answer
        assert str(screen.query_one("#tree-status").render()) == "(6/11)"
        await pilot.press("up", "up")
        assert _selected_id(screen) == branched.summary
        await pilot.press("down")
        assert _selected_id(screen) == branched.new_user
        await pilot.press("right")  # a page down reaches the last row
        assert _selected_id(screen) == branched.old_leaf


async def test_fold_and_segment_jumps(branched: BranchedSession):
    screen = TreeScreen(branched.manager)
    app = ScreenHost(screen)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+left")  # not foldable: jump to the start of this segment
        assert _selected_id(screen) == branched.summary
        await pilot.press("ctrl+right")  # next segment start: the other branch
        assert _selected_id(screen) == branched.old_user
        await pilot.press("ctrl+left")  # foldable: fold it
        assert screen.rows[-1].folded and len(screen.rows) == 7
        await pilot.press("ctrl+right")  # folded: unfold
        assert len(screen.rows) == 11 and _selected_id(screen) == branched.old_user


async def test_type_to_search_backspace_and_escape(branched: BranchedSession):
    screen = TreeScreen(branched.manager)
    app = ScreenHost(screen)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"third answer")
        assert [row.text for row in screen.rows] == ["assistant: third answer after compaction"]
        assert "third answer" in str(screen.query_one("#tree-search").render())
        await pilot.press(*["backspace"] * 7)
        assert screen.view.search == "third"
        assert [row.text for row in screen.rows] == [
            "user: third prompt after compaction",
            "assistant: third answer after compaction",
        ]
        await pilot.press("escape")  # clears the search
        assert screen.view.search == "" and len(screen.rows) == 11 and app.results == []
        await pilot.press("escape")  # closes
        assert app.results == [None]


async def test_filter_keys_toggle_and_cycle(branched: BranchedSession):
    screen = TreeScreen(branched.manager)
    app = ScreenHost(screen)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+u")
        assert screen.view.filter == "user-only" and len(screen.rows) == 4
        assert "[user-only]" in str(screen.query_one("#tree-status").render())
        await pilot.press("ctrl+u")
        assert screen.view.filter == "default"
        await pilot.press("ctrl+a")
        assert screen.view.filter == "all" and len(screen.rows) == 14
        await pilot.press("ctrl+d")
        assert screen.view.filter == "default"
        await pilot.press("ctrl+o", "ctrl+o")
        assert screen.view.filter == "user-only"
        await pilot.press("ctrl+t")
        assert screen.view.filter == "no-tools"
        assert "[bash: echo hello]" not in [row.text for row in screen.rows]


async def test_initial_filter_comes_from_the_setting(branched: BranchedSession):
    screen = TreeScreen(branched.manager, initial_filter="user-only")
    async with ScreenHost(screen).run_test(size=SIZE):
        assert screen.view.filter == "user-only"
        assert _selected_id(screen) == branched.new_user  # the leaf is hidden: its user message


async def test_shift_l_sets_and_clears_a_label_in_the_session_file(branched: BranchedSession):
    screen = TreeScreen(branched.manager)
    app = ScreenHost(screen)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("up", "up", "up")
        assert _selected_id(screen) == branched.done
        await pilot.press("L")
        assert isinstance(app.screen, LabelEditScreen)
        await pilot.press(*"checkpoint", "enter")
        assert app.screen is screen
        row = screen.selected
        assert row is not None and row.entry_id == branched.done and row.label == "checkpoint"
        path = branched.manager.session_file
        assert path is not None
        assert _label_entries(path, branched.done) == ["checkpoint"]
        # Clearing: an empty label removes it.
        await pilot.press("L")
        await pilot.press(*["backspace"] * 10, "enter")
        assert screen.selected is not None and screen.selected.label is None
        assert _label_entries(path, branched.done) == ["checkpoint", None]
        # Esc in the label editor changes nothing.
        await pilot.press("L", "x", "escape")
        assert screen.selected.label is None


async def test_choosing_the_current_leaf_says_already_there(branched: BranchedSession):
    screen = TreeScreen(branched.manager)
    app = ScreenHost(screen)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        assert app.results == [None]
        assert [n.message for n in app._notifications] == [ALREADY_HERE]


@pytest.mark.parametrize(
    ("choice_downs", "expected_summarize"),
    [(0, False), (1, True)],
)
async def test_summary_chooser_returns_the_choice(branched: BranchedSession, choice_downs, expected_summarize):
    screen = TreeScreen(branched.manager)
    app = ScreenHost(screen)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("down", "down")
        assert _selected_id(screen) == branched.old_answer
        await pilot.press("enter")
        assert isinstance(app.screen, SummarizeChoiceScreen)
        options = app.screen.query_one(OptionList)
        assert [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)] == [
            "No summary",
            "Summarize",
            "Summarize with custom prompt",
        ]
        await pilot.press(*["down"] * choice_downs, "enter")
        assert app.results == [TreeChoice(target_id=branched.old_answer, summarize=expected_summarize)]


async def test_custom_prompt_path_and_escape_steps_back(branched: BranchedSession):
    screen = TreeScreen(branched.manager)
    app = ScreenHost(screen)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("up")
        target = _selected_id(screen)
        assert target == branched.new_user
        await pilot.press("enter", "down", "down", "enter")
        assert isinstance(app.screen, CustomInstructionsScreen)
        await pilot.press("escape")  # editor → chooser
        assert isinstance(app.screen, SummarizeChoiceScreen)
        await pilot.press("escape")  # chooser → tree
        assert app.screen is screen and app.results == []
        await pilot.press("enter", "down", "down", "enter")
        editor = app.screen.query_one(TextArea)
        editor.insert("focus on the failing tests")
        await pilot.press("ctrl+s")
        assert app.results == [
            TreeChoice(target_id=branched.new_user, summarize=True, custom_instructions="focus on the failing tests")
        ]


async def test_skip_prompt_setting_chooses_without_asking(branched: BranchedSession):
    screen = TreeScreen(branched.manager, skip_summary_prompt=True)
    app = ScreenHost(screen)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("up", "enter")
        assert app.results == [TreeChoice(target_id=branched.new_user, summarize=False)]


async def test_summarizing_screen_reports_cancel_or_finish():
    loader = SummarizingScreen()
    app = ScreenHost(loader)
    async with app.run_test(size=SIZE) as pilot:
        assert "Summarizing branch... (Esc to cancel)" in str(loader.query_one(".dialog-title").render())
        await pilot.press("escape")
        assert app.results == [True]
    loader = SummarizingScreen()
    app = ScreenHost(loader)
    async with app.run_test(size=SIZE) as pilot:
        loader.finish()
        await pilot.pause()
        assert app.results == [False]


async def test_reopens_on_a_given_entry(branched: BranchedSession):
    screen = TreeScreen(branched.manager, select_id=branched.old_answer)
    async with ScreenHost(screen).run_test(size=SIZE):
        assert _selected_id(screen) == branched.old_answer


async def test_mouse_click_moves_then_chooses(branched: BranchedSession):
    screen = TreeScreen(branched.manager)
    app = ScreenHost(screen)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.click("#tree-rows", offset=(10, 2))
        assert _selected_id(screen) == branched.done
        await pilot.click("#tree-rows", offset=(10, 2))
        assert isinstance(app.screen, SummarizeChoiceScreen)


async def test_a_long_session_scrolls_to_keep_the_cursor_visible(tmp_path: Path):
    from pi_tui.core.messages import user_message
    from pi_tui.core.session.manager import SessionManager
    from tests.modes.interactive.screens.builders import assistant

    manager = SessionManager.in_memory(tmp_path)
    for index in range(200):
        manager.append_message(user_message(f"prompt {index}"))
        manager.append_message(assistant(f"answer {index}"))
    screen = TreeScreen(manager)
    async with ScreenHost(screen).run_test(size=SIZE) as pilot:
        rows = screen.query_one("#tree-rows")
        await pilot.pause()
        assert _selected_id(screen) == manager.leaf_id and rows.scroll_offset.y > 300
        await pilot.press("left", "left")
        cursor = rows.cursor
        assert cursor is not None and rows.scroll_offset.y <= cursor < rows.scroll_offset.y + rows.size.height


async def test_summarizing_screen_finished_before_it_mounts_closes_itself():
    loader = SummarizingScreen()
    loader.finish()
    app = ScreenHost(loader)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert app.results == [False] and app.screen is not loader


async def test_a_long_row_keeps_its_label_and_active_marker(tmp_path: Path):
    from pi_tui.core.messages import user_message
    from pi_tui.core.session.manager import SessionManager
    from tests.modes.interactive.screens.builders import assistant

    manager = SessionManager.in_memory(tmp_path)
    manager.append_message(user_message("short question"))
    manager.append_message(assistant("word " * 80))
    manager.append_label_change(manager.leaf_id, "keep-me")
    screen = TreeScreen(manager)
    async with ScreenHost(screen).run_test(size=(60, 20)) as pilot:
        await pilot.pause()
        rows = screen.query_one("#tree-rows")
        lines = [rows.render_line(y).text for y in range(rows.row_count)]
        active = [line for line in lines if "← active" in line]
        assert len(active) == 1, lines
        assert "[keep-me]" in active[0] and "…" in active[0]
        assert active[0].rstrip().endswith("← active")


async def test_the_files_switch_travels_with_every_summary_choice(branched: BranchedSession):
    from pi_tui.modes.interactive.screens.tree import FilesPreview

    asked: list[str] = []

    async def preview(target: str) -> FilesPreview | None:
        asked.append(target)
        return FilesPreview(text="1 deleted: g.txt")

    screen = TreeScreen(branched.manager, files_preview=preview)
    app = ScreenHost(screen)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("up")
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, SummarizeChoiceScreen)
        assert str(app.screen.query_one("#files-preview").render()) == "1 deleted: g.txt"
        await pilot.press("escape")  # back to the tree, and again: the preview is not made twice
        await pilot.press("enter")
        await pilot.pause()
        assert asked == [branched.new_user]
        await pilot.press("r", "r", "r", "down", "down", "enter")  # switched off; custom prompt
        app.screen.query_one(TextArea).insert("focus")
        await pilot.press("ctrl+s")
        assert app.results == [TreeChoice(target_id=branched.new_user, summarize=True,
                                          custom_instructions="focus", restore_files=False)]


async def test_with_skip_prompt_only_the_files_are_asked_and_only_when_they_would_change(branched: BranchedSession):
    from pi_tui.modes.interactive.screens.tree import FilesPreview

    async def nothing(_target: str) -> FilesPreview | None:
        return None

    screen = TreeScreen(branched.manager, skip_summary_prompt=True, files_preview=nothing)
    app = ScreenHost(screen)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("up", "enter")
        await pilot.pause()
        assert app.results == [TreeChoice(target_id=branched.new_user)]

    async def some(_target: str) -> FilesPreview | None:
        return FilesPreview(text="2 changed: a, b")

    screen = TreeScreen(branched.manager, skip_summary_prompt=True, files_preview=some)
    app = ScreenHost(screen)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("up", "enter")
        await pilot.pause()
        options = app.screen.query_one(OptionList)
        assert [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)] == ["Move here"]
        await pilot.press("enter")
        assert app.results == [TreeChoice(target_id=branched.new_user, restore_files=True)]
