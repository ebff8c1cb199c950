"""What the chat screen's parts need of each other, declared below all of them.

``PiApp`` builds ``ChatScreen``; the screen builds ``SlashRunner`` and inherits its key actions
from ``KeyActionsScreen``. Each needs a little of the one above it (the screen reads the app's
cwd, bridge and start-up notices; the key actions run slash commands; the slash commands push
screens and add blocks to the conversation). Those needs are the Protocols here, so imports only
point down: app → chat_screen → key_actions | slash_runner → screen_port.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from textual.app import App

    from pi_tui.modes.interactive.bridge import SessionBridge
    from pi_tui.modes.interactive.chat_events import ChatEventRenderer
    from pi_tui.modes.interactive.keymap import Keymap
    from pi_tui.modes.interactive.widgets.conversation import Conversation
    from pi_tui.modes.interactive.widgets.editor import PromptEditor


class AppPort(Protocol):
    """The app as its chat screen sees it (``PiApp`` is one)."""

    session: Any
    cwd: Path
    agent_dir: Path | None
    keymap: Keymap
    clock: Callable[[], datetime]
    startup_notices: list[str]
    initial_messages: list[str]
    initial_images: list[Any]
    first_frame_at: float | None
    bridge: SessionBridge | None
    exiting: bool

    def exit(self, *args: Any, **kwargs: Any) -> None: ...

    def write_to_terminal(self, data: str) -> None: ...

    def show_project_trust(self, trust: Any, on_answer: Callable[[bool], object]) -> None: ...


class SlashPort(Protocol):
    """The built-in slash commands as the key actions run them (``SlashRunner`` is one)."""

    async def run(self, name: str, args: str) -> bool: ...


class ChatScreenPort(Protocol):
    """The chat screen as its slash commands see it (``ChatScreen`` is one)."""

    pi: AppPort
    session: Any
    keymap: Keymap

    @property
    def app(self) -> App[Any]: ...
    @property
    def conversation(self) -> Conversation: ...
    @property
    def editor(self) -> PromptEditor: ...
    @property
    def renderer(self) -> ChatEventRenderer: ...

    def refresh_footer(self) -> None: ...
    async def copy_to_clipboard(self, text: str, what: str) -> None: ...
    async def handle_pending_events(self) -> None: ...
    async def show_diagnostics(self) -> None: ...
    def run_worker(self, work: Any, *args: Any, **kwargs: Any) -> Any: ...
    def post_message(self, message: Any) -> bool: ...
    def call_later(self, callback: Callable[..., Any], *args: Any, **kwargs: Any) -> bool: ...
    def run_prompt(self, text: str) -> Any: ...
