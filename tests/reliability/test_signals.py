"""Processes left behind: pi-tui ended by SIGTERM, SIGHUP or SIGINT while a ``bash`` call runs.

A real pi-tui process (print, JSON and RPC mode here; the TUI in test_terminal_hangup.py) runs a
``bash`` call whose shell and grandchild ignore SIGTERM and SIGHUP. The signal arrives while it
runs. Then, as pi does: the exit status is 143 / 129 / 130, the command's whole process group is
gone, and the session file holds the prompt and the aborted call, parses line by line, and is no
longer locked.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from pi_tui.providers.fake_server import FakeServer
from tests.reliability.pi_process import (
    PROMPT,
    assert_group_gone,
    check_session_kept,
    child_env,
    fake_agent_dir,
    kill_group_quietly,
    pi_command,
    start_stubborn_call_in_tui,
    stubborn_script,
    tmux_session,
    tmux_wait_for,
    tui_shell_command,
    wait_for_stubborn_call,
)
from tests.reliability.record import FaultRecord

FAULT_CLASS = "processes left behind"

EXPECTED_STATUS = {signal.SIGTERM: 143, signal.SIGHUP: 129, signal.SIGINT: 130}
EXITS_WITHIN = 5.0  # abort grace (1 s) + session shutdown, with room for a loaded machine


def _start(mode: str, agent: Path, project: Path) -> subprocess.Popen[bytes]:
    if mode == "rpc":
        args = pi_command("--mode", "rpc")
    elif mode == "json":
        args = pi_command("--mode", "json", "-p", PROMPT)
    else:
        args = pi_command("-p", PROMPT)
    process = subprocess.Popen(args, cwd=project, env=child_env(agent),
                               stdin=subprocess.PIPE if mode == "rpc" else subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if mode == "rpc":
        assert process.stdin is not None
        process.stdin.write((json.dumps({"id": "1", "type": "prompt", "message": PROMPT}) + "\n").encode())
        process.stdin.flush()  # stdin stays open: the client is still there
    return process


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT], ids=lambda s: s.name)
@pytest.mark.parametrize("mode", ["text", "json", "rpc"])
def test_a_signal_during_a_bash_call_kills_its_group_and_saves_the_session(
    fault: FaultRecord, tmp_path: Path, mode: str, signum: signal.Signals
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    pidfile = tmp_path / "shell.pid"
    with FakeServer(stubborn_script(pidfile)) as server:
        agent = fake_agent_dir(tmp_path, server.base_url)
        process = _start(mode, agent, project)
        pgid = None
        try:
            with fault.case(f"{signum.name} to pi-tui {mode} mode during bash") as case:
                pgid = wait_for_stubborn_call(pidfile)
                process.send_signal(signum)
                sent = time.monotonic()
                try:
                    stdout, stderr = process.communicate(timeout=EXITS_WITHIN + 5)
                except subprocess.TimeoutExpired:
                    process.kill()
                    stdout, stderr = process.communicate()
                    raise AssertionError(f"pi-tui did not exit after {signum.name}") from None
                took = time.monotonic() - sent
                case.no_traceback(stderr, stdout)
                assert_group_gone(pgid)
                assert process.returncode == EXPECTED_STATUS[signum], (process.returncode, stderr.decode()[-2000:])
                assert took < EXITS_WITHIN, f"exit took {took:.1f} s"
                check_session_kept(case, agent)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
            kill_group_quietly(pgid)


@pytest.mark.tmux
@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=lambda s: s.name)
def test_a_signal_to_the_tui_during_a_bash_call(
    fault: FaultRecord, tmp_path: Path, isolated_home: Path, signum: signal.Signals
) -> None:
    """The TUI in a real terminal: SIGTERM leaves through Textual (terminal restored, 143);
    SIGHUP leaves without touching the terminal (129). Both kill the command's group and keep
    the session."""
    project = tmp_path / "project"
    project.mkdir()
    pidfile = tmp_path / "shell.pid"
    with FakeServer(stubborn_script(pidfile)) as server:
        agent = fake_agent_dir(tmp_path, server.base_url)
        command = tui_shell_command(project, agent, isolated_home, tail="; echo PI_TUI_EXITED $?; sleep 30")
        pgid = None
        with tmux_session(command, project) as name:
            try:
                with fault.case(f"{signum.name} to the TUI during bash") as case:
                    pid, pgid = start_stubborn_call_in_tui(name, project, pidfile)
                    os.kill(pid, signum)
                    screen = tmux_wait_for(name, "PI_TUI_EXITED", seconds=EXITS_WITHIN + 5)
                    case.no_traceback(screen)
                    assert_group_gone(pgid)
                    assert f"PI_TUI_EXITED {EXPECTED_STATUS[signum]}" in screen, screen
                    check_session_kept(case, agent)
            finally:
                kill_group_quietly(pgid)
