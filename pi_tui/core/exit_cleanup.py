"""What must happen however the process ends: ``at_exit`` runs its callables at a normal exit
(through ``atexit``) and also where pi-tui ends the process with ``os._exit`` (print, JSON and RPC
modes, the TUI, the signal backstop), which skips ``atexit``. Without it every run that made a
sandbox left its ``/tmp/pi-sandbox-*`` folder behind, and a git of the checkpoint store still
running was orphaned.

Each callable runs once, newest first (as ``atexit``), and one that raises does not stop the others.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import threading
from collections.abc import Callable
from typing import Any, NoReturn

_PENDING: list[tuple[Callable[..., Any], tuple[Any, ...]]] = []
_LOCK = threading.Lock()


def at_exit(function: Callable[..., Any], *args: Any) -> None:
    with _LOCK:
        _PENDING.append((function, args))


def run_exit_cleanups() -> None:
    while True:
        with _LOCK:
            if not _PENDING:
                return
            function, args = _PENDING.pop()
        with contextlib.suppress(Exception):
            function(*args)


def exit_now(code: int, *, within: float | None = None) -> NoReturn:
    """``os._exit(code)`` after the cleanups (the caller has flushed what it wrote). ``within``:
    the backstops for a way out that hangs wait that many seconds for them, not longer."""
    if within is None:
        run_exit_cleanups()
    else:
        worker = threading.Thread(target=run_exit_cleanups, name="exit-cleanups", daemon=True)
        worker.start()
        worker.join(within)
    os._exit(code)


atexit.register(run_exit_cleanups)
