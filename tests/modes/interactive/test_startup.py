"""What stands between launch and the first frame: only Textual and the chat screen itself."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def test_the_app_module_loads_neither_the_engine_nor_litellm_nor_markdown():
    code = (
        "import json, sys\n"
        "import pi_tui.modes.interactive.app\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    modules = set(json.loads(out.stdout.strip().splitlines()[-1]))
    heavy = {m for m in modules if m.split(".")[0] in ("litellm", "openai", "markdown_it", "tiktoken", "PIL")}
    engine = {m for m in modules if m.startswith(("pi_tui.sdk", "pi_tui.session", "pi_tui.agent", "pi_tui.tools"))}
    assert heavy == set()
    assert engine == set()


async def test_the_footer_says_starting_until_the_session_is_built_then_names_the_model(project, agent_dir):
    import threading

    from pi_tui.modes.interactive.app import LoadedSession, PiApp
    from pi_tui.modes.interactive.widgets.footer import StatusFooter
    from pi_tui.sdk import create_agent_session
    from pi_tui.testing.scripted import ScriptedProvider
    from tests.modes.interactive.conftest import wait_for

    release = threading.Event()

    def loader() -> LoadedSession:
        release.wait(10)
        session = create_agent_session(cwd=project, agent_dir=agent_dir, provider=ScriptedProvider([]),
                                       settings={}, load_extensions=False)
        return LoadedSession(session)

    app = PiApp(None, cwd=project, agent_dir=agent_dir, session_loader=loader)
    async with app.run_test(size=(120, 30)) as pilot:
        footer = app.screen.query_one(StatusFooter)
        await wait_for(pilot, lambda: app.first_frame_at is not None)
        assert footer.data.model == "starting…"  # not "no model" while it is only loading
        release.set()
        await wait_for(pilot, lambda: app.session is not None)
        await wait_for(pilot, lambda: footer.data.model not in ("starting…", "no model"))
        model = app.session.state.model
        assert footer.data.model == f"{model.provider}/{model.id}"


async def test_a_failed_startup_shows_no_model_not_starting(project, agent_dir):
    from pi_tui.modes.interactive.app import LoadedSession, PiApp
    from pi_tui.modes.interactive.widgets.footer import StatusFooter
    from tests.modes.interactive.conftest import wait_for

    app = PiApp(None, cwd=project, agent_dir=agent_dir,
                session_loader=lambda: LoadedSession(None, error="models.json: bad JSON at line 3"))
    async with app.run_test(size=(120, 30)) as pilot:
        footer = app.screen.query_one(StatusFooter)
        await wait_for(pilot, lambda: app.chat is not None and app.chat.startup_error is not None)
        await wait_for(pilot, lambda: footer.data.model == "no model")


def test_the_startup_thread_warms_what_the_first_answer_needs():
    code = (
        "import json, sys\n"
        "from pi_tui.modes.interactive.app import warm_content_modules\n"
        "before = set(sys.modules)\n"
        "warm_content_modules()\n"
        "print(json.dumps(sorted(set(sys.modules) - before)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = set(json.loads(out.stdout.strip().splitlines()[-1]))
    for module in ("pi_tui.modes.interactive.chat_events", "pi_tui.modes.interactive.widgets.markdown_stream",
                   "rich.markdown", "markdown_it", "pygments.lexers.python"):
        assert module in loaded, module


async def test_the_loader_thread_warms_up_before_attaching(project, agent_dir, monkeypatch):
    from pi_tui.modes.interactive import app as app_module
    from pi_tui.modes.interactive.app import LoadedSession, PiApp
    from tests.modes.interactive.conftest import wait_for

    seen: list[object] = []
    app = PiApp(None, cwd=project, agent_dir=agent_dir,
                session_loader=lambda: LoadedSession(None, error="no session in this test"))
    # What the chat knows when the warm-up runs: the startup error is not attached yet.
    monkeypatch.setattr(app_module, "warm_content_modules", lambda: seen.append(app.chat.startup_error))
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.chat is not None and app.chat.startup_error is not None)
        assert seen == [None]


SHUTDOWN_EXTENSION = '''
from pathlib import Path


def register(pi):
    @pi.on("session_shutdown")
    async def remember(event, ctx):
        Path(__file__).with_name("shutdown.txt").write_text(event["reason"])
'''


async def test_quitting_the_tui_tells_extensions_session_shutdown(make_app, project):
    from tests.modes.interactive.conftest import ready

    (project / "on_quit.py").write_text(SHUTDOWN_EXTENSION)
    app, _ = make_app([], load_extensions=True, extension_paths=[str(project / "on_quit.py")])
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        await pilot.press("ctrl+c", "ctrl+c")  # clear, then quit
        await pilot.pause()
    assert (project / "shutdown.txt").read_text() == "quit"


async def test_ctrl_q_quits_even_from_a_modal_screen(make_app):
    from pi_tui.modes.interactive.screens.hotkeys import HotkeysScreen
    from tests.modes.interactive.conftest import ready, wait_for

    app, _ = make_app([])
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        await pilot.press("f1")
        await wait_for(pilot, lambda: isinstance(app.screen, HotkeysScreen))
        await pilot.press("ctrl+q")
        await wait_for(pilot, lambda: app.return_code is not None)


async def test_keys_typed_ahead_of_the_first_frame_do_not_crash_the_chat(make_app):
    """Keys typed while pi-tui starts reach the app before the events pane and status lines are
    mounted (right after the first frame): esc and alt+up must not need them."""
    from textual import events

    from pi_tui.modes.interactive.app import PiApp
    from tests.modes.interactive.conftest import ready

    class TypedAhead(PiApp):
        CSS_PATH = Path(sys.modules[PiApp.__module__].__file__).parent / "app.tcss"  # type: ignore[arg-type]

        async def on_mount(self) -> None:
            await super().on_mount()
            # What the terminal driver does with input already waiting when the app starts.
            for key, char in (("escape", "\x1b"), ("alt+up", None)):
                self._driver.send_message(events.Key(key, char))  # type: ignore[union-attr]

    app, session = make_app([{"text": "hello"}])
    app = TypedAhead(session, cwd=app.cwd, agent_dir=app.agent_dir, clock=app.clock)
    async with app.run_test(size=(120, 30)) as pilot:
        await ready(pilot)
        await pilot.pause()
        assert app.is_running and app.return_code is None
        assert app.chat is not None and app.chat.query("#events")


async def test_text_typed_ahead_of_the_first_frame_lands_in_the_editor(make_app):
    """Input already waiting when the app starts reaches the screen before the editor has focus;
    it must end up in the editor (and an Enter typed ahead submits it once the session is there)."""
    from textual import events

    from pi_tui.modes.interactive.app import PiApp
    from pi_tui.modes.interactive.widgets.chat_items import UserMessageView
    from pi_tui.modes.interactive.widgets.markdown_stream import SettledMarkdown
    from tests.modes.interactive.conftest import ready, wait_for

    class TypedAhead(PiApp):
        CSS_PATH = Path(sys.modules[PiApp.__module__].__file__).parent / "app.tcss"  # type: ignore[arg-type]

        async def on_mount(self) -> None:
            await super().on_mount()
            for char in "hi there":
                self._driver.send_message(events.Key("space" if char == " " else char, char))  # type: ignore[union-attr]
            self._driver.send_message(events.Key("enter", "\r"))  # type: ignore[union-attr]

    app, session = make_app([{"text": "hello back"}])
    app = TypedAhead(session, cwd=app.cwd, agent_dir=app.agent_dir, clock=app.clock)
    async with app.run_test(size=(120, 30)) as pilot:
        await ready(pilot)
        await wait_for(pilot, lambda: any("hi there" in str(v.text) for v in app.screen.query(UserMessageView)))
        await wait_for(pilot, lambda: [w.source for w in app.screen.query(SettledMarkdown)] == ["hello back"])
        assert app.chat is not None and app.chat.editor.text == ""


async def test_quitting_while_an_answer_streams_raises_nothing(make_app):
    from pi_tui.modes.interactive.widgets.chat_items import UserMessageView
    from tests.modes.interactive.conftest import ready, wait_for

    app, _ = make_app([{"text": "an answer arriving as the app closes"}])
    async with app.run_test(size=(120, 30)) as pilot:
        await ready(pilot)
        assert app.chat is not None
        app.chat.run_prompt("hello")
        await wait_for(pilot, lambda: bool(app.screen.query(UserMessageView)))
        app.exit()  # the answer's events are still being handled: teardown must not trip over them


async def test_the_collector_is_back_on_with_wider_thresholds_after_startup(project, agent_dir):
    import gc

    from pi_tui.modes.interactive.app import GC_THRESHOLDS, LoadedSession, PiApp
    from tests.modes.interactive.conftest import wait_for

    before = gc.get_threshold()
    gc.disable()  # as run_interactive leaves it for the startup thread
    try:
        app = PiApp(None, cwd=project, agent_dir=agent_dir,
                    session_loader=lambda: LoadedSession(None, error="no session in this test"))
        async with app.run_test(size=(100, 30)) as pilot:
            await wait_for(pilot, lambda: app.chat is not None and app.chat.startup_error is not None)
            assert gc.isenabled()
            assert gc.get_threshold() == GC_THRESHOLDS
            assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)
        gc.enable()
