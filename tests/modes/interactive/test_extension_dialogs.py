"""Extension dialogs in the TUI: the real app on a real session with real extensions (the
permission-gate example among them), answered with key presses through the Textual pilot."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Static

from pi_tui.modes.interactive.screens.extension_dialogs import (
    ExtensionConfirmScreen,
    ExtensionEditorScreen,
    ExtensionInputScreen,
    ExtensionSelectScreen,
)
from pi_tui.modes.interactive.widgets.editor import PromptEditor
from pi_tui.modes.interactive.widgets.footer import StatusFooter
from pi_tui.modes.interactive.widgets.tool_call import ToolCallPanel
from tests.modes.interactive.conftest import ready, settle, wait_for

SIZE = (120, 40)
EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "extensions"
RM_TURNS = [
    {"tool_calls": [{"id": "b1", "name": "bash", "arguments": {"command": "rm -rf victim"}}]},
    {"text": "done"},
]
ASKER = '''
def register(pi):
    async def ask(args, ctx):
        colour = await ctx.ui.select("Colour?", ["red", "green", "blue"])
        name = await ctx.ui.input("Name?", "your name")
        notes = await ctx.ui.editor("Notes", "first")
        ctx.ui.set_status("asker", f"{colour} for {name}")
        ctx.ui.notify(f"{colour}|{name}|{notes}")
    pi.register_command("ask", ask)

    async def quick(args, ctx):
        answer = await ctx.ui.confirm("Quick?", "answer fast", timeout_s=0.5)
        ctx.ui.notify(f"quick={answer}")
    pi.register_command("quick", quick)
'''


async def submit(pilot: Any, text: str) -> None:
    await ready(pilot)
    editor = pilot.app.screen.query_one(PromptEditor)
    editor.insert(text)
    await pilot.pause()
    await pilot.press("enter")


def notes_of(session: Any) -> list[str]:
    seen: list[str] = []
    session.subscribe(lambda e: seen.append(e["message"]) if e.get("type") == "notify" else None)
    return seen


@pytest.mark.parametrize(("key", "runs"), [("n", False), ("escape", False), ("y", True)])
async def test_the_permission_gate_asks_and_the_answer_decides(make_app: Any, project: Path,
                                                             key: str, runs: bool) -> None:
    (project / "victim").mkdir()
    app, session = make_app(RM_TURNS, load_extensions=True,
                            extension_paths=[str(EXAMPLES / "permission_gate.py")])
    assert session.has_ui is False  # until the app attaches it
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "clean up")
        await wait_for(pilot, lambda: isinstance(app.screen, ExtensionConfirmScreen))
        assert session.has_ui is True
        dialog = app.screen
        shown = " ".join(str(w.render()) for w in dialog.query("Static"))
        assert "Allow a dangerous command (rm -rf)?" in shown and "rm -rf victim" in shown
        assert "closes in" in shown  # the example gives a timeout
        await pilot.press(key)
        await settle(app, pilot)
        assert not isinstance(app.screen, ExtensionConfirmScreen)
        panel = app.screen.query_one(ToolCallPanel)
        if runs:
            assert panel.state.status == "ok"
            assert not (project / "victim").exists()
        else:
            assert panel.state.status == "error"
            assert "Blocked by user: the command uses rm -rf" in (panel.state.output or "")
            assert (project / "victim").is_dir()


async def test_select_input_and_editor_dialogs_and_a_footer_status(make_app: Any, project: Path) -> None:
    (project / "asker.py").write_text(ASKER)
    app, session = make_app([], load_extensions=True, extension_paths=[str(project / "asker.py")])
    notes = notes_of(session)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "/ask")
        await wait_for(pilot, lambda: isinstance(app.screen, ExtensionSelectScreen))
        select = app.screen
        assert isinstance(select, ExtensionSelectScreen)
        await pilot.press("b", "l")
        assert select.shown == ["blue"]
        await pilot.press("backspace", "backspace", "down")
        await pilot.press("enter")  # the second of all three: green

        await wait_for(pilot, lambda: isinstance(app.screen, ExtensionInputScreen))
        await pilot.press("A", "d", "a", "enter")

        await wait_for(pilot, lambda: isinstance(app.screen, ExtensionEditorScreen))
        await pilot.press("enter", "s", "e", "c", "o", "n", "d")  # enter is a new line here
        await pilot.press("ctrl+s")

        await wait_for(pilot, lambda: any("|" in n for n in notes))
        await settle(app, pilot)
        assert notes[-1] == "green|Ada|first\nsecond"
        footer = app.screen.query_one(StatusFooter)
        assert footer.data.statuses == {"asker": "green for Ada"}
        assert "green for Ada" in str(footer.render())
        assert footer.styles.height is not None and footer.styles.height.value == 3


async def test_escape_cancels_a_select_and_a_timeout_closes_a_dialog(make_app: Any, project: Path) -> None:
    (project / "asker.py").write_text(ASKER)
    app, session = make_app([], load_extensions=True, extension_paths=[str(project / "asker.py")])
    notes = notes_of(session)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "/ask")
        await wait_for(pilot, lambda: isinstance(app.screen, ExtensionSelectScreen))
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, ExtensionInputScreen))
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, ExtensionEditorScreen))
        await pilot.press("escape")
        await wait_for(pilot, lambda: any("|" in n for n in notes))
        assert notes[-1] == "None|None|None"

        await settle(app, pilot)
        shown = dialogs_as_shown(app)
        await submit(pilot, "/quick")
        # Nobody answers: the dialog is shown, closes by itself and the extension reads "no".
        # Seen through its mount, not by polling app.screen: on a loaded machine the whole
        # dialog can come and go between two pilot steps (it failed 4 of 6 under CPU burners).
        await wait_for(pilot, lambda: "quick=False" in notes)
        await settle(app, pilot)
        assert [title for title, _ in shown] == ["Quick?"]
        assert not isinstance(app.screen, ExtensionConfirmScreen)


TWO_AT_ONCE = '''
import asyncio

def register(pi):
    async def two(args, ctx):
        async def ask(title, timeout_s):
            answer = await ctx.ui.confirm(title, "", timeout_s=timeout_s)
            ctx.ui.notify(f"{title}={answer}")
        await asyncio.gather(ask("First", None), ask("Second", 1.0))
    pi.register_command("two", two)
'''


def dialogs_as_shown(app: Any) -> list[tuple[str, str]]:
    """(title, help line) of each extension dialog, read the moment it is on screen: on a loaded
    machine a pilot step can take longer than a short dialog stays open."""
    import asyncio

    seen: list[tuple[str, str]] = []

    async def read_when_displayed(screen: Any) -> None:
        await screen.displayed.wait()
        seen.append((str(screen.query_one(".ext-title", Static).render()),
                     str(screen.query_one("#ext-help", Static).render())))

    def pushed(screen: Any) -> None:
        if isinstance(screen, ExtensionConfirmScreen) and not screen.displayed.is_set():
            readers.add(task := asyncio.ensure_future(read_when_displayed(screen)))
            task.add_done_callback(readers.discard)

    readers: set[asyncio.Future[None]] = set()
    app.screen_change_signal.subscribe(app, pushed, immediate=True)
    return seen


async def test_a_dialog_waiting_behind_another_gets_its_whole_timeout_once_shown(
        make_app: Any, project: Path) -> None:
    # Two dialogs asked together are shown one after the other; the second one's time must not
    # run out (unseen) while the person is still answering the first.
    (project / "two.py").write_text(TWO_AT_ONCE)
    app, session = make_app([], load_extensions=True, extension_paths=[str(project / "two.py")])
    notes = notes_of(session)
    noted_at: dict[str, float] = {}
    session.subscribe(lambda e: noted_at.setdefault(e["message"], time.monotonic())
                      if e.get("type") == "notify" else None)
    async with app.run_test(size=SIZE) as pilot:
        shown = dialogs_as_shown(app)
        await submit(pilot, "/two")
        await wait_for(pilot, lambda: len(shown) > 0)  # app.screen changes at the push, before it is shown
        assert [title for title, _ in shown] == ["First"]
        await pilot.pause(1.5)  # the person takes longer than the second dialog's timeout (1 s)
        assert notes == []
        await pilot.press("y")
        await wait_for(pilot, lambda: len(notes) == 2)  # nobody answers the second: it times out
        assert notes == ["First=True", "Second=False"]
        # It was shown after the first answer, with its whole countdown, and ran all of it.
        assert shown[1][0] == "Second" and shown[1][1].endswith("(closes in 1s)")
        assert noted_at["Second=False"] - noted_at["First=True"] >= 1.0


ESCAPES = r'''
def register(pi):
    async def noisy(args, ctx):
        ctx.ui.set_status("k", "\x1b[31mred\x1b[0m\x07 \x1b]0;pwned\x07ok")
        await ctx.ui.confirm("\x1b[2JWipe?", "rm -rf \x1b]0;title\x07x\x1b[1A")
    pi.register_command("noisy", noisy)
'''


async def test_terminal_escapes_in_statuses_and_dialogs_are_dropped(make_app: Any, project: Path) -> None:
    # Raw escape sequences (an extension's colours, a model-written command shown by the
    # permission gate) would reach the terminal: move the cursor, set the window title, and
    # leave the footer and the dialog misdrawn.
    (project / "noisy.py").write_text(ESCAPES)
    app, _session = make_app([], load_extensions=True, extension_paths=[str(project / "noisy.py")])
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "/noisy")
        await wait_for(pilot, lambda: isinstance(app.screen, ExtensionConfirmScreen))
        shown = [str(w.render()) for w in app.screen.query(".ext-title, .ext-message").results(Static)]
        assert shown == ["Wipe?", "rm -rf x"]
        await pilot.press("n")
        await settle(app, pilot)
        footer = app.screen.query_one(StatusFooter)
        assert footer.data.statuses == {"k": "red ok"}
