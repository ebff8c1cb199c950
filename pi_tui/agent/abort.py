"""Abort for one agent run.

``abort()`` cancels the asyncio tasks the loop registered (the model stream, running tools).
The loop itself is never cancelled from outside: it waits on its child tasks with
``asyncio.wait`` (which does not raise when a child is cancelled), sees that the signal fired,
and records a consistent history — the aborted assistant message, an answer for every tool
call — before it ends the run normally.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

T = TypeVar("T")


class AbortSignal:
    def __init__(self) -> None:
        self.aborted = False
        self._tasks: set[asyncio.Task[Any]] = set()
        self._callbacks: list[Callable[[], None]] = []

    def abort(self) -> None:
        if self.aborted:
            return
        self.aborted = True
        for task in list(self._tasks):
            task.cancel()
        for callback in self._callbacks:
            callback()

    def is_aborted(self) -> bool:
        """``aborted`` as a call: it changes while the caller awaits (type checkers narrow
        attributes, not calls)."""
        return self.aborted

    def on_abort(self, callback: Callable[[], None]) -> None:
        self._callbacks.append(callback)

    def spawn(self, coro: Awaitable[T]) -> asyncio.Task[T]:
        """Run ``coro`` as a task that ``abort()`` cancels."""
        task: asyncio.Task[T] = asyncio.ensure_future(coro)
        if self.aborted:
            task.cancel()
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def wait_all(self, tasks: list[asyncio.Task[Any]]) -> None:
        """Wait until every task is done (finished or cancelled) without raising their errors.

        If the caller itself is cancelled, the children are cancelled too, then the
        cancellation propagates."""
        if not tasks:
            return
        try:
            await asyncio.wait(tasks)
        except asyncio.CancelledError:
            for task in tasks:
                task.cancel()
            raise
