"""An image in a real terminal: ``pi-tui`` in tmux against the fake OpenAI-compatible server runs
``read`` on a PNG, and the pane holds the half-block preview in the image's true colours."""

from __future__ import annotations

import json
import re
import shutil
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from pi_tui.testing.fake_server import FakeServer
from tests.reliability.pi_process import READY_TEXT, tmux, tmux_wait_for

pytestmark = [pytest.mark.tmux, pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")]


def test_a_png_read_by_the_model_is_drawn_in_true_colour(tmp_path: Path, isolated_home: Path, agent_dir: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    image = Image.new("RGB", (12, 4), (255, 0, 0))
    for y in (1, 3):  # red rows over blue rows: every cell is ▀ red on blue
        image.paste((0, 0, 255), (0, y, 12, y + 1))
    image.save(project / "flag.png")
    turns: list[dict[str, Any]] = [{"tool_calls": [{"id": "r1", "name": "read", "arguments": {"path": "flag.png"}}]},
             {"text": "A red and blue flag."}]
    with FakeServer(turns) as server:
        (agent_dir / "models.json").write_text(json.dumps({"providers": {"fake": {
            "baseUrl": server.base_url, "api": "openai-completions", "apiKey": "test-key",
            "models": [{"id": "fake-model", "contextWindow": 8000, "input": ["text", "image"]}],
        }}}))
        name = f"pi-tui-img-{uuid.uuid4().hex[:8]}"
        command = (
            f"cd {project} && HOME={isolated_home} PI_CODING_AGENT_DIR={agent_dir} COLORTERM=truecolor "
            f"{sys.executable} -m pi_tui --model fake/fake-model; echo PI_TUI_EXITED $?; sleep 30"
        )
        tmux("new-session", "-d", "-s", name, "-x", "120", "-y", "40", command)
        try:
            tmux_wait_for(name, READY_TEXT)
            tmux("send-keys", "-t", name, "-l", "what is in flag.png?")
            tmux("send-keys", "-t", name, "Enter")
            screen = tmux_wait_for(name, "A red and blue flag.")
            assert "[image image/png 12×4, " in screen
            assert "▀" * 12 in screen
            assert "[image image/png]" not in screen
            coloured = tmux("capture-pane", "-p", "-e", "-t", name)
            rows = [line for line in coloured.splitlines() if "▀" in line]
            assert len(rows) == 2
            row = rows[0]
            # The run of half blocks carries red as foreground and blue as background (24-bit).
            found = re.search(r"((?:\x1b\[[0-9;]*m)+)▀{12}", row)
            assert found is not None, repr(row)
            assert "38;2;255;0;0" in found.group(1) and "48;2;0;0;255" in found.group(1), repr(row)
            tmux("send-keys", "-t", name, "C-c")
            tmux("send-keys", "-t", name, "C-c")
            tmux_wait_for(name, "PI_TUI_EXITED 0", seconds=10)
        finally:
            tmux("kill-session", "-t", name)
