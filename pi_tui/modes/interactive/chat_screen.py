"""The main screen: conversation + events pane, status, queue, completion, editor, footer.

It owns every widget mutation (the bridge's messages land here), routes what the user submits
(prompt, steer, follow-up, ``!cmd``, ``/command``), and maps keys to actions through the keymap
(the actions themselves are in ``key_actions``).
Agent work runs in ``agent``-group workers on the app's loop; a submit while a run is active goes to
``steer``/``follow_up`` instead of starting a second run.
"""

from __future__ import annotations

import asyncio
from functools import cached_property
from typing import TYPE_CHECKING, Any

from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import BindingsMap
from textual.containers import Horizontal, Vertical

from pi_tui.core.deadline import within
from pi_tui.modes.interactive.key_actions import KeyActionsScreen
from pi_tui.modes.interactive.messages import (
    AgentEventReceived,
    AgentEventsBatched,
    ChildSessionRequested,
    SessionReplaced,
)
from pi_tui.modes.interactive.session_view import footer_data, history_messages
from pi_tui.modes.interactive.widgets.conversation import Conversation
from pi_tui.modes.interactive.widgets.editor import PromptEditor
from pi_tui.modes.interactive.widgets.footer import StatusFooter

# What only content needs (event renderer, chat blocks, slash commands, completion sources) is
# imported on first use, after the first frame: these imports would otherwise delay it.
if TYPE_CHECKING:
    from textual.widget import Widget

    from pi_tui.modes.interactive.chat_events import ChatEventRenderer
    from pi_tui.modes.interactive.screen_port import AppPort
    from pi_tui.modes.interactive.slash_runner import SlashRunner
    from pi_tui.modes.interactive.widgets.completion import CompletionItem
    from pi_tui.modes.interactive.widgets.status import WorkingStatus

NARROW_WIDTH = 100
STARTUP_WAIT_SECONDS = 300.0
"""How long a message with images, sent while the session loads, waits for it."""


def _first_run_notice(agent_dir: Any) -> Widget:
    from pi_tui.modes.interactive.widgets.first_run import FirstRunNotice

    return FirstRunNotice(agent_dir)


def _error_block(text: str, **kwargs: Any) -> Widget:
    from pi_tui.modes.interactive.widgets.chat_items import ErrorBlock

    return ErrorBlock(text, **kwargs)


class ChatScreen(KeyActionsScreen):
    # Its stylesheet (app.tcss) is the app's CSS_PATH: read with Textual's defaults at startup,
    # it avoids the full re-parse of every rule that a screen's own CSS_PATH costs on push.
    AUTO_FOCUS = "#editor"

    def __init__(self, app: AppPort) -> None:
        self.pi = app
        super().__init__()
        # Keys come from the keymap (defaults + keybindings.json), not from a class-level list.
        self._bindings = BindingsMap(app.keymap.screen_bindings())
        self.session = app.session
        self.keymap = app.keymap
        self.held: list[str] = []
        """Messages typed during a compaction, sent when it ends (pi's local queue)."""
        self._last_escape = 0.0
        self._last_clear = 0.0
        self._files: list[str] | None = None
        self._events_forced: bool | None = None
        self.startup_error: str | None = None
        self._secondary_mounted = False
        self.history_loaded = asyncio.Event()
        """Set once the stored conversation is on screen (submits wait for it)."""

    # ------------------------------------------------------------------ layout

    def compose(self) -> ComposeResult:
        # The first frame has only what a person looks at first: the conversation area, the
        # editor and the footer. The rest (``mount_secondary``) follows right after it: each
        # widget in the first frame costs its styles, layout and paint before anything shows.
        with Horizontal(id="main"):
            yield Conversation(id="conversation")
        with Vertical(id="bottom"):
            editor = PromptEditor(self.keymap, self._complete, id="editor")
            editor.image_path_for = self._pasted_image_path
            editor.placeholder = "Message · / commands · @ files · !cmd shell · shift+enter/ctrl+j new line"
            yield editor
            yield StatusFooter(id="footer")

    def on_key(self, event: events.Key) -> None:
        """Printable keys the editor did not take (it takes every one it receives) were typed
        ahead while the app started, before the editor had focus, or with focus elsewhere in
        the chat: they go to the editor instead of being lost. An Enter typed ahead of the first
        frame submits them (held until the session exists, as any early submit)."""
        if not self.is_current:
            return
        editor = self.editor
        if event.is_printable and event.character is not None:
            event.stop()
            editor.focus()
            editor.insert(event.character)
        elif (self.pi.first_frame_at is None and self.keymap.matches("tui.input.submit", event.key)
              and editor.text.strip()):
            event.stop()
            editor.focus()
            editor.post_message(editor.Submitted(editor.text, follow_up=False))

    async def mount_secondary(self) -> None:
        """After the first frame: the events pane, the status and queue lines, the completion
        menu. The app calls it before attaching the session, so events always find them."""
        if self._secondary_mounted:
            return
        self._secondary_mounted = True
        from pi_tui.modes.interactive.widgets.completion import CompletionMenu
        from pi_tui.modes.interactive.widgets.events_pane import EventsPane, EventsTicker
        from pi_tui.modes.interactive.widgets.status import QueueView, WorkingStatus
        from pi_tui.modes.interactive.widgets.todo_panel import TodoPanel

        await self.query_one("#main").mount(EventsPane(self.pi.clock, id="events"))
        await self.query_one("#bottom").mount_all(
            [TodoPanel(id="todos"), WorkingStatus(id="status"), EventsTicker("", id="ticker"),
             QueueView("", id="queue"), CompletionMenu(id="completion")],
            before=self.editor,
        )
        self.editor.menu = self.query_one("#completion", CompletionMenu)
        self._apply_width(self.size.width)

    @cached_property
    def slash(self) -> SlashRunner:
        from pi_tui.modes.interactive.slash_runner import SlashRunner

        return SlashRunner(self)

    @cached_property
    def renderer(self) -> ChatEventRenderer:
        """Built on first use (the first session event or command), after the first frame."""
        from pi_tui.modes.interactive.chat_events import ChatEventRenderer, ChatWidgets

        return ChatEventRenderer(
            ChatWidgets(self.conversation, self.query_one("#events"), self.query_one("#ticker"),  # type: ignore[arg-type]
                        self.query_one("#status"), self.query_one("#queue")),  # type: ignore[arg-type]
            on_footer=self.refresh_footer,
            held_messages=lambda: list(self.held),
        )

    @property
    def conversation(self) -> Conversation:
        return self.query_one("#conversation", Conversation)

    @property
    def editor(self) -> PromptEditor:
        return self.query_one("#editor", PromptEditor)

    async def on_mount(self) -> None:
        # Textual 8.2: a screen that goes idle while Markdown.append holds app.batch_update() is
        # not woken when the batch ends, so the last streamed blocks could stay unpainted until
        # the next key press (seen in tmux). A cheap periodic idle check repaints them.
        self.set_interval(0.2, self.check_idle)
        self._apply_width(self.size.width)
        self.refresh_footer()
        self.editor.focus()
        # The first frame shows the editor at once; the app attaches the session right after it
        # and calls ``fill_conversation``.

    async def fill_conversation(self) -> None:
        await self.load_history()
        for line in self.pi.startup_notices:
            await self.conversation.add_notice(line, severity="warning")
        if self.startup_error is not None:
            await self.conversation.add(_error_block(
                f"pi-tui could not start a session: {self.startup_error}",
                advice="Fix the problem above and start again (ctrl+c twice quits)."))
        elif self.session is None or getattr(self.session.state, "model", None) is None:
            await self.conversation.add(_first_run_notice(self.pi.agent_dir))
        self.refresh_footer()
        # Starting the session runs extension handlers, which may post UI requests back to this
        # screen: it runs in a worker so the screen keeps handling messages meanwhile.
        self.run_worker(self._start_session(), group="startup", exit_on_error=False)

    async def _start_session(self) -> None:
        """``session.start()`` once (``session_start`` + ``resources_discover``), the setup
        problems it knows about, then whatever was typed while loading."""
        if self.session is not None and self.startup_error is None:
            try:
                await self.session.start()
            except Exception as err:  # a failing extension must not keep the chat from opening
                await self.conversation.add(_error_block(f"Session start failed: {err}"))
            await self.show_diagnostics()
        self.refresh_footer()
        self.history_loaded.set()
        if self.pi.initial_messages:
            text = "\n\n".join(self.pi.initial_messages)
            images, self.pi.initial_messages, self.pi.initial_images = self.pi.initial_images, [], []
            await self.submit(text, images=images)

    async def show_diagnostics(self) -> None:
        """Every setup problem of the session (each names its file) as a warning notice and an
        events-pane line; shown at startup and again after ``/reload``."""
        diagnostics = getattr(self.session, "diagnostics", None)
        if not callable(diagnostics):
            return
        try:
            found = list(diagnostics())
        except Exception as err:
            found = [("session", f"could not list setup problems: {err}")]
        for source, message in found:
            await self.conversation.add_notice(f"Warning ({source}): {message}", severity="warning")
            self.renderer.note(f"{source} warning", str(message), severity="warning")
        info = getattr(self.session, "startup_info", None)
        for message in info() if callable(info) else []:  # trusted project code, a project SYSTEM.md
            await self.conversation.add_notice(message, severity="info")

    async def load_history(self) -> None:
        if self.session is not None:
            await self.conversation.load_history(history_messages(self.session))
        self.show_todos()

    def show_todos(self, todos: Any = None) -> None:
        """The todo panel: ``todos`` from a ``todo_update`` event, else the session's list at its leaf."""
        if not self._secondary_mounted:
            return
        tracker = getattr(self.session, "todos", None)
        if todos is None:
            todos = tracker.current() if tracker is not None else []
        from pi_tui.modes.interactive.widgets.todo_panel import TodoPanel

        self.query_one("#todos", TodoPanel).show(todos)

    def on_resize(self) -> None:
        self._apply_width(self.size.width)
        self.query_one(StatusFooter).refresh_lines()

    def _apply_width(self, width: int) -> None:
        narrow = width < NARROW_WIDTH
        self.set_class(narrow, "-narrow")
        show = self._events_forced if self._events_forced is not None else not narrow
        if not self._secondary_mounted:
            return
        self.query_one("#events").display = show
        self.query_one("#ticker").display = narrow and not show

    def refresh_footer(self) -> None:
        renderer = self.__dict__.get("renderer")  # not built yet: nothing to report
        unknown = renderer is not None and renderer.context_unknown
        starting = self.session is None and self.startup_error is None
        data = footer_data(self.session, self.pi.cwd, context_unknown=unknown, starting=starting)
        self.query_one(StatusFooter).set_data(data)
        # pi: the editor border follows the thinking level (bash mode overrides it, see app.tcss).
        editor = self.editor
        for level in ("off", "minimal", "low", "medium", "high", "xhigh"):
            editor.set_class(data.thinking == level, f"-thinking-{level}")

    # ------------------------------------------------------------------ session events

    @on(AgentEventReceived)
    async def _agent_event(self, message: AgentEventReceived) -> None:
        message.stop()
        await self._handle_event(message.event)

    @on(AgentEventsBatched)
    async def _agent_events(self, message: AgentEventsBatched) -> None:
        message.stop()
        events = self.pi.bridge.take(message.events) if self.pi.bridge is not None else message.events
        for event in events:
            await self._handle_event(event)

    async def handle_pending_events(self) -> None:
        """Handle the session events still gathered in the bridge now (a worker that must show
        what follows them: the ``/compact`` failure after its ``compaction_end``)."""
        if self.pi.bridge is not None:
            for event in self.pi.bridge.drain():
                await self._handle_event(event)

    async def _handle_event(self, event: dict[str, Any]) -> None:
        if self.pi.exiting:  # the app is closing: widgets are being removed, nothing to show
            return
        await self.renderer.handle(event)
        if event.get("type") == "todo_update":
            self.show_todos(event.get("todos"))
        if event.get("type") == "compaction_end" and self.held:
            self._flush_held()

    @on(SessionReplaced)
    async def _session_replaced(self, message: SessionReplaced) -> None:
        message.stop()
        await self.handle_pending_events()  # emitted before the switch: they come first
        self.session = self.pi.session
        await self.load_history()
        if message.notice:
            await self.conversation.add_notice(message.notice, severity="success")
            self.renderer.note(message.notice)
        if message.editor_text is not None:
            self.editor.set_text(message.editor_text)
        self.refresh_footer()

    @on(ChildSessionRequested)
    async def _open_child_session(self, message: ChildSessionRequested) -> None:
        message.stop()
        from pi_tui.modes.interactive.screens.child_session import ChildSessionScreen

        await self.app.push_screen(ChildSessionScreen(message.path, description=message.description))

    # ------------------------------------------------------------------ submitting

    def _pasted_image_path(self, text: str) -> Any:
        from pi_tui.modes.interactive.image_paste import pasted_image_path

        return pasted_image_path(text, self.pi.cwd)

    @on(PromptEditor.ImagePathPasted)
    def _image_path_pasted(self, message: PromptEditor.ImagePathPasted) -> None:
        message.stop()
        from pi_tui.modes.interactive.image_paste import attach_image_file

        self.run_worker(attach_image_file(self, message.path), group="paste-image", exit_on_error=False)

    @on(PromptEditor.Submitted)
    async def _submitted(self, message: PromptEditor.Submitted) -> None:
        message.stop()
        text = message.text.strip()
        attached = bool(self.editor.attachments) and not text.startswith(("/", "!"))
        if not text and not attached:
            return
        if attached and self._busy():
            # Steering and follow-ups are text only: the images wait, with the text, in the editor.
            await self.conversation.add_notice("Images go with a new prompt: send it when the agent is idle.",
                                               severity="warning")
            return
        images = [a.block for a in self.editor.take_attachments()] if attached else []
        self.editor.remember(message.text)
        self.editor.clear()
        if self.editor.menu is not None:
            self.editor.menu.hide()
        if images and not self.history_loaded.is_set():  # sent once the session is there
            self.run_worker(self._submit_when_loaded(text, images), group="startup", exit_on_error=False)
            return
        await self.submit(text, follow_up=message.follow_up, images=images)

    async def _submit_when_loaded(self, text: str, images: list[Any]) -> None:
        try:
            await within(self.history_loaded.wait(), STARTUP_WAIT_SECONDS)
        except TimeoutError:
            await self.conversation.add_notice("The session did not load; the message was not sent.", severity="error")
            return
        await self.submit(text, images=images)

    async def submit(self, text: str, *, follow_up: bool = False, images: list[Any] | None = None) -> None:
        if not self.history_loaded.is_set():
            # Typed before the session finished loading: sent once it is there (never awaited
            # here, which would block this screen's queue and the loading itself).
            self.pi.initial_messages.append(text)
            return
        session = self.session
        if self.startup_error is not None:
            await self.conversation.add(_error_block(f"No session: {self.startup_error}"))
            self.editor.set_text(text)
            return
        from pi_tui.modes.interactive.commands import parse_slash

        slash = parse_slash(text)
        if slash is not None and await self.slash.run(slash[0], slash[1]):
            return
        if session is None or getattr(session.state, "model", None) is None:
            await self.conversation.add(_first_run_notice(self.pi.agent_dir))
            self.editor.set_text(text)
            return
        if text.startswith("!"):
            await self._user_bash(text)
            return
        state = session.state
        if state.is_compacting:
            self.held.append(text)
            await self.conversation.add_notice("Queued message for after compaction")
            self.renderer.refresh_queue()
            return
        if state.is_streaming or self.renderer.running:
            if follow_up:
                session.follow_up(text)
            else:
                session.steer(text)
            return
        self.run_prompt(text, images or [])

    def _flush_held(self) -> None:
        held, self.held = self.held, []
        self.renderer.refresh_queue()
        first, rest = held[0], held[1:]
        self.run_prompt(first)
        for text in rest:
            self.session.follow_up(text)

    @work(group="agent", exit_on_error=False)
    async def run_prompt(self, text: str, images: list[Any] | None = None) -> None:
        try:
            await (self.session.prompt(text, images=images) if images else self.session.prompt(text))
        except Exception as err:  # the session reports model failures as events; this is the rest
            await self.conversation.add(_error_block(f"Error: {err}", advice="Nothing was lost: press ↑ to "
                                                   "recall the message."))
        finally:
            self.renderer.running = False
            self._status().hide()
            self.refresh_footer()

    async def _user_bash(self, text: str) -> None:
        exclude = text.startswith("!!")
        command = text[2:] if exclude else text[1:]
        if not command.strip():
            return
        if self.renderer.running:
            await self.conversation.add_notice("A command or run is already going; wait for it or press Esc.",
                                               severity="warning")
            self.editor.set_text(text)
            return
        self.run_user_bash(command.strip(), exclude)

    @work(group="agent", exit_on_error=False)
    async def run_user_bash(self, command: str, exclude: bool) -> None:
        status = self._status()
        status.show(f"Running {command[:60]}... (esc to cancel)")
        try:
            await self.session.run_user_bash(command, exclude_from_context=exclude)
        except Exception as err:
            await self.conversation.add(_error_block(f"Command failed to start: {err}"))
        finally:
            status.hide()
            self.refresh_footer()

    # ------------------------------------------------------------------ completion

    def _status(self) -> WorkingStatus:
        return self.query_one("#status")  # type: ignore[return-value]

    def _complete(self, kind: str, query: str) -> list[CompletionItem]:
        from pi_tui.modes.interactive.commands import collect_commands, complete_slash
        from pi_tui.modes.interactive.file_complete import fuzzy_files, list_project_files
        from pi_tui.modes.interactive.widgets.completion import CompletionItem

        if kind == "slash":
            commands = collect_commands(self.session)
            return [CompletionItem(f"/{c.name}", f"/{c.name} ", c.description, c.argument_hint, c.source)
                    for c in complete_slash(query, commands)]
        if self._files is None:
            self._files = list_project_files(self.pi.cwd)
        return [CompletionItem(p, "@" + p, "", "", "") for p in fuzzy_files(query, self._files)]
