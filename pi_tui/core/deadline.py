"""Waits that never lose a cancel: ``within`` (a time limit) and ``cancel_and_wait``.

``asyncio.wait_for`` on Python 3.11 drops a cancellation that lands in the same loop turn as
the awaited thing finishing: it returns the result and the task runs on as if never told to
stop (fixed in 3.12). In a streamed reply that is a read finishing every few milliseconds, so
an abort (Esc, ``session/cancel``, a compaction cancelled) was lost about one time in five and
the stream ran to its end. ``within`` counts cancellations as ``asyncio.timeout`` does
(``Task.uncancel``), itself: ``asyncio.timeout`` before 3.11.3 (Debian 12 ships 3.11.2) turns a
deadline that expires in a task that already caught a cancel into ``CancelledError``, which
slips past the ``except TimeoutError`` / ``suppress(Exception)`` around a bounded clean-up.
Every time-limited wait in pi-tui goes through here (``tests/architecture/test_no_wait_for.py``).

``cancel_and_wait`` is the clean-up after a race: ``task.cancel()`` then
``with suppress(CancelledError): await task`` eats a cancel of the *caller* that lands during
that await; ``asyncio.wait`` raises none of the task's errors and lets the caller's through.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any, TypeVar, cast

T = TypeVar("T")


async def within(awaitable: Awaitable[T], seconds: float | None) -> T:
    """``await awaitable``; ``TimeoutError`` after ``seconds`` (None: no limit), the awaited
    coroutine or future cancelled then, as ``asyncio.wait_for`` does — a limit of 0 or less
    times out without starting it (a future already done gives its result). A cancel from
    outside is always kept; if the awaited code swallows the deadline's cancel and returns,
    its result is returned (as ``asyncio.timeout`` does)."""
    if seconds is None:
        return await awaitable
    if seconds <= 0:
        if isinstance(awaitable, asyncio.Future) and awaitable.done():
            return cast("T", awaitable.result())
        if asyncio.iscoroutine(awaitable):
            awaitable.close()
        elif isinstance(awaitable, asyncio.Future):
            awaitable.cancel()
        raise TimeoutError
    task = asyncio.current_task()
    assert task is not None, "within() runs inside a task"
    cancelling = task.cancelling()
    expired = False

    def expire() -> None:
        nonlocal expired
        expired = True
        task.cancel()

    handle = asyncio.get_running_loop().call_later(seconds, expire)
    try:
        result = await awaitable
    except BaseException as error:
        # The deadline's cancel is taken back whatever ended the wait (the awaited code may
        # have turned it into an error of its own); only that cancel alone is a timeout.
        if expired and task.uncancel() <= cancelling and isinstance(error, asyncio.CancelledError):
            raise TimeoutError from None
        raise
    finally:
        handle.cancel()
    if expired:  # the awaited code caught the deadline's cancel and returned: that cancel is spent
        task.uncancel()
    return result


async def cancel_and_wait(*futures: asyncio.Future[Any] | None, seconds: float | None = None) -> None:
    """Cancel those still running and wait until they have ended (at most ``seconds``), raising
    none of their errors; a cancel of the caller meanwhile propagates (it is never eaten)."""
    given = [future for future in futures if future is not None]
    running = [future for future in given if not future.done()]
    for future in running:
        future.cancel()
    if running:
        await asyncio.wait(running, timeout=seconds)
    for future in given:  # the caller is done with them: no "exception was never retrieved" later
        if future.done() and not future.cancelled():
            future.exception()
