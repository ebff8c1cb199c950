"""The cases of ``pi_tui.core.deadline`` that depend on the interpreter's patch level, as a
script (stdlib and that module only): tests/core/test_deadline.py runs it under this venv's
Python and under an older system 3.11 when there is one. Prints one ``name: outcome`` a line."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from pi_tui.core.deadline import within


def outcome(coro: object) -> str:
    try:
        return f"returned {asyncio.run(coro)}"  # type: ignore[arg-type]
    except TimeoutError:
        return "TimeoutError"
    except asyncio.CancelledError:
        return "CancelledError"


async def deadline_in_a_clean_up_after_a_caught_cancel() -> str:
    """A tool told to stop catches the cancel, then gives its clean-up a bounded wait: the
    bound must end as TimeoutError, or ``except TimeoutError`` never sees it."""
    caught = asyncio.Event()

    async def tool() -> str:
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            caught.set()
            try:
                await within(asyncio.sleep(60), 0.05)  # an editor that never answers
            except TimeoutError:
                return "clean-up bounded"
            return "clean-up ran on"
        return "never cancelled"

    task = asyncio.ensure_future(tool())
    await asyncio.sleep(0.01)
    task.cancel()
    return await task


async def outside_cancel_as_the_deadline_fires() -> str:
    async def body() -> str:
        await within(asyncio.sleep(60), 0.05)
        return "ran on"

    task = asyncio.ensure_future(body())
    await asyncio.sleep(0.05)  # the deadline and this cancel land in the same turn
    task.cancel()
    return await task


async def a_swallowed_deadline_leaves_no_cancel_behind() -> str:
    async def stubborn() -> str:
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            return "swallowed"
        return "slept"

    answer = await within(stubborn(), 0.02)
    task = asyncio.current_task()
    assert task is not None
    return f"{answer}, cancelling={task.cancelling()}"


if __name__ == "__main__":
    for case in (deadline_in_a_clean_up_after_a_caught_cancel, outside_cancel_as_the_deadline_fires,
                 a_swallowed_deadline_leaves_no_cancel_behind):
        print(f"{case.__name__}: {outcome(case())}")
