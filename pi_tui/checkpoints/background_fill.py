"""The rest of a snapshot that ran out of time with new files left (the first snapshot of a
huge tree: 100,000 files take ~30 s here, against ``checkpoints.timeoutMs``'s 5 s).

The snapshot is recorded as skipped and the turn goes on; the files not yet stored are then
hashed into the store in a daemon thread with a budget of its own
(``checkpoints.firstSnapshotTimeoutMs``). It binds nothing — it only fills the store's index and
objects, so that the next snapshot is a stat pass. Meanwhile the session's snapshots are skipped
at once with that reason (never waiting for it); a daemon thread never holds the process at exit.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable

from pi_tui.checkpoints.git_store import CheckpointError, GitStore

DEFAULT_FIRST_TIMEOUT_MS = 300_000

Done = Callable[[str | None, int], None]
"""Called on the event loop when the fill ends: (problem or None, milliseconds)."""


class BackgroundFill:
    def __init__(self) -> None:
        self._thread: threading.Thread | None = None
        self.left = 0

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self, store: GitStore, budget_ms: int, left: int, done: Done) -> bool:
        """Start filling the store unless a fill runs already; False when one did."""
        if self.running:
            return False
        loop = asyncio.get_running_loop()
        self.left = left

        def work() -> None:
            started = time.monotonic()
            problem: str | None = None
            try:
                store.snapshot(started + budget_ms / 1000)
            except CheckpointError as err:
                problem = str(err)
            except OSError as err:  # the project folder went away meanwhile
                problem = str(err)
            ms = int((time.monotonic() - started) * 1000)
            try:
                loop.call_soon_threadsafe(done, problem, ms)
            except RuntimeError:  # the loop is closed: nobody is listening any more
                pass

        self._thread = threading.Thread(target=work, name="pi-tui-checkpoints-fill", daemon=True)
        self._thread.start()
        return True

    def wait(self, timeout: float) -> bool:
        """Block until the fill ends (tests, benchmarks); True when it did within ``timeout``."""
        if self._thread is not None:
            self._thread.join(timeout)
        return not self.running
