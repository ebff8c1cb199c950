"""``PiApp``: the thin Textual application of the interactive mode.

It holds the session, the keymap, the clock and the bridge, installs the chat screen, and warms
litellm in a background thread once the first frame is on screen (the import costs seconds; the
user can type meanwhile). Every domain decision stays in ``AgentSession``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from textual.app import App

from pi_tui.modes.interactive.bridge import SessionBridge
from pi_tui.modes.interactive.chat_screen import ChatScreen
from pi_tui.modes.interactive.keymap import Keymap


class PiApp(App[int]):
    TITLE = "pi-tui"
    ENABLE_COMMAND_PALETTE = False
    # Our keymap owns ctrl+c (clear / twice quits) and ctrl+q stays the emergency exit.
    BINDINGS = [("ctrl+q", "quit", "Quit")]  # noqa: RUF012

    def __init__(
        self,
        session: Any,
        *,
        cwd: Path,
        agent_dir: Path | None = None,
        keymap: Keymap | None = None,
        clock: Callable[[], datetime] = datetime.now,
        startup_notices: Sequence[str] = (),
        initial_messages: Sequence[str] = (),
        warm_up: Callable[[], object] | None = None,
        theme: str | None = None,
    ) -> None:
        super().__init__()
        self.session = session
        self.cwd = cwd
        self.agent_dir = agent_dir
        self.keymap = keymap or Keymap.load(agent_dir)
        self.clock = clock
        self.startup_notices = [*startup_notices, *self.keymap.diagnostics]
        self.initial_messages = list(initial_messages)
        self.warm_up = warm_up
        self.first_frame_at: float | None = None
        self.after_first_frame: list[Callable[[], object]] = []
        """Hooks run once the first frame is on screen (the demo's tour, benchmarks)."""
        self.chat: ChatScreen | None = None
        self.bridge: SessionBridge | None = None
        if theme and theme in self.available_themes:
            self.theme = theme

    async def on_mount(self) -> None:
        self.chat = ChatScreen(self)
        self.bridge = SessionBridge(self.chat)
        if self.session is not None:
            self.bridge.attach(self.session)
        await self.push_screen(self.chat)
        self.call_after_refresh(self._after_first_frame)

    def _after_first_frame(self) -> None:
        import time

        self.first_frame_at = time.monotonic()
        if self.warm_up is not None:
            self.warm_up()
        for hook in self.after_first_frame:
            hook()
        if self.initial_messages and self.chat is not None:
            text = "\n\n".join(self.initial_messages)
            self.initial_messages = []
            self.call_later(self.chat.submit, text)

    async def on_unmount(self) -> None:
        if self.bridge is not None:
            self.bridge.detach()
