"""Helpers shared by the tools tests."""

from __future__ import annotations

import os
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


def group_after_kill(pgid: int, seconds: float = 2.0) -> list[int]:
    """``live_processes_in_group`` once SIGKILL has had time to land: the shell is waited for,
    but its other members (a ``cmd &`` job) die asynchronously, reparented to init."""
    import time

    deadline = time.monotonic() + seconds
    while (alive := live_processes_in_group(pgid)) and time.monotonic() < deadline:
        time.sleep(0.02)
    return alive
