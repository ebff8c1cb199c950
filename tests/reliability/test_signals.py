"""Processes left behind: pi-tui ended by SIGTERM, SIGHUP or SIGINT while a ``bash`` call runs.

A real pi-tui process (print, JSON, RPC and ACP mode here; the TUI in test_terminal_hangup.py) runs a
``bash`` call whose shell and grandchild ignore SIGTERM and SIGHUP. The signal arrives while it
runs. Then, as pi does: the exit status is 143 / 129 / 130, the command's whole process group is
gone, and the session file holds the prompt and the aborted call, parses line by line, and is no
longer locked.
"""

from __future__ import annotations

import array
import contextlib
import json
import os
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pi_tui.modes.shutdown import HARD_EXIT_SECONDS
from pi_tui.testing.fake_server import FakeServer
from tests.reliability.pi_process import (
    PROMPT,
    assert_group_gone,
    check_session_kept,
    child_env,
    fake_agent_dir,
    kill_group_quietly,
    lock_is_free,
    pi_command,
    session_entries,
    session_files,
    start_stubborn_call_in_tui,
    stubborn_script,
    texts_of,
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
    if mode == "acp":
        return _start_acp(agent, project)
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


def _start_acp(agent: Path, project: Path) -> subprocess.Popen[bytes]:
    """An editor's connection: initialize, a new session, the prompt (stdin stays open). The
    permission question is switched off (the global setting), so the call runs at once."""
    (agent / "settings.json").write_text(json.dumps({"acp": {"askPermission": False}}))
    process = subprocess.Popen(pi_command("--mode", "acp"), cwd=project, env=child_env(agent),
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert process.stdin is not None and process.stdout is not None

    def request(request_id: int, method: str, params: dict[str, object]) -> None:
        assert process.stdin is not None
        process.stdin.write((json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
                             + "\n").encode())
        process.stdin.flush()

    request(0, "initialize", {"protocolVersion": 1})
    request(1, "session/new", {"cwd": str(project), "mcpServers": []})
    while (frame := json.loads(process.stdout.readline())).get("id") != 1:
        pass
    request(2, "session/prompt", {"sessionId": frame["result"]["sessionId"], "prompt": [{"type": "text", "text": PROMPT}]})
    return process


@contextlib.contextmanager
def _during_a_stubborn_call(tmp_path: Path, mode: str) -> Iterator[tuple[subprocess.Popen[bytes], Path, int]]:
    """pi-tui in ``mode`` running the stubborn ``bash`` call: (the process, its agent dir, the
    call's process group). Afterwards nothing of either is left running."""
    project = tmp_path / "project"
    project.mkdir()
    pidfile = tmp_path / "shell.pid"
    with FakeServer(stubborn_script(pidfile)) as server:
        agent = fake_agent_dir(tmp_path, server.base_url)
        process = _start(mode, agent, project)
        pgid = None
        try:
            pgid = wait_for_stubborn_call(pidfile)
            yield process, agent, pgid
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
            kill_group_quietly(pgid)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT], ids=lambda s: s.name)
@pytest.mark.parametrize("mode", ["text", "json", "rpc", "acp"])
def test_a_signal_during_a_bash_call_kills_its_group_and_saves_the_session(
    fault: FaultRecord, tmp_path: Path, mode: str, signum: signal.Signals
) -> None:
    with fault.case(f"{signum.name} to pi-tui {mode} mode during bash") as case, \
            _during_a_stubborn_call(tmp_path, mode) as (process, agent, pgid):
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


@pytest.mark.parametrize("mode", ["text", "rpc"])
def test_sigkill_of_pi_tui_takes_its_running_commands_along(fault: FaultRecord, tmp_path: Path, mode: str) -> None:
    """SIGKILL (or the OOM killer, or a crash in C) leaves pi-tui no moment to kill the running
    command's group: the shell and its children ran on, orphaned, for as long as they liked. The
    group reaper, which learns each group through a pipe only pi-tui holds, kills them when that
    pipe closes."""
    with fault.case(f"SIGKILL to pi-tui {mode} mode during bash") as case, \
            _during_a_stubborn_call(tmp_path, mode) as (process, agent, pgid):
        # The group is told to the reaper once pi-tui's loop has seen the shell start: a loaded
        # machine can run the command's first lines before that (group_reaper.py).
        time.sleep(0.5)
        process.kill()
        process.communicate(timeout=10)
        assert_group_gone(pgid)
        files = session_files(agent)
        case.kept(len(files) == 1 and PROMPT in texts_of(session_entries(files[0])), "the prompt")


def _sigterm_and_wait(process: subprocess.Popen[bytes], when: str) -> float:
    """Send SIGTERM and wait (bounded) for the exit; the seconds it took."""
    process.send_signal(signal.SIGTERM)
    sent = time.monotonic()
    try:
        process.wait(timeout=EXITS_WITHIN + 5)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"pi-tui did not exit after SIGTERM {when}") from None
    return time.monotonic() - sent


def _unread_bytes(pipe: Any) -> int:
    import fcntl
    import termios

    buffer = array.array("i", [0])
    fcntl.ioctl(pipe.fileno(), termios.FIONREAD, buffer)
    return buffer[0]


def _pipe_fills(pipe: Any, seconds: float) -> bool:
    """The unread bytes stop growing (the writer is blocked) within ``seconds``."""
    deadline = time.monotonic() + seconds
    before = -1
    while time.monotonic() < deadline:
        now = _unread_bytes(pipe)
        if now == before and now > 32_000:
            return True
        before = now
        time.sleep(1.0)
    return False


def test_sigterm_ends_rpc_mode_whose_client_stopped_reading(fault: FaultRecord, tmp_path: Path) -> None:
    """A client that stops reading stdout while a reply streams (hung, suspended, or busy): the
    pipe fills and pi-tui's write blocks its loop. SIGTERM must still end it with 143 (pi, whose
    writes never block, exits at once); pi-tui stayed alive until SIGKILL. What was recorded
    before stays: the first exchange, read in full by the client."""
    project = tmp_path / "project"
    project.mkdir()
    turns = [{"text": "A short first answer."}, {"text": "a long reply " * 20_000, "chunk_size": 8}]
    with FakeServer(turns) as server:
        agent = fake_agent_dir(tmp_path, server.base_url)
        process = _start("rpc", agent, project)
        assert process.stdin is not None and process.stdout is not None
        try:
            with fault.case("SIGTERM to pi-tui rpc mode blocked on a full stdout") as case:
                while json.loads(process.stdout.readline() or "{}").get("type", "agent_end") != "agent_end":
                    pass
                process.stdin.write(b'{"id": "2", "type": "prompt", "message": "now the long one"}\n')
                process.stdin.flush()  # and nobody reads stdout from here on
                assert _pipe_fills(process.stdout, 30), "the pipe did not fill (pi-tui still writes)"
                took = _sigterm_and_wait(process, "with its stdout full")
                assert process.returncode == 143, process.returncode
                assert took < HARD_EXIT_SECONDS + 2.0, f"exit took {took:.1f} s"  # the backstop, with slack
                files = session_files(agent)
                case.kept(len(files) == 1, "the session file")
                text = texts_of(session_entries(files[0]))
                case.kept(PROMPT in text and "A short first answer." in text, "the first exchange")
                assert lock_is_free(files[0]), "the session file is still locked"
        finally:
            if process.poll() is None:
                process.kill()
            process.communicate()


@pytest.mark.parametrize("mode", ["text", "json"])
def test_sigterm_during_a_reply_that_arrives_faster_than_it_is_shown(fault: FaultRecord, tmp_path: Path,
                                                                     mode: str) -> None:
    """A long reply the server sends at once: the stream's events came from buffered data without
    the loop ever getting control, so the abort (and the signal handler itself) waited for the
    whole reply — seconds in print mode, and in JSON mode (every event carries the partial reply)
    longer than the grace, after which the run was cancelled unrecorded: no session file at all,
    though stderr said 'session saved'."""
    project = tmp_path / "project"
    project.mkdir()
    with FakeServer([{"text": "a long reply " * 20_000, "chunk_size": 8}]) as server:
        agent = fake_agent_dir(tmp_path, server.base_url)
        process = _start(mode, agent, project)
        assert process.stdout is not None
        reading = threading.Thread(target=process.stdout.read, daemon=True)  # a reader that keeps up
        reading.start()
        try:
            with fault.case(f"SIGTERM to pi-tui {mode} mode during a reply sent at once") as case:
                time.sleep(1.5)  # the reply is streaming (it takes the old code far longer than this)
                took = _sigterm_and_wait(process, "during the reply")
                assert process.stderr is not None
                stderr = process.stderr.read()
                case.no_traceback(stderr)
                assert process.returncode == 143, (process.returncode, stderr.decode()[-1500:])
                assert took < EXITS_WITHIN, f"exit took {took:.1f} s"
                files = session_files(agent)
                case.kept(len(files) == 1, "the session file")
                entries = session_entries(files[0])
                case.kept(PROMPT in texts_of(entries), "the prompt")
                replies = [e["message"] for e in entries if e.get("type") == "message" and e["message"]["role"] == "assistant"]
                case.kept(bool(replies) and replies[-1]["stopReason"] == "aborted", "the aborted reply")
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()


@pytest.mark.parametrize("mode", ["json", "rpc"])
def test_a_reader_that_goes_away_ends_the_run(fault: FaultRecord, tmp_path: Path, mode: str) -> None:
    """``pi-tui --mode json -p … | head -1``, or an RPC client that closes its end of stdout: the
    reader is gone. pi-tui went on streaming into the closed pipe (one 'event listener failed:
    Broken pipe' line on stderr per event) and ran the reply's tool calls with nobody watching.
    Now it is SIGPIPE: the run is aborted and recorded, the status 141, no call runs."""
    project = tmp_path / "project"
    project.mkdir()
    marker = project / "ran-after-the-reader-left"
    turns = [{"text": "a long reply " * 20_000, "chunk_size": 8,
              "tool_calls": [{"id": "c1", "name": "bash", "arguments": {"command": f"touch {marker}"}}]},
             {"text": "done"}]
    with FakeServer(turns) as server:
        agent = fake_agent_dir(tmp_path, server.base_url)
        process = _start(mode, agent, project)
        assert process.stdout is not None
        try:
            with fault.case(f"{mode} mode: the reader of stdout goes away mid-reply") as case:
                while json.loads(process.stdout.readline() or '{"type": "message_update"}').get("type") != "message_update":
                    pass  # the reply streams
                process.stdout.close()
                try:
                    _, stderr = process.communicate(timeout=EXITS_WITHIN + 10)
                except subprocess.TimeoutExpired:
                    raise AssertionError("pi-tui still running long after its reader went away") from None
                case.no_traceback(stderr)
                assert process.returncode == 141, (process.returncode, stderr.decode()[-1500:])
                assert stderr.decode().count("Broken pipe") <= 1, stderr.decode()[-1500:]
                assert not marker.exists(), "the reply's tool call ran after the reader went away"
                files = session_files(agent)
                case.kept(len(files) == 1 and PROMPT in texts_of(session_entries(files[0])), "the prompt")
                assert lock_is_free(files[0]), "the session file is still locked"
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()


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
