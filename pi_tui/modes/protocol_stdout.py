"""stdout reserved for protocol frames (RPC and ACP modes).

Pointing ``sys.stdout`` at stderr stops a stray ``print``, but not the other ways bytes reach
file descriptor 1: ``sys.__stdout__``, ``os.write(1, …)``, a C library, or a program an extension
starts (``os.system``, ``subprocess.run`` without ``stdout=``), which inherits fd 1. Any of them
would put a line between two frames and break the client's parser. So for the mode's lifetime the
frames get a private duplicate of the real stdout, and fd 1 itself becomes a copy of stderr (the
client's log): whatever anything else writes to "stdout" lands there.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import Callable, Coroutine, Iterator
from typing import IO, Any

from pi_tui.core.exit_cleanup import exit_now
from pi_tui.tools.shell import kill_running_process_groups


@contextlib.contextmanager
def frames_only_stdout() -> Iterator[IO[bytes]]:
    """A binary stream onto the real stdout, for frames only; meanwhile fd 1 and ``sys.stdout``
    go to stderr. Both are restored on the way out."""
    real_stdout = sys.stdout
    with contextlib.suppress(Exception):
        real_stdout.flush()
    try:
        private = os.dup(1)
    except OSError:  # no fd 1 at all (closed at start): frames go where sys.stdout went
        sys.stdout = sys.stderr
        try:
            yield real_stdout.buffer
        finally:
            sys.stdout = real_stdout
        return
    frames = os.fdopen(private, "wb")  # buffered: a large frame is written whole, then flushed
    saved = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    try:
        yield frames
    finally:
        sys.stdout = real_stdout
        with contextlib.suppress(OSError):
            os.dup2(saved, 1)
        os.close(saved)
        with contextlib.suppress(OSError):
            frames.close()


def serve_protocol(serve: Callable[[IO[bytes]], Coroutine[Any, Any, int]], *, hard_exit: bool | None) -> int:
    """Run a protocol mode's ``serve(frames_out)`` on the event loop with stdout reserved for
    its frames; returns the exit code or, outside tests, ends the process with it (``os._exit``:
    a thread stuck in a hung read must not hold the exit). However serving ended, no command it
    started runs on."""
    with frames_only_stdout() as frames_out:
        try:
            code = asyncio.run(serve(frames_out))
        except KeyboardInterrupt:
            code = 130
        finally:
            kill_running_process_groups()
    if hard_exit is None:
        hard_exit = "PYTEST_CURRENT_TEST" not in os.environ
    if hard_exit:
        sys.stderr.flush()
        exit_now(code)
    return code
