"""End to end: a real PNG in a real X11 clipboard (xclip under Xvfb), pasted with Ctrl+V into
pi-tui running in tmux, reaches the fake OpenAI-compatible server as an image block.

Xvfb picks a free display itself (``-displayfd``); xclip stays running as the selection owner
until the test kills it; tmux runs on a private socket so no other tmux server is touched.
"""

from __future__ import annotations

import base64
import io
import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from pi_tui.testing.fake_server import FakeServer
from tests.xvfb import private_x_display

MISSING = [tool for tool in ("tmux", "Xvfb", "xclip") if shutil.which(tool) is None]
pytestmark = [pytest.mark.tmux]
needs_x11_clipboard = pytest.mark.skipif(bool(MISSING), reason=f"{', '.join(MISSING)} not installed (.ci/run installs them)")

ANSWER = "A red rectangle, 120 by 80."
WAIT_SECONDS = 20.0


def _png(path: Path) -> bytes:
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (120, 80), (220, 20, 20)).save(buffer, format="PNG")
    path.write_bytes(buffer.getvalue())
    return buffer.getvalue()


@pytest.fixture
def x_display() -> Iterator[str]:
    """A private Xvfb server on a display it chose as free."""
    if MISSING:
        pytest.skip(f"{', '.join(MISSING)} not installed (.ci/run installs them)")
    with private_x_display() as display:
        yield display


@pytest.fixture
def clipboard_png(x_display: str, tmp_path: Path) -> Iterator[bytes]:
    """``xclip -i`` owning the CLIPBOARD selection with a PNG (in the foreground: ``-quiet``)."""
    path = tmp_path / "shot.png"
    data = _png(path)
    env = {**os.environ, "DISPLAY": x_display}
    owner = subprocess.Popen(["xclip", "-quiet", "-selection", "clipboard", "-t", "image/png", "-i", str(path)],
                             env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + WAIT_SECONDS
        while True:
            targets = subprocess.run(["xclip", "-selection", "clipboard", "-t", "TARGETS", "-o"], env=env,
                                     capture_output=True, timeout=5, check=False).stdout
            if b"image/png" in targets:
                break
            if time.monotonic() > deadline or owner.poll() is not None:
                pytest.fail(f"xclip never owned the clipboard (TARGETS: {targets!r})")
            time.sleep(0.05)
        yield data
    finally:
        owner.kill()
        owner.wait(timeout=5)


def _tmux(socket: str, *args: str) -> str:
    return subprocess.run(["tmux", "-L", socket, *args], capture_output=True, text=True, timeout=10,
                          check=False).stdout


def _kill_server(socket: str) -> None:
    """End the test's tmux server and remove its socket file (tmux leaves it behind)."""
    _tmux(socket, "kill-server")
    folder = Path(os.environ.get("TMUX_TMPDIR") or "/tmp") / f"tmux-{os.getuid()}"
    (folder / socket).unlink(missing_ok=True)


def _wait_for(socket: str, name: str, text: str) -> str:
    deadline = time.monotonic() + WAIT_SECONDS
    screen = ""
    while time.monotonic() < deadline:
        screen = _tmux(socket, "capture-pane", "-p", "-t", name)
        if text in screen:
            return screen
        time.sleep(0.1)
    raise AssertionError(f"{text!r} did not appear on screen; last screen:\n{screen}")


@needs_x11_clipboard
def test_ctrl_v_pastes_the_x11_clipboard_png_and_the_provider_receives_it(
        tmp_path: Path, isolated_home: Path, agent_dir: Path, x_display: str, clipboard_png: bytes) -> None:
    project = tmp_path / "project"
    project.mkdir()
    with FakeServer([{"text": ANSWER}]) as server:
        (agent_dir / "models.json").write_text(json.dumps({"providers": {"fake": {
            "baseUrl": server.base_url, "api": "openai-completions", "apiKey": "test-key",
            "models": [{"id": "fake-model", "contextWindow": 8000, "input": ["text", "image"]}],
        }}}))
        socket, name = f"pi-tui-paste-{uuid.uuid4().hex[:8]}", "paste"
        command = (
            f"cd {project} && env -u WAYLAND_DISPLAY -u XDG_SESSION_TYPE DISPLAY={x_display} HOME={isolated_home} "
            f"PI_CODING_AGENT_DIR={agent_dir} {sys.executable} -m pi_tui --model fake/fake-model; "
            "echo PI_TUI_EXITED $?; sleep 30"
        )
        _tmux(socket, "new-session", "-d", "-s", name, "-x", "120", "-y", "40", command)
        try:
            _wait_for(socket, name, "Message · / commands")
            _tmux(socket, "send-keys", "-t", name, "C-v")
            screen = _wait_for(socket, name, "[image 1: png 120×80")
            assert "backspace at the start removes an image" in screen
            _tmux(socket, "send-keys", "-t", name, "-l", "what is in the picture?")
            _wait_for(socket, name, "what is in the picture?")
            _tmux(socket, "send-keys", "-t", name, "Enter")  # perhaps before the session loaded: sent once it is
            screen = _wait_for(socket, name, ANSWER)
            assert "[1 image]" in screen and "[image 1:" not in screen
            _tmux(socket, "send-keys", "-t", name, "C-c")
            _tmux(socket, "send-keys", "-t", name, "C-c")
            _wait_for(socket, name, "PI_TUI_EXITED 0")
        finally:
            _kill_server(socket)
        assert len(server.requests) == 1
        user = [m for m in server.requests[0]["messages"] if m["role"] == "user"][-1]
        parts = user["content"]
        assert {"type": "text", "text": "what is in the picture?"} in parts
        urls = [p["image_url"]["url"] for p in parts if p.get("type") == "image_url"]
        assert urls == ["data:image/png;base64," + base64.b64encode(clipboard_png).decode("ascii")]


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed (.ci/run installs it)")
def test_an_image_named_on_the_command_line_goes_with_the_first_message(
        tmp_path: Path, isolated_home: Path, agent_dir: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    data = _png(project / "shot.png")
    with FakeServer([{"text": ANSWER}]) as server:
        (agent_dir / "models.json").write_text(json.dumps({"providers": {"fake": {
            "baseUrl": server.base_url, "api": "openai-completions", "apiKey": "test-key",
            "models": [{"id": "fake-model", "contextWindow": 8000, "input": ["text", "image"]}],
        }}}))
        socket, name = f"pi-tui-atfile-{uuid.uuid4().hex[:8]}", "atfile"
        command = (
            f"cd {project} && HOME={isolated_home} PI_CODING_AGENT_DIR={agent_dir} {sys.executable} -m pi_tui "
            f"--model fake/fake-model @shot.png 'what is this?'; echo PI_TUI_EXITED $?; sleep 30"
        )
        _tmux(socket, "new-session", "-d", "-s", name, "-x", "120", "-y", "40", command)
        try:
            screen = _wait_for(socket, name, ANSWER)
            assert "[1 image]" in screen
            _tmux(socket, "send-keys", "-t", name, "C-c")
            _tmux(socket, "send-keys", "-t", name, "C-c")
            _wait_for(socket, name, "PI_TUI_EXITED 0")
        finally:
            _kill_server(socket)
        user = [m for m in server.requests[0]["messages"] if m["role"] == "user"][-1]
        texts = [p["text"] for p in user["content"] if p.get("type") == "text"]
        assert texts and texts[0].endswith("what is this?") and "shot.png" in texts[0]
        urls = [p["image_url"]["url"] for p in user["content"] if p.get("type") == "image_url"]
        assert urls == ["data:image/png;base64," + base64.b64encode(data).decode("ascii")]


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed (.ci/run installs it)")
def test_a_dragged_image_file_pasted_as_its_path_is_attached(tmp_path: Path, isolated_home: Path,
                                                             agent_dir: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    dropped = tmp_path / "Screen Shot.png"
    data = _png(dropped)
    with FakeServer([{"text": ANSWER}]) as server:
        (agent_dir / "models.json").write_text(json.dumps({"providers": {"fake": {
            "baseUrl": server.base_url, "api": "openai-completions", "apiKey": "test-key",
            "models": [{"id": "fake-model", "contextWindow": 8000, "input": ["text", "image"]}],
        }}}))
        socket, name = f"pi-tui-drop-{uuid.uuid4().hex[:8]}", "drop"
        command = (f"cd {project} && HOME={isolated_home} PI_CODING_AGENT_DIR={agent_dir} {sys.executable} -m pi_tui "
                   "--model fake/fake-model; echo PI_TUI_EXITED $?; sleep 30")
        _tmux(socket, "new-session", "-d", "-s", name, "-x", "120", "-y", "40", command)
        try:
            _wait_for(socket, name, "Message · / commands")  # the first frame
            # What a terminal sends for a file dropped on it: the shell-quoted path, as a bracketed paste.
            _tmux(socket, "set-buffer", "-b", "drop", f"'{dropped}'")
            _tmux(socket, "paste-buffer", "-p", "-d", "-b", "drop", "-t", name)
            _wait_for(socket, name, "[image 1: png 120×80")
            _tmux(socket, "send-keys", "-t", name, "-l", "and this?")
            _wait_for(socket, name, "and this?")
            _tmux(socket, "send-keys", "-t", name, "Enter")
            screen = _wait_for(socket, name, ANSWER)
            assert "Screen Shot.png" not in screen  # attached, not typed
            _tmux(socket, "send-keys", "-t", name, "C-c")
            _tmux(socket, "send-keys", "-t", name, "C-c")
            _wait_for(socket, name, "PI_TUI_EXITED 0")
        finally:
            _kill_server(socket)
        user = [m for m in server.requests[0]["messages"] if m["role"] == "user"][-1]
        assert {"type": "text", "text": "and this?"} in user["content"]
        urls = [p["image_url"]["url"] for p in user["content"] if p.get("type") == "image_url"]
        assert urls == ["data:image/png;base64," + base64.b64encode(data).decode("ascii")]
