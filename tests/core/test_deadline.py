"""``within``: a time limit that never loses a cancel. ``asyncio.wait_for`` on 3.11 returns the
result when the cancel lands in the turn the awaited thing finished, and the task runs on: an
abort of a streamed reply was lost about one time in five (the ACP compaction-cancel test)."""

from __future__ import annotations

import asyncio
import gc
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, cast

import pytest

from pi_tui.core.deadline import cancel_and_wait, within
from pi_tui.providers.http_stream import StreamResponse


async def _cancel_as_it_finishes(wait: Any, turns: int) -> str:
    """A task awaits ``wait(future)`` then sleeps; the future finishes and, ``turns`` loop turns
    later, the task is cancelled. ``"cancelled"`` or ``"ran on"``."""
    future: asyncio.Future[int] = asyncio.get_running_loop().create_future()

    async def reader() -> int:
        return await future

    async def task_body() -> str:
        await wait(reader())
        await asyncio.sleep(0.2)
        return "ran on"

    task = asyncio.ensure_future(task_body())
    await asyncio.sleep(0.01)
    future.set_result(1)
    for _ in range(turns):
        await asyncio.sleep(0)
    task.cancel()
    try:
        return await task
    except asyncio.CancelledError:
        return "cancelled"


@pytest.mark.parametrize("turns", [0, 1, 2, 3])
async def test_a_cancel_landing_as_the_wait_finishes_is_kept(turns: int) -> None:
    assert await _cancel_as_it_finishes(lambda c: within(c, 10), turns) == "cancelled"


async def test_the_limit_raises_timeout_and_cancels_what_it_waited_for() -> None:
    started = asyncio.Event()
    cancelled = []

    async def forever() -> None:
        started.set()
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            cancelled.append(True)
            raise

    with pytest.raises(TimeoutError):
        await within(forever(), 0.05)
    assert started.is_set() and cancelled == [True]


async def test_the_result_passes_and_none_means_no_limit() -> None:
    async def answer() -> int:
        await asyncio.sleep(0.01)
        return 42

    assert await within(answer(), 5) == 42
    assert await within(answer(), None) == 42
    assert await within(asyncio.ensure_future(answer()), 5) == 42


class _Writer:
    def close(self) -> None: ...
    async def wait_closed(self) -> None: ...


@pytest.mark.parametrize("turns", [0, 1, 2, 3])
async def test_a_streamed_body_stops_at_a_cancel_that_lands_with_data(turns: int) -> None:
    """The provider's body reader (every streamed reply): data arrives, the abort lands in the
    same moment, and the reading stops — it does not read on to the reply's end."""
    reader = asyncio.StreamReader()
    response = StreamResponse(status=200, headers={}, _reader=reader, _writer=cast(Any, _Writer()), _timeout=30)
    pieces: list[bytes] = []

    async def read_all() -> None:
        async for piece in response.iter_bytes():
            pieces.append(piece)

    task = asyncio.ensure_future(read_all())
    await asyncio.sleep(0.01)
    reader.feed_data(b"data: one\n\n")
    for _ in range(turns):
        await asyncio.sleep(0)
    task.cancel()
    reader.feed_data(b"data: two\n\n")
    await asyncio.sleep(0.05)
    reader.feed_data(b"data: three\n\n")
    reader.feed_eof()
    done, _ = await asyncio.wait({task}, timeout=2)
    assert done, "the reading never ended"
    assert task.cancelled(), f"read on after the cancel: {pieces}"
    assert b"data: three\n\n" not in pieces


EXPECTED_CASES = {
    "deadline_in_a_clean_up_after_a_caught_cancel": "returned clean-up bounded",
    "outside_cancel_as_the_deadline_fires": "CancelledError",
    "a_swallowed_deadline_leaves_no_cancel_behind": "returned swallowed, cancelling=0",
}


def _interpreters() -> list[str]:
    """This venv's Python, and a system 3.11 older than 3.11.3 (Debian 12's 3.11.2: its
    ``asyncio.timeout`` turns a deadline after a caught cancel into CancelledError)."""
    found = [sys.executable]
    system = shutil.which("python3.11", path="/usr/bin:/usr/local/bin")
    if system is not None and os.path.realpath(system) != os.path.realpath(sys.executable):
        found.append(system)
    return found


@pytest.mark.parametrize("python", _interpreters())
def test_the_patch_level_cases_hold_on_each_interpreter(python: str) -> None:
    run = subprocess.run([python, str(Path(__file__).with_name("deadline_cases.py"))],
                         capture_output=True, text=True, timeout=60, check=False)
    assert run.returncode == 0, run.stderr
    got = dict(line.split(": ", 1) for line in run.stdout.splitlines())
    assert got == EXPECTED_CASES


def test_an_older_system_python_is_checked_or_said_not_to_be() -> None:
    if len(_interpreters()) == 1:
        pytest.skip("NO OLDER PYTHON 3.11 CHECKED: no /usr/bin/python3.11 besides the venv's "
                    "(the deadline-after-a-caught-cancel case ran on this interpreter only)")


async def test_a_limit_of_zero_times_out_without_starting() -> None:
    started = []

    async def reader() -> int:
        started.append(True)
        return 1

    with pytest.raises(TimeoutError):
        await within(reader(), 0)
    assert started == []
    done: asyncio.Future[int] = asyncio.get_running_loop().create_future()
    done.set_result(7)
    assert await within(done, -1) == 7


async def test_cancel_and_wait_keeps_the_callers_cancel_and_raises_no_child_error() -> None:
    async def failing() -> None:
        await asyncio.sleep(0)
        raise RuntimeError("child error")

    async def stubborn() -> None:
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            await asyncio.sleep(0.2)  # ends slowly after its cancel

    failed = asyncio.ensure_future(failing())
    await asyncio.sleep(0.01)
    await cancel_and_wait(failed, None)  # already done with an error: nothing raised

    async def caller() -> str:
        child = asyncio.ensure_future(stubborn())
        await asyncio.sleep(0.01)
        await cancel_and_wait(child)
        return "ran on"

    task = asyncio.ensure_future(caller())
    await asyncio.sleep(0.05)  # the caller waits for its child's slow end
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_a_deadline_turned_into_an_error_leaves_no_cancel_behind() -> None:
    """The awaited code may answer the deadline's cancel with an error of its own: that error
    propagates, and the task is not left counting a cancel no one will deliver."""
    async def converts() -> None:
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            raise OSError("connection torn down") from None

    with pytest.raises(OSError, match="torn down"):
        await within(converts(), 0.02)
    task = asyncio.current_task()
    assert task is not None and task.cancelling() == 0


async def test_cancel_and_wait_is_bounded_and_leaves_no_unretrieved_error() -> None:
    release = asyncio.Event()

    async def slow_to_end() -> None:
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            await release.wait()  # a clean-up that takes its time

    async def fails() -> None:
        raise RuntimeError("failed before the clean-up")

    slow = asyncio.ensure_future(slow_to_end())
    failed = asyncio.ensure_future(fails())
    await asyncio.sleep(0.01)
    loop = asyncio.get_running_loop()
    reported: list[dict[str, Any]] = []
    loop.set_exception_handler(lambda _loop, context: reported.append(context))
    try:
        started = loop.time()
        await cancel_and_wait(slow, failed, seconds=0.1)
        assert 0.09 <= loop.time() - started < 2 and not slow.done()
        del failed
        gc.collect()  # an unretrieved error is reported when its task is collected
        assert [c["message"] for c in reported] == []
    finally:
        loop.set_exception_handler(None)
        release.set()
        await slow
