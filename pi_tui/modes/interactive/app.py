"""``PiApp``: the thin Textual application of the interactive mode.

It holds the session, the keymap, the clock and the bridge, and installs the chat screen. Startup
is ordered for a fast first frame: the screen (editor, footer) is drawn first; the session, whose
construction imports the engine and reads the session file, is built in a thread right after
(``session_loader``); litellm is warmed in another thread once the session is known to need it.
Every domain decision stays in ``AgentSession``.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import time
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from textual.app import App
from textual.binding import Binding
from textual.screen import Screen

from pi_tui.core.deadline import within
from pi_tui.modes.interactive.bridge import SessionBridge
from pi_tui.modes.interactive.chat_screen import ChatScreen
from pi_tui.modes.interactive.keymap import Keymap

SHUTDOWN_GRACE_SECONDS = 3.0
"""How long extensions' ``session_shutdown`` handlers may delay quitting."""


class LoadedSession:
    """What a ``session_loader`` returns: the session, notices to show, and a warm-up to start.
    (A plain class: a dataclass costs ~1 ms of the first frame.)"""

    __slots__ = ("error", "notices", "session", "warm_up")

    def __init__(self, session: Any, notices: list[str] | None = None,
                 warm_up: Callable[[], object] | None = None, error: str | None = None) -> None:
        self.session = session
        self.notices: list[str] = notices if notices is not None else []
        self.warm_up = warm_up
        self.error = error
        """Set when no session could be built; the chat shows it and the user can only quit."""


class PiApp(App[int]):
    TITLE = "pi-tui"
    CSS_PATH = "app.tcss"
    """The chat screen's styles, loaded with the app (see ``ChatScreen``) for a faster first frame."""
    ENABLE_COMMAND_PALETTE = False
    # Our keymap owns ctrl+c (clear / twice quits) and ctrl+q stays the emergency exit, from any
    # screen: a priority binding, or a modal screen (picker, extension dialog) would swallow it.
    BINDINGS = [Binding("ctrl+q", "quit", "Quit", priority=True)]  # noqa: RUF012

    def __init__(
        self,
        session: Any = None,
        *,
        cwd: Path,
        agent_dir: Path | None = None,
        keymap: Keymap | None = None,
        clock: Callable[[], datetime] = datetime.now,
        startup_notices: Sequence[str] = (),
        initial_messages: Sequence[str] = (),
        initial_images: Sequence[Any] = (),
        warm_up: Callable[[], object] | None = None,
        theme: str | None = None,
        session_loader: Callable[[], LoadedSession] | None = None,
    ) -> None:
        super().__init__()
        self.session = session
        self.cwd = cwd
        self.agent_dir = agent_dir
        self.keymap = keymap or Keymap.load(agent_dir)
        self.clock = clock
        self.startup_notices = [*startup_notices, *self.keymap.diagnostics]
        self.initial_messages = list(initial_messages)
        self.initial_images = list(initial_images)
        """Images of the command line's ``@file`` arguments, sent with the initial messages."""
        self.warm_up = warm_up
        self.session_loader = session_loader
        self.started_at = time.perf_counter()
        self.first_frame_at: float | None = None
        self.after_first_frame: list[Callable[[], object]] = []
        """Hooks run once the first frame is on screen (the demo's tour, benchmarks)."""
        self.chat: ChatScreen | None = None
        self.bridge: SessionBridge | None = None
        if theme and theme in self.available_themes:
            self.theme = theme

    exiting = False
    clipboard_reader: Any = None
    """What Ctrl+V reads the clipboard with (``image_paste``); None: the system clipboard."""
    terminal_watch: Any = None
    signals: Any = None
    """``terminal_signals.TerminalSignals``: progress and notifications, once a session is attached."""
    titler: Any = None
    """``session.titles.SessionTitler`` (``sessionTitles.enabled``), once a session is attached."""
    """Set once the app starts closing: session events still arriving are no longer shown."""

    _control_filter: Any = None

    def get_line_filters(self) -> Sequence[Any]:
        """Textual's filters plus ours, which keeps control characters in outside text (model
        answers, tool output, names) from reaching the terminal (``terminal_filter``)."""
        if self._control_filter is None:
            from pi_tui.modes.interactive.terminal_filter import ControlCharacterFilter

            self._control_filter = ControlCharacterFilter()
        return [*super().get_line_filters(), self._control_filter]

    def exit(self, *args: Any, **kwargs: Any) -> None:
        self.exiting = True
        super().exit(*args, **kwargs)

    def get_default_screen(self) -> Screen[Any]:
        # The chat is the app's first screen itself: pushing it over Textual's blank default
        # screen would mount and lay out that one too before the first frame.
        self.chat = ChatScreen(self)
        return self.chat

    async def on_mount(self) -> None:
        assert self.chat is not None, "get_default_screen builds the chat before the app mounts"
        self.bridge = SessionBridge(self.chat)
        self.call_after_refresh(self._after_first_frame)

    async def _after_first_frame(self) -> None:
        self.first_frame_at = time.perf_counter()
        if not self.is_headless:
            # SIGTERM/SIGHUP and a terminal that hangs up end the app cleanly (terminal_watch.py);
            # imported here, after the first frame: it pulls in the tools.
            from pi_tui.modes.interactive.terminal_watch import install

            self.terminal_watch = install(self)
        if self.chat is not None:
            await self.chat.mount_secondary()
        if self.session is not None or self.session_loader is None:
            self.attach_session(LoadedSession(self.session, warm_up=self.warm_up))
        else:
            loader = self.session_loader
            self.run_worker(lambda: self._load_in_thread(loader), thread=True, group="startup",
                            exit_on_error=False)
        for hook in self.after_first_frame:
            hook()

    def _load_in_thread(self, loader: Callable[[], LoadedSession]) -> None:
        try:
            try:
                loaded = loader()
            except Exception as err:  # the loader reports expected failures itself; this is the rest
                loaded = LoadedSession(None, error=f"{type(err).__name__}: {err}")
            # Before attaching: the UI thread imports these modules only once the session is there
            # (history, first answer), so no module is ever imported by both threads at once.
            warm_content_modules()
        finally:
            settle_gc_after_startup()
        self.call_from_thread(self.attach_session, loaded)

    def ask_project_trust(self, trust: Any) -> bool:
        """From the session-loading thread: show the project trust dialog and wait for the answer
        (the session, and with it the project's code, is built only afterwards). An app that
        closes meanwhile counts as "not now"."""
        answer: concurrent.futures.Future[bool] = concurrent.futures.Future()
        self.call_from_thread(self.show_project_trust, trust, answer.set_result)
        return self._wait_for_answer(answer)

    def _wait_for_answer(self, answer: concurrent.futures.Future[bool]) -> bool:
        """Block the loading thread until the dialog answers; an app closing meanwhile is a no."""
        while True:
            try:
                return answer.result(timeout=0.2)
            except concurrent.futures.TimeoutError:
                if self.exiting or not self.is_running:
                    return False

    def ask_to_continue_here(self, question: str) -> bool:
        """From the session-loading thread: pi's "Session cwd not found" question, answered
        Continue (yes) or Cancel (no, and the app ends as pi's does)."""
        from pi_tui.modes.interactive.screens.confirm import ConfirmScreen
        from pi_tui.modes.session_cwd import PROMPT_TITLE

        answer: concurrent.futures.Future[bool] = concurrent.futures.Future()

        def show() -> None:
            def answered(yes: bool | None) -> None:
                answer.set_result(bool(yes))
                if not yes:
                    self.exit(0)
            self.push_screen(ConfirmScreen(PROMPT_TITLE, detail=question), answered)

        self.call_from_thread(show)
        return self._wait_for_answer(answer)

    def show_project_trust(self, trust: Any, on_answer: Callable[[bool], object]) -> None:
        """Push the trust dialog; ``on_answer(trusted)`` gets the answer (see ``screens/trust.py``)."""
        from pi_tui.modes.interactive.screens.trust import ProjectTrustScreen
        from pi_tui.resources.trust import TRUST_FILE

        where = str(self.agent_dir / TRUST_FILE) if self.agent_dir is not None else TRUST_FILE
        def answered(trusted: bool | None) -> None:
            on_answer(bool(trusted))

        self.push_screen(ProjectTrustScreen(trust, trust_file=where), answered)
        self._terminal_signals().dialog_waiting("Trust this project?")

    def attach_session(self, loaded: LoadedSession) -> None:
        """Install the session (from the loader thread, or at once when given) and fill the chat."""
        if self.exiting:  # e.g. "Cancel" to a session whose folder is gone: nothing to show
            return
        self.session = loaded.session
        self.startup_notices.extend(loaded.notices)
        if self.session is not None and self.bridge is not None:
            self.bridge.attach(self.session)
            self._attach_signals()
            self._attach_extension_ui()
            settings: Any = getattr(self.session, "settings", None)
            theme = settings.get("theme", None) if hasattr(settings, "get") else None
            if isinstance(theme, str) and theme in self.available_themes:
                self.theme = theme
        if loaded.warm_up is not None:
            loaded.warm_up()
        if self.chat is not None:
            self.chat.session = self.session
            self.chat.startup_error = loaded.error
            self.chat.call_later(self.chat.fill_conversation)

    def setting(self, path: str, default: Any = None) -> Any:
        """One value of the session's settings (``default`` before a session is attached): what
        widgets read (``terminal.showImages`` in tool panels) without touching the session."""
        settings: Any = getattr(self.session, "settings", None)
        getter = getattr(settings, "get", None)
        return getter(path, default) if callable(getter) else default

    def _attach_signals(self) -> None:
        """Terminal progress and desktop notifications follow the session's events
        (``terminal_signals``); the session object stays the same across /new, /resume, /fork."""
        subscribe = getattr(self.session, "subscribe", None)
        if callable(subscribe):
            subscribe(self._terminal_signals().on_event)
            if self.titler is None:  # sessionTitles.*: a name after the first answer, in the background
                from pi_tui.session.titles import titler_for

                self.titler = titler_for(self.session)
                subscribe(self.titler.on_event)

    def _terminal_signals(self) -> Any:
        if self.signals is None:
            from pi_tui.modes.interactive.terminal_signals import TerminalSignals

            self.signals = TerminalSignals(self.write_to_terminal, focused=lambda: bool(self.app_focus),
                                           settings=lambda: getattr(self.session, "settings", None),
                                           is_idle=lambda: bool(self.session is None or self.session.is_idle()))
        return self.signals

    def write_to_terminal(self, data: str) -> None:
        """Bytes for the terminal itself, between frames (progress, notifications). Once the
        driver has left application mode it refuses (the caller drops the bytes)."""
        driver = self._driver
        if driver is not None:
            driver.write(data)

    def _attach_extension_ui(self) -> None:
        """Extensions' ``ctx.ui`` dialogs become modal screens here; statuses go to the footer."""
        from pi_tui.modes.interactive.screens.extension_ui import TuiExtensionUI

        set_ui = getattr(self.session, "set_extension_ui", None)
        if callable(set_ui):
            chat = self.chat
            ui = TuiExtensionUI(self, on_status=chat.refresh_footer if chat is not None else None,
                                on_dialog=self._terminal_signals().dialog_waiting)
            set_ui(ui)
            if getattr(self.session, "mcp", None) is not None:
                from pi_tui.modes.interactive.mcp_flow import attach_elicitation

                attach_elicitation(self.session, ui)

    async def on_unmount(self) -> None:
        if self.signals is not None:
            self.signals.close()  # clears the progress indicator while the terminal is still ours
        if self.titler is not None:
            self.titler.close()
        if self.bridge is not None:
            self.bridge.detach()
        await self._emit_shutdown()
        if getattr(self.session, "mcp", None) is not None:  # bounded; what is left dies with the app's groups
            from pi_tui.session.mcp_tools import close_mcp

            with contextlib.suppress(Exception):
                await within(close_mcp(self.session), SHUTDOWN_GRACE_SECONDS)

    async def _emit_shutdown(self) -> None:
        """Extensions hear ``session_shutdown{reason:"quit"}`` however the app ends (ctrl+c twice,
        ctrl+d, /quit, ctrl+q), as in print and RPC mode. Bounded: quitting must stay prompt."""
        runner = getattr(self.session, "extensions", None)
        if runner is None or not runner.has_handlers("session_shutdown"):
            return
        try:
            await within(runner.emit("session_shutdown", {"reason": "quit"}), SHUTDOWN_GRACE_SECONDS)
        except Exception:  # a slow or failing handler must not keep the terminal captured
            return


def warm_content_modules() -> None:
    """Import (here, in the startup thread) what the first answer needs on the UI loop: the event
    renderer, the chat blocks, Rich's Markdown with markdown-it and a code lexer. Imported there
    on first use they cost the first streamed answer a ~0.15 s stall; here they overlap with the
    user typing. A failure is left for the first real use to report."""
    try:
        import io

        from rich.console import Console
        from rich.markdown import Markdown

        import pi_tui.modes.interactive.chat_events
        import pi_tui.modes.interactive.slash_runner
        import pi_tui.modes.interactive.widgets.assistant_message  # noqa: F401

        Console(file=io.StringIO(), width=40).print(Markdown("*warm* `up`\n\n```python\nx = 1\n```\n"))
    except Exception:
        return


GC_THRESHOLDS = (5_000, 20, 20)
"""Young collections every 5,000 allocations instead of 700, full ones rarer: measured while
streaming at 2,000 tokens/s, the worst event-loop stall fell from ~100-140 ms (full collections of
~55 ms) to ~60-70 ms, and collection time from 0.30 to 0.12 s per 3 s answer (bench/RESULTS.md)."""


def settle_gc_after_startup() -> None:
    """Everything alive once the session is loaded (modules, the app, the session's entries)
    lives as long as the app: ``gc.freeze`` moves it out of the collector's scans, then the
    collector (off during startup, see ``run_interactive``) runs again with wider thresholds."""
    import gc

    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)
    gc.enable()
