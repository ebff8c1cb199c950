"""The permission dialog in a real terminal: ``pi-tui`` in tmux (its own tmux server), the real
CLI, HTTP client, Textual driver and bwrap, a fake model asking for two bash calls. The first
(default mode: sandboxed bash asks) shows the command, folder and why; Enter allows it once and
it runs in the sandbox. The second asks to leave the sandbox: the dialog puts Deny first, so
Enter denies, and the file outside the project is never made. The footer shows the mode."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from pi_tui.permissions.sandbox import find_bwrap
from pi_tui.testing.fake_server import FakeServer
from tests.permissions.conftest import FakeWorld

pytestmark = [pytest.mark.tmux, pytest.mark.skipif(shutil.which("tmux") is None or find_bwrap() is None,
                                                   reason="NO SANDBOX TESTED: tmux or bwrap is not installed")]
REPO = Path(__file__).resolve().parents[2]


class Tmux:
    def __init__(self) -> None:
        self.socket = f"pi-perm-{uuid.uuid4().hex[:8]}"

    def __call__(self, *args: str) -> str:
        return subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True, check=False,
                              timeout=10).stdout

    def wait_for(self, text: str, seconds: float = 30.0) -> str:
        deadline = time.monotonic() + seconds
        screen = ""
        while time.monotonic() < deadline:
            screen = self("capture-pane", "-p", "-t", "pi")
            if text in screen:
                return screen
            time.sleep(0.1)
        raise AssertionError(f"{text!r} did not appear on screen; last screen:\n{screen}")


def test_the_dialog_allows_once_and_enter_never_approves_an_escalation(fake_world: FakeWorld) -> None:
    outside = fake_world.sibling / "escaped.txt"
    script = [
        {"tool_calls": [{"id": "b1", "name": "bash", "arguments": {"command": "echo made > made.txt"}}]},
        {"text": "First done."},
        {"tool_calls": [{"id": "b2", "name": "bash", "arguments": {
            "command": f"echo x > {outside}", "escalate": True, "justification": "write next door"}}]},
        {"text": "Second done."},
    ]
    tmux = Tmux()
    with FakeServer(script) as server:
        (fake_world.agent / "models.json").write_text(json.dumps({"providers": {"fake": {
            "baseUrl": server.base_url, "api": "openai-completions", "apiKey": "test-key",
            "models": [{"id": "fake-model", "contextWindow": 8000}]}}}))
        command = (f"cd {shlex.quote(str(fake_world.project))} && env -u PI_PERMISSION_MODE HOME={fake_world.home} "
                   f"PI_CODING_AGENT_DIR={fake_world.agent} PYTHONPATH={REPO} {sys.executable} -m pi_tui "
                   "--model fake/fake-model --trust-project --permission-mode default; "
                   "echo PI_TUI_EXITED $?; sleep 30")
        tmux("new-session", "-d", "-s", "pi", "-x", "140", "-y", "45", command)
        try:
            screen = tmux.wait_for("mode default")
            tmux("send-keys", "-t", "pi", "-l", "make the file")
            tmux("send-keys", "-t", "pi", "Enter")
            screen = tmux.wait_for("Permission: bash")
            assert "echo made > made.txt" in screen and str(fake_world.project) in screen
            assert "bash asks first in default mode" in screen and "Allow once" in screen
            tmux("send-keys", "-t", "pi", "Enter")  # the first option: Allow once
            tmux.wait_for("First done.")
            assert (fake_world.project / "made.txt").read_text() == "made\n"
            tmux("send-keys", "-t", "pi", "-l", "now next door")
            tmux("send-keys", "-t", "pi", "Enter")
            screen = tmux.wait_for("outside the sandbox")
            assert "write next door" in screen
            tmux("send-keys", "-t", "pi", "Enter")  # an escalation: Enter is Deny
            screen = tmux.wait_for("Second done.")
            assert "Denied by the user" in screen
            assert not outside.exists()
            tmux("send-keys", "-t", "pi", "C-c")
            tmux("send-keys", "-t", "pi", "C-c")
            tmux.wait_for("PI_TUI_EXITED 0", seconds=10)
        finally:
            tmux("kill-server")
