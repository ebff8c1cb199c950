"""A terminal that goes away: the tmux session running pi-tui is killed while a ``bash`` call runs.

pi-tui is started the ways a person starts it: directly as the terminal's program (it gets the
SIGHUP), and wrapped the way ``make run`` wraps it (``make`` is the terminal's session leader and
gets the SIGHUP; pi-tui only sees its terminal hang up). Either way, within a second or so: the
process is gone (not spinning on the dead terminal), the command's process group is gone, and
the session file holds the prompt and the aborted call, parses, and is not locked.
"""

from __future__ import annotations

import shlex
import shutil
import sys
import time
import uuid
from pathlib import Path

import pytest

from pi_tui.providers.fake_server import FakeServer
from tests.reliability.pi_process import (
    PROMPT,
    READY_TEXT,
    cpu_seconds,
    fake_agent_dir,
    is_alive,
    kill_group_quietly,
    live_in_group,
    lock_is_free,
    pids_running_in,
    read_pid,
    session_entries,
    session_files,
    stubborn_script,
    texts_of,
    tmux,
    tmux_wait_for,
    tui_shell_command,
    wait_until,
)
from tests.reliability.record import FaultRecord

FAULT_CLASS = "terminal goes away"

pytestmark = [pytest.mark.tmux, pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")]

GONE_WITHIN = 3.0  # pi-tui leaves within a second; the margin is for a loaded machine


def _makefile(tmp_path: Path, command: str) -> Path:
    """A Makefile whose ``run`` target starts pi-tui as the repository's ``make run`` does
    (a recipe line under make, through make's shell)."""
    makefile = tmp_path / "Makefile"
    makefile.write_text(f"run:\n\t{command.replace('$', '$$')}\n")
    return makefile


@pytest.mark.parametrize("started", ["directly", "under make"])
def test_killing_the_terminal_ends_pi_tui_and_its_commands(
    fault: FaultRecord, tmp_path: Path, isolated_home: Path, started: str
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    pidfile = tmp_path / "shell.pid"
    name = f"pi-tui-hangup-{uuid.uuid4().hex[:8]}"
    with FakeServer(stubborn_script(pidfile)) as server:
        agent = fake_agent_dir(tmp_path, server.base_url)
        command = tui_shell_command(project, agent, isolated_home)
        if started == "under make":
            command = f"make -s -f {shlex.quote(str(_makefile(tmp_path, command)))} run"
        else:
            command = f"exec sh -c {shlex.quote(command.replace(' env ', ' exec env ', 1))}"
        tmux("new-session", "-d", "-s", name, "-x", "120", "-y", "40", command)
        pgid = None
        try:
            with fault.case(f"tmux session killed, pi-tui started {started}") as case:
                tmux_wait_for(name, READY_TEXT)
                (pid,) = pids_running_in(project)
                tmux("send-keys", "-t", name, "-l", PROMPT)
                tmux("send-keys", "-t", name, "Enter")
                assert wait_until(lambda: (p := read_pid(pidfile)) is not None and len(live_in_group(p)) >= 2, 30), (
                    "the bash call did not start"
                )
                pgid = read_pid(pidfile)
                assert pgid is not None
                tmux("kill-session", "-t", name)
                killed = time.monotonic()
                gone = wait_until(lambda: not is_alive(pid), GONE_WITHIN + 5)
                took = time.monotonic() - killed
                if not gone:
                    before = cpu_seconds(pid)
                    time.sleep(1.0)
                    busy = cpu_seconds(pid) - before
                    raise AssertionError(f"pi-tui still running {took:.0f} s after its terminal went away "
                                         f"(using {busy:.0%} of a core)")
                assert took < GONE_WITHIN, f"pi-tui took {took:.1f} s to leave"
                case.note(f"left {took:.2f} s after the terminal went away")
                assert wait_until(lambda: not live_in_group(pgid), 1.0), (
                    f"the bash call's processes outlived pi-tui: {live_in_group(pgid)}"
                )
                files = session_files(agent)
                case.kept(len(files) == 1, "the session file")
                entries = session_entries(files[0])
                text = texts_of(entries)
                case.kept(PROMPT in text, "the prompt")
                case.kept("call_stubborn" in text, "the aborted tool call")
                assert lock_is_free(files[0]), "the session file is still locked"
        finally:
            tmux("kill-session", "-t", name)
            for pid in pids_running_in(project):
                import os
                import signal

                os.kill(pid, signal.SIGKILL)
            kill_group_quietly(pgid)


if sys.platform != "linux":  # /proc probes
    pytestmark.append(pytest.mark.skip(reason="Linux only"))
