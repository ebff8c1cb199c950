"""Blocking work in a thread that stops when the awaiting task is cancelled (tool abort).

``await asyncio.to_thread(fn)`` returns at once when its task is cancelled, but the thread runs on:
a ``grep`` over a huge tree or a ``read`` counting the lines of a 20 GB file keeps a core busy and,
worse, keeps the interpreter from exiting (``asyncio.run`` joins the default executor's threads).
``run_in_thread`` marks the thread's context as cancelled when its task is, and the long loops
call ``check_cancelled()`` (per chunk, per file, per directory entry) to stop within a moment.
The mark travels in a context variable, copied into the thread.

A thread can also be stuck where no check runs: a ``read()`` of a regular file that never
answers (a hung network or FUSE mount, ``/proc/kmsg``). So the work runs in a *daemon* thread of
its own, not the default executor: an abandoned thread never holds the process at exit (RPC mode
closing, print mode ending). And ``run_in_thread_bounded`` gives up on work whose
``check_cancelled()`` calls — its heartbeat — stop for ``stalled_after`` seconds
(``ThreadStalled``): in print mode nobody would ever press Esc.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import threading
import time
from collections.abc import Callable
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")

STALLED_AFTER_SECONDS = 30.0
"""How long a bounded worker may go without a heartbeat (one ``check_cancelled()`` call, made per
chunk of a file) before the caller gives up on it: far beyond any disk, network mounts included,
that still answers."""


class ThreadCancelled(Exception):
    """Raised inside the thread by ``check_cancelled`` once its awaiting task was cancelled."""


class ThreadStalled(Exception):
    """Raised to the caller of ``run_in_thread_bounded`` when the worker's heartbeat stopped."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"no progress for {seconds:g} s")
        self.seconds = seconds


class _Work:
    __slots__ = ("beat", "stop")

    def __init__(self) -> None:
        self.stop = threading.Event()
        self.beat = time.monotonic()


_WORK: contextvars.ContextVar[_Work | None] = contextvars.ContextVar("pi_tui_thread_work", default=None)


def check_cancelled() -> None:
    """In work started by ``run_in_thread``: stop here when the caller was cancelled (and tell a
    bounded caller that the work is still moving)."""
    work = _WORK.get()
    if work is not None:
        work.beat = time.monotonic()
        if work.stop.is_set():
            raise ThreadCancelled


def _start(work: _Work, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> asyncio.Future[T]:
    """Run ``fn`` in a daemon thread with ``work`` in its context; a future for its result."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()
    context = contextvars.copy_context()
    context.run(_WORK.set, work)

    def settle(outcome: Callable[[], None]) -> None:
        if not future.done():
            outcome()

    def body() -> None:
        outcome: Callable[[], None]
        try:
            outcome = functools.partial(future.set_result, context.run(fn, *args, **kwargs))
        except BaseException as error:  # handed to the awaiting task, as to_thread does
            outcome = functools.partial(future.set_exception, error)
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits any more
            loop.call_soon_threadsafe(settle, outcome)

    threading.Thread(target=body, name=f"pi-tui-{getattr(fn, '__name__', 'work')}", daemon=True).start()
    return future


async def run_in_thread(fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
    work = _Work()
    future = _start(work, fn, *args, **kwargs)
    try:
        return await future  # a cancel of this task cancels the future; the thread's result is dropped
    except asyncio.CancelledError:
        work.stop.set()
        raise


async def run_in_thread_bounded(stalled_after: float | None, fn: Callable[P, T], /, *args: P.args,
                                **kwargs: P.kwargs) -> T:
    """``run_in_thread``, giving up (``ThreadStalled``; the thread told to stop and left behind)
    once the worker has not called ``check_cancelled()`` for ``stalled_after`` seconds (None:
    ``STALLED_AFTER_SECONDS``, read at call time)."""
    limit = STALLED_AFTER_SECONDS if stalled_after is None else stalled_after
    work = _Work()
    future = _start(work, fn, *args, **kwargs)
    try:
        while True:
            idle = time.monotonic() - work.beat
            if idle >= limit:
                work.stop.set()
                future.cancel()
                raise ThreadStalled(limit)
            done, _ = await asyncio.wait({future}, timeout=min(limit - idle, 1.0))
            if done:
                return future.result()
    except asyncio.CancelledError:
        work.stop.set()
        future.cancel()
        raise
