"""One writer per file at a time (pi 0.73.1 file-mutation-queue, §13.4).

``edit`` and ``write`` calls on the same file run one after another in call order, even when the
agent loop runs a batch of tool calls in parallel; two edits of one file in one batch would
otherwise read the same original and the second write would lose the first. The key is the
resolved real path, so a symlink and its target share a queue. ``asyncio.Lock`` wakes waiters
first-in first-out, which gives call order. Different files never wait for each other.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

_locks: dict[str, tuple[asyncio.Lock, int]] = {}


def mutation_key(path: Path | str) -> str:
    return os.path.realpath(os.fspath(path))


@asynccontextmanager
async def file_mutation_lock(path: Path | str) -> AsyncIterator[None]:
    key = mutation_key(path)
    lock, users = _locks.get(key, (None, 0))
    if lock is None:
        lock = asyncio.Lock()
    _locks[key] = (lock, users + 1)
    try:
        async with lock:
            yield
    finally:
        current_lock, current_users = _locks[key]
        if current_users <= 1:
            del _locks[key]  # nobody waits: drop it so the table does not grow
        else:
            _locks[key] = (current_lock, current_users - 1)
