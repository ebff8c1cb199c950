"""Progress and notifications from the real app (scripted provider): the bytes its driver is given
for the terminal, with the focus in and out (Textual's FocusIn/FocusOut events)."""

from __future__ import annotations

from typing import Any

from textual import events

from pi_tui.modes.interactive.terminal_signals import PROGRESS_ACTIVE, PROGRESS_CLEAR
from pi_tui.modes.interactive.widgets.editor import PromptEditor
from tests.modes.interactive.conftest import GatedProvider, ready, settle, wait_for

SIZE = (100, 30)
GHOSTTY = {"TERM_PROGRAM": "ghostty"}


def capture(app: Any, env: dict[str, str] | None = None) -> list[str]:
    """Everything the app's driver is asked to write from now on; the signals see ``env``."""
    written: list[str] = []
    driver = app._driver
    original = driver.write

    def write(data: str) -> None:
        written.append(data)
        original(data)

    driver.write = write
    app.signals.env = dict(env if env is not None else GHOSTTY)
    return written


async def send(pilot: Any, text: str) -> None:
    editor = pilot.app.screen.query_one(PromptEditor)
    editor.insert(text)
    await pilot.press("enter")


async def blur(pilot: Any) -> None:
    pilot.app.post_message(events.AppBlur())
    await wait_for(pilot, lambda: pilot.app.app_focus is False)


def signals_in(written: list[str]) -> str:
    """Only our sequences (frames are written through the driver too)."""
    return "".join(w for w in written if w.startswith(("\x1b]9;", "\x1b]777;", "\x1b]99;", "\x1bPtmux;")) or w == "\x07")


async def test_a_run_sets_the_progress_and_clears_it_at_the_end(make_app):
    app, _session = make_app([{"text": "All done here."}], settings={"terminal": {"showTerminalProgress": True}})
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        written = capture(app)
        await send(pilot, "go")
        await settle(app, pilot)
        await wait_for(pilot, lambda: PROGRESS_CLEAR in written)
        ours = signals_in(written)
        assert ours.startswith(PROGRESS_ACTIVE) and ours.endswith(PROGRESS_CLEAR)
        assert "777;notify" not in ours  # focused: no notification


async def test_an_aborted_run_clears_the_progress(make_app):
    provider = GatedProvider([{"text": "never"}])
    app, _session = make_app(provider=provider, settings={"terminal": {"showTerminalProgress": True}})
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        written = capture(app)
        await send(pilot, "go")
        await wait_for(pilot, provider.waiting.is_set)
        await wait_for(pilot, lambda: PROGRESS_ACTIVE in written)
        await pilot.press("escape")
        await settle(app, pilot)
        await wait_for(pilot, lambda: PROGRESS_CLEAR in written)
        assert signals_in(written).endswith(PROGRESS_CLEAR)


async def test_quitting_during_a_run_clears_the_progress(make_app):
    provider = GatedProvider([{"text": "never"}])
    app, _session = make_app(provider=provider, settings={"terminal": {"showTerminalProgress": True}})
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        written = capture(app)
        await send(pilot, "go")
        await wait_for(pilot, lambda: PROGRESS_ACTIVE in written)
        app.exit()
    assert signals_in(written).endswith(PROGRESS_CLEAR)


async def test_a_run_ending_while_the_terminal_is_unfocused_notifies(make_app):
    provider = GatedProvider([{"text": "Refactored the parser.\nDetails follow."}])
    app, _session = make_app(provider=provider)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        written = capture(app)
        await send(pilot, "go")
        await blur(pilot)  # after the key press (a key means the focus is here)
        provider.gate.set()
        await settle(app, pilot)
        await wait_for(pilot, lambda: "777;notify" in signals_in(written))
        assert signals_in(written) == "\x1b]777;notify;pi-tui;Done: Refactored the parser.\x07"
        assert PROGRESS_ACTIVE not in "".join(written)  # showTerminalProgress is off by default


async def test_no_notification_when_focus_came_back(make_app):
    provider = GatedProvider([{"text": "first"}, {"text": "second"}])
    provider.gate.set()
    app, _session = make_app(provider=provider)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        written = capture(app, {"TERM_PROGRAM": "iTerm.app", "TMUX": "/tmp/tmux-1/default,1,0"})
        await blur(pilot)
        app.post_message(events.AppFocus())
        await wait_for(pilot, lambda: app.app_focus is True)
        await send(pilot, "go")
        await settle(app, pilot)
        await pilot.pause(0.4)
        assert signals_in(written) == ""
        provider.gate.clear()
        await send(pilot, "again")  # a key press means the focus is here (Textual); then it leaves
        await blur(pilot)
        provider.gate.set()
        await settle(app, pilot)
        await wait_for(pilot, lambda: signals_in(written) != "")
        assert signals_in(written) == "\x1bPtmux;\x1b\x1b]9;pi-tui: Done: second\x07\x1b\\"


async def test_a_dialog_waiting_while_unfocused_notifies(make_app):
    app, session = make_app([])
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        written = capture(app, {"KITTY_WINDOW_ID": "1"})
        await blur(pilot)
        worker = app.chat.run_worker(session.ask_user("Allow bash: rm -rf build?", ["Yes", "No"]))
        await wait_for(pilot, lambda: "99;" in signals_in(written))
        assert signals_in(written) == ("\x1b]99;i=pi-tui:d=0;pi-tui\x1b\\"
                                       "\x1b]99;i=pi-tui:p=body;Waiting for your answer: Allow bash: rm -rf build?\x1b\\")
        await pilot.press("escape")
        await worker.wait()


async def test_notifications_off_writes_nothing(make_app):
    provider = GatedProvider([{"text": "done"}])
    app, _session = make_app(provider=provider, settings={"terminal": {"notifications": "off"}})
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        written = capture(app)
        await send(pilot, "go")
        await blur(pilot)
        provider.gate.set()
        await settle(app, pilot)
        await pilot.pause(0.4)
        assert signals_in(written) == ""
