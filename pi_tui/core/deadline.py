"""``within``: await with a time limit, without losing a cancel.

``asyncio.wait_for`` on Python 3.11 drops a cancellation that lands in the same loop turn as
the awaited thing finishing: it returns the result and the task runs on as if never told to
stop (fixed in 3.12). In a streamed reply that is a read finishing every few milliseconds, so
an abort (Esc, ``session/cancel``, a compaction cancelled) was lost about one time in five and
the stream ran to its end. ``asyncio.timeout`` counts cancellations (``Task.uncancel``) and
never drops one; every time-limited wait in pi-tui goes through here
(``tests/architecture/test_no_wait_for.py``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TypeVar

T = TypeVar("T")


async def within(awaitable: Awaitable[T], seconds: float | None) -> T:
    """``await awaitable``; ``TimeoutError`` after ``seconds`` (None: no limit), the awaited
    coroutine or task cancelled then, as ``asyncio.wait_for`` does."""
    async with asyncio.timeout(seconds):
        return await awaitable
