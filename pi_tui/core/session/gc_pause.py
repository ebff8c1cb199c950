"""Loading a large session without the cyclic garbage collector (issue 19 item 15).

A session file is acyclic JSON data: every entry is freed by reference counting, the cycle
collector can never free one. While 100,000 entries are being built it still ran again and again,
each full pass walking the whole growing heap (~1 s of a 2.5 s resume). So it is paused while a
session is read, checked and indexed, and a large session's objects are then moved out of its
reach (``gc.freeze``): the collections that follow (the request for the next prompt allocates a
lot) no longer walk them. Freezing is for objects that live as long as the process; the session
file's entries do (a session that is left is still freed by reference counting).
"""

from __future__ import annotations

import gc
import os
from collections.abc import Iterator
from contextlib import contextmanager

FREEZE_ENTRIES = 20_000
"""Sessions at least this large are frozen after loading (a small one costs the collector nothing)."""


@contextmanager
def collector_paused(entries: list[int] | None = None) -> Iterator[None]:
    """Pause the cyclic collector for the block; ``entries`` (a one-item list the block fills
    with the number of entries it loaded) decides whether to freeze afterwards."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            if entries and entries[0] >= FREEZE_ENTRIES and os.environ.get("PI_TUI_GC_FREEZE", "1") != "0":
                gc.freeze()
            gc.enable()
