"""Helpers shared by the tools tests."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from pi_tui.core.tool import ToolResult


def text(result: ToolResult) -> str:
    return "".join(block["text"] for block in result.content if block["type"] == "text")


def live_processes_in_group(pgid: int) -> list[int]:
    """Pids of non-zombie processes whose process group is ``pgid`` (from /proc)."""
    alive = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        # pid (comm) state ppid pgrp ...; comm may contain spaces: split after the last ')'
        fields = stat[stat.rfind(")") + 2 :].split()
        state, pgrp = fields[0], int(fields[2])
        if pgrp == pgid and state != "Z":
            alive.append(int(entry))
    return alive


KILLED_GROUP_DIES_WITHIN = 20.0
"""How long a test waits for a SIGKILLed process group to be gone. Not a speed claim: the shell
is waited for, but its other members (a ``cmd &`` job, a foreground child) die asynchronously,
reparented to init, and on a loaded machine a killed process can wait seconds for the CPU it
needs to exit. The wait ends as soon as the group is empty."""


def group_after_kill(pgid: int, seconds: float = KILLED_GROUP_DIES_WITHIN) -> list[int]:
    """``live_processes_in_group`` once SIGKILL has had time to land (empty when all died)."""
    import time

    deadline = time.monotonic() + seconds
    while (alive := live_processes_in_group(pgid)) and time.monotonic() < deadline:
        time.sleep(0.02)
    return alive


async def output_arrives(seen: Callable[[], bool], seconds: float = 30.0) -> None:
    """Wait (on the event loop) until ``seen()``: a command's first output, on a machine that
    may take seconds to start a shell. Fails naming the wait rather than going on without it."""
    import asyncio

    deadline = asyncio.get_running_loop().time() + seconds
    while not seen():
        assert asyncio.get_running_loop().time() < deadline, f"no output within {seconds:g} s"
        await asyncio.sleep(0.01)
