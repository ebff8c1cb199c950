"""The bytes a real terminal receives: ``pi-tui`` (the real CLI, Textual's real driver, the real
HTTP client on the fake server) runs on a pseudo-terminal this test owns and reads every byte
of, directly and inside a real tmux (with ``allow-passthrough on``). Focus is lost by sending the
terminal's FocusOut report (``CSI O``) on the input, as a terminal does."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import pty
import shutil
import signal
import struct
import subprocess
import sys
import termios
import threading
import time
import uuid
from pathlib import Path

import pytest

from pi_tui.modes.interactive.terminal_signals import PROGRESS_ACTIVE, PROGRESS_CLEAR
from pi_tui.testing.fake_server import FakeServer

ANSWER = "Renamed the module and updated its imports."
pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="a Linux pseudo-terminal")


class PtyTerminal:
    """A child on a pseudo-terminal; everything it writes is kept in ``output``."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: Path, size: tuple[int, int] = (110, 32)) -> None:
        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", size[1], size[0], 0, 0))
        self.master = master
        self.process = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env, cwd=cwd,
                                        start_new_session=True, close_fds=True)
        os.close(slave)
        self.output = b""
        self._lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while True:
            try:
                chunk = os.read(self.master, 65536)
            except OSError:
                return
            if not chunk:
                return
            with self._lock:
                self.output += chunk

    def text(self) -> str:
        with self._lock:
            return self.output.decode("utf-8", "replace")

    def type(self, data: str) -> None:
        os.write(self.master, data.encode())

    def wait_for(self, needle: str, seconds: float = 30.0) -> str:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            text = self.text()
            if needle in text:
                return text
            if self.process.poll() is not None and needle not in self.text():
                break
            time.sleep(0.05)
        raise AssertionError(f"{needle!r} never reached the terminal; last bytes: {self.text()[-1500:]!r}")

    def close(self) -> None:
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(5)
        with contextlib.suppress(OSError):
            os.close(self.master)


def _setup(agent_dir: Path, server: FakeServer, settings: dict[str, object]) -> None:
    (agent_dir / "models.json").write_text(json.dumps({"providers": {"fake": {
        "baseUrl": server.base_url, "api": "openai-completions", "apiKey": "test-key",
        "models": [{"id": "fake-model", "contextWindow": 8000}],
    }}}))
    (agent_dir / "settings.json").write_text(json.dumps(settings))


def _env(isolated_home: Path, agent_dir: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("TMUX", "TMUX_PANE", "TERM_PROGRAM", "KITTY_WINDOW_ID", "ITERM_SESSION_ID", "LC_TERMINAL",
                        "WEZTERM_PANE", "GHOSTTY_RESOURCES_DIR", "PI_PERMISSION_MODE")}
    env.update(HOME=str(isolated_home), PI_CODING_AGENT_DIR=str(agent_dir), TERM="xterm-256color", **extra)
    return env


def _run_one_prompt(terminal: PtyTerminal, *, leave_focus: bool) -> str:
    terminal.wait_for("\x1b[?1004h")  # Textual asked for focus reports
    terminal.wait_for("commands")  # the editor's placeholder: the first frame is up
    time.sleep(0.5)  # the session attaches right after the first frame
    terminal.type("rename it")
    time.sleep(0.2)
    terminal.type("\r")
    if leave_focus:
        time.sleep(0.3)  # the answer is delayed by 1.5 s: the user looks elsewhere meanwhile
        terminal.type("\x1b[O")
    return terminal.wait_for(ANSWER[:20])


def test_progress_and_a_notification_reach_a_real_terminal(tmp_path: Path, isolated_home: Path, agent_dir: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    with FakeServer([{"text": ANSWER, "delay_ms": 1500}]) as server:
        _setup(agent_dir, server, {"terminal": {"showTerminalProgress": True}})
        terminal = PtyTerminal([sys.executable, "-m", "pi_tui", "--model", "fake/fake-model"],
                               _env(isolated_home, agent_dir, TERM_PROGRAM="ghostty"), project)
        try:
            _run_one_prompt(terminal, leave_focus=True)
            notify = f"\x1b]777;notify;pi-tui;Done: {ANSWER}\x07"
            text = terminal.wait_for(notify)
            text = terminal.wait_for(PROGRESS_CLEAR)
            start = text.index(PROGRESS_ACTIVE)
            assert start < text.index(notify)
            assert text.rindex(PROGRESS_ACTIVE) < text.index(PROGRESS_CLEAR, start)
            assert text.count(notify) == 1
        finally:
            terminal.close()


def test_no_notification_while_the_terminal_keeps_the_focus(tmp_path: Path, isolated_home: Path, agent_dir: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    with FakeServer([{"text": ANSWER, "delay_ms": 300}]) as server:
        _setup(agent_dir, server, {})
        terminal = PtyTerminal([sys.executable, "-m", "pi_tui", "--model", "fake/fake-model"],
                               _env(isolated_home, agent_dir, TERM_PROGRAM="ghostty"), project)
        try:
            _run_one_prompt(terminal, leave_focus=False)
            time.sleep(1.0)
            text = terminal.text()
            assert "777;notify" not in text
            assert PROGRESS_ACTIVE not in text  # showTerminalProgress is off by default (pi)
        finally:
            terminal.close()


@pytest.mark.tmux
@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_inside_a_real_tmux_the_sequences_pass_through(tmp_path: Path, isolated_home: Path, agent_dir: Path) -> None:
    """tmux (its client on our terminal) forwards the DCS-wrapped sequences to the outer terminal."""
    project = tmp_path / "project"
    project.mkdir()
    socket = f"pi-notify-{uuid.uuid4().hex[:8]}"
    conf = tmp_path / "tmux.conf"
    conf.write_text("set -g allow-passthrough on\nset -g focus-events on\nset -g status off\n")
    with FakeServer([{"text": ANSWER, "delay_ms": 1500}]) as server:
        _setup(agent_dir, server, {"terminal": {"showTerminalProgress": True}})
        env = _env(isolated_home, agent_dir, GHOSTTY_RESOURCES_DIR="/usr/share/ghostty")
        inner = f"{sys.executable} -m pi_tui --model fake/fake-model; sleep 30"
        terminal = PtyTerminal(["tmux", "-L", socket, "-f", str(conf), "new-session", "-x", "110", "-y", "32", inner],
                               env, project)
        try:
            _run_one_prompt(terminal, leave_focus=True)
            notify = f"\x1b]777;notify;pi-tui;Done: {ANSWER}\x07"
            text = terminal.wait_for(notify)
            assert PROGRESS_ACTIVE in text
            terminal.wait_for(PROGRESS_CLEAR)
        finally:
            terminal.close()
            subprocess.run(["tmux", "-L", socket, "kill-server"], capture_output=True, check=False, timeout=10)
