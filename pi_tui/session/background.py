"""Work a session sets going without waiting for it: extension notifications, the turns an
extension asked for, a compaction requested from inside a run.

No one awaits these tasks, so a failure becomes an error ``notify`` naming what failed (never
"Task exception was never retrieved"); ``settle`` waits until they have all ended (ACP answers a
``session/prompt`` only after every update it caused).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine
from typing import TYPE_CHECKING, Any

from pi_tui.session.live_state import LiveState

if TYPE_CHECKING:  # not imported at run time: a session without extensions never loads them (start-up)
    from pi_tui.extensions.runner import ExtensionRunner


class BackgroundTasks:
    def __init__(
        self, state: LiveState, *, extensions: ExtensionRunner | None, notify: Callable[[str, str], None],
    ) -> None:
        self._state = state
        self._extensions = extensions
        self._notify = notify
        self.tasks: set[asyncio.Future[Any]] = set()

    def schedule(self, coro: Coroutine[Any, Any, Any], *, what: str = "A background session task") -> None:
        """Run ``coro`` in the background; outside an event loop (a plain script calling
        ``set_model`` before ``asyncio.run``) there is nothing to run it on, so it is dropped."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            coro.close()
            return

        async def reported() -> None:
            try:
                await coro
            except Exception as err:
                self._notify(f"{what} failed: {err}", "error")

        task = asyncio.ensure_future(reported())
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    def schedule_turn(self, start: Callable[[], Awaitable[Any]], *, what: str) -> None:
        """A turn an extension asked for. An abort between the request and the turn's start
        (ACP's session/cancel, Escape, a signal landing right after an extension command
        returned) means it never starts: the person cancelled it."""
        state = self._state
        aborts_before = state.aborts

        async def turn() -> None:
            if state.aborts == aborts_before:
                await start()

        self.schedule(turn(), what=what)

    def tell_extensions(self, event: str, payload: dict[str, Any]) -> None:
        """A notification for extensions that nobody waits for (pi does not await these)."""
        if self._extensions is not None and self._extensions.has_handlers(event):
            self.schedule(self._extensions.emit(event, payload))

    async def settle(self) -> None:
        while self.tasks:
            await asyncio.wait(set(self.tasks))
