"""End to end in a real terminal: ``pi-tui`` in tmux against the fake OpenAI-compatible server.

The model is a models.json provider in a temp agent dir pointing at ``FakeServer`` on 127.0.0.1,
so the real CLI, the real HTTP client and the real Textual driver are all exercised.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from pi_tui.testing.fake_server import FakeServer

pytestmark = [pytest.mark.tmux, pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")]

ANSWER = "Hello from the fake server, streamed over HTTP."


def _tmux(*args: str) -> str:
    return subprocess.run(["tmux", *args], capture_output=True, text=True, check=False).stdout


def _screen(name: str) -> str:
    return _tmux("capture-pane", "-p", "-t", name)


def _wait_for(name: str, text: str, seconds: float = 20.0) -> str:
    deadline = time.monotonic() + seconds
    screen = ""
    while time.monotonic() < deadline:
        screen = _screen(name)
        if text in screen:
            return screen
        time.sleep(0.1)
    raise AssertionError(f"{text!r} did not appear on screen; last screen:\n{screen}")


def test_prompt_streams_an_answer_in_a_real_terminal_and_quits(tmp_path: Path, isolated_home: Path,
                                                               agent_dir: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    with FakeServer([{"text": ANSWER, "chunk_size": 6}]) as server:
        (agent_dir / "models.json").write_text(json.dumps({"providers": {"fake": {
            "baseUrl": server.base_url, "api": "openai-completions", "apiKey": "test-key",
            "models": [{"id": "fake-model", "contextWindow": 8000}],
        }}}))
        name = f"pi-tui-e2e-{uuid.uuid4().hex[:8]}"
        command = (
            f"cd {project} && HOME={isolated_home} PI_CODING_AGENT_DIR={agent_dir} "
            f"{sys.executable} -m pi_tui --model fake/fake-model; echo PI_TUI_EXITED $?; sleep 30"
        )
        _tmux("new-session", "-d", "-s", name, "-x", "120", "-y", "40", command)
        try:
            started = time.monotonic()
            _wait_for(name, "Message · / commands")
            first_frame = time.monotonic() - started
            _tmux("send-keys", "-t", name, "-l", "say hi")
            _tmux("send-keys", "-t", name, "Enter")
            screen = _wait_for(name, ANSWER)
            assert "say hi" in screen
            assert "fake/fake-model" in screen
            _tmux("send-keys", "-t", name, "C-c")
            _tmux("send-keys", "-t", name, "C-c")
            quit_started = time.monotonic()
            _wait_for(name, "PI_TUI_EXITED 0", seconds=10)
            assert time.monotonic() - quit_started < 3.0
            assert first_frame < 10.0
            assert len(server.requests) == 1
        finally:
            _tmux("kill-session", "-t", name)
