"""``within``: a time limit that never loses a cancel. ``asyncio.wait_for`` on 3.11 returns the
result when the cancel lands in the turn the awaited thing finished, and the task runs on: an
abort of a streamed reply was lost about one time in five (the ACP compaction-cancel test)."""

from __future__ import annotations

import asyncio
from typing import Any, cast

import pytest

from pi_tui.core.deadline import within
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
