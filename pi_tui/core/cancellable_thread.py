"""Blocking work in a thread that stops when the awaiting task is cancelled (tool abort).

``await asyncio.to_thread(fn)`` returns at once when its task is cancelled, but the thread runs on:
a ``grep`` over a huge tree or a ``read`` counting the lines of a 20 GB file keeps a core busy and,
worse, keeps the interpreter from exiting (``asyncio.run`` joins the default executor's threads).
``run_in_thread`` marks the thread's context as cancelled when its task is, and the long loops
call ``check_cancelled()`` (per chunk, per file, per directory entry) to stop within a moment.
The mark travels in a context variable, which ``to_thread`` copies into the thread.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Callable
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")

_STOP: contextvars.ContextVar[threading.Event | None] = contextvars.ContextVar("pi_tui_thread_stop", default=None)


class ThreadCancelled(Exception):
    """Raised inside the thread by ``check_cancelled`` once its awaiting task was cancelled."""


def check_cancelled() -> None:
    """In work started by ``run_in_thread``: stop here when the caller was cancelled."""
    stop = _STOP.get()
    if stop is not None and stop.is_set():
        raise ThreadCancelled


async def run_in_thread(fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
    stop = threading.Event()
    token = _STOP.set(stop)
    try:
        return await asyncio.to_thread(fn, *args, **kwargs)
    except asyncio.CancelledError:
        stop.set()
        raise
    finally:
        _STOP.reset(token)
