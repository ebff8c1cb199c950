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
from pathlib import Path

import pytest

from pi_tui.testing.fake_server import FakeServer
from tests.reliability.pi_process import (
    assert_group_gone,
    check_session_kept,
    cpu_seconds,
    fake_agent_dir,
    is_alive,
    kill_group_quietly,
    start_stubborn_call_in_tui,
    stubborn_script,
    tmux,
    tmux_session,
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


REPOSITORY = Path(__file__).resolve().parents[2]
SCRIPT_MARKER = "bin/pi-tui"
"""How the repository's ``make run`` process is told apart: it runs ``.venv/bin/pi-tui``."""


@pytest.mark.parametrize("started", ["directly", "under make", "by the repository's make run"])
def test_killing_the_terminal_ends_pi_tui_and_its_commands(
    fault: FaultRecord, tmp_path: Path, isolated_home: Path, started: str
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    marker = "pi_tui"
    pidfile = tmp_path / "shell.pid"
    with FakeServer(stubborn_script(pidfile)) as server:
        agent = fake_agent_dir(tmp_path, server.base_url)
        command = tui_shell_command(project, agent, isolated_home)
        if started == "under make":
            command = f"make -s -f {shlex.quote(str(_makefile(tmp_path, command)))} run"
        elif started == "by the repository's make run":
            if not (REPOSITORY / ".venv" / SCRIPT_MARKER).exists():
                pytest.skip("no .venv/bin/pi-tui (make run installs it)")
            # `make run` in the repository itself (its cwd is the project): the Makefile, its
            # compile step and the installed script, as a person starts it; -o: never reinstall here.
            project, marker = REPOSITORY, SCRIPT_MARKER
            command = (f"cd {shlex.quote(str(REPOSITORY))} && env HOME={shlex.quote(str(isolated_home))} "
                       f"PI_CODING_AGENT_DIR={shlex.quote(str(agent))} make -s -o .venv/.installed run "
                       "ARGS='--model fake/fake-model'")
        else:
            command = f"exec sh -c {shlex.quote(command.replace(' env ', ' exec env ', 1))}"
        pgid = None
        with tmux_session(command, project, marker) as name:
            try:
                with fault.case(f"tmux session killed, pi-tui started {started}") as case:
                    pid, pgid = start_stubborn_call_in_tui(name, project, pidfile, marker)
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
                    assert_group_gone(pgid)
                    check_session_kept(case, agent)
            finally:
                kill_group_quietly(pgid)


if sys.platform != "linux":  # /proc probes
    pytestmark.append(pytest.mark.skip(reason="Linux only"))
