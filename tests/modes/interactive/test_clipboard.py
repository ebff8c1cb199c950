"""Copying as pi does: a real ``xclip`` on a real X server (Xvfb), OSC 52 when no tool works and
over SSH, and the two ways in — ctrl+c on the editor's selection and ``/copy``."""

from __future__ import annotations

import base64
import os
import shutil
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest

from pi_tui.modes.interactive.clipboard import (
    MAX_OSC52_CHARS,
    clipboard_tools,
    copy_text,
    osc52_sequence,
)
from pi_tui.modes.interactive.widgets.editor import PromptEditor
from tests.modes.interactive.conftest import ready, settle, wait_for
from tests.xvfb import MISSING_X, MISSING_X_REASON, private_x_display

SIZE = (100, 30)
needs_x = pytest.mark.skipif(bool(MISSING_X), reason=MISSING_X_REASON)


@pytest.fixture
def x_display() -> Iterator[str]:
    """A private X server (Xvfb) for the test; its display name (``:N``)."""
    with private_x_display() as display:
        yield display


def read_x_clipboard(display: str) -> str:
    return subprocess.run(["xclip", "-selection", "clipboard", "-o"], env={**os.environ, "DISPLAY": display},
                          capture_output=True, text=True, timeout=10, check=True).stdout


def local_env(display: str | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("DISPLAY", "WAYLAND_DISPLAY", "SSH_CONNECTION", "SSH_CLIENT", "MOSH_CONNECTION", "TERMUX_VERSION")}
    if display is not None:
        env["DISPLAY"] = display
    return env


def test_osc52_bytes_and_pis_size_limit():
    assert osc52_sequence("héllo ✓") == "\x1b]52;c;" + base64.b64encode("héllo ✓".encode()).decode() + "\x07"
    assert osc52_sequence("x" * (MAX_OSC52_CHARS // 4 * 3)) is not None
    assert osc52_sequence("x" * (MAX_OSC52_CHARS // 4 * 3 + 3)) is None


def test_the_tools_follow_the_session():
    env = {"PATH": os.environ.get("PATH", "")}
    assert clipboard_tools(env, "linux") == []  # no display: no X tool even when installed
    if shutil.which("xclip"):
        assert clipboard_tools({**env, "DISPLAY": ":0"}, "linux")[0] == ["xclip", "-selection", "clipboard"]


@needs_x
async def test_a_real_xclip_takes_the_text(x_display):
    written: list[str] = []
    text = "héllo ✓\nsecond line"
    assert await copy_text(text, written.append, local_env(x_display), platform="linux") == ["xclip"]
    assert read_x_clipboard(x_display) == text
    assert written == []  # a local tool worked: no OSC 52 (pi)


@needs_x
async def test_over_ssh_osc52_goes_out_too(x_display):
    written: list[str] = []
    env = {**local_env(x_display), "SSH_CONNECTION": "10.0.0.1 5000 10.0.0.2 22"}
    assert await copy_text("remote", written.append, env, platform="linux") == ["xclip", "osc52"]
    assert written == [osc52_sequence("remote")]


async def test_without_a_tool_the_terminal_gets_osc52(tmp_path):
    written: list[str] = []
    env = {**local_env(), "PATH": str(tmp_path)}
    assert await copy_text("only osc", written.append, env, platform="linux") == ["osc52"]
    assert written == [osc52_sequence("only osc")]
    too_long = "y" * MAX_OSC52_CHARS
    assert await copy_text(too_long, written.append, env, platform="linux") == []


async def test_a_failing_tool_falls_back_to_osc52(tmp_path):
    fake = tmp_path / "xclip"
    fake.write_text("#!/bin/sh\ncat >/dev/null\nexit 1\n")
    fake.chmod(0o755)
    written: list[str] = []
    env = {**local_env(":99"), "PATH": str(tmp_path)}
    assert await copy_text("fallback", written.append, env, platform="linux") == ["osc52"]


# ---------------------------------------------------------------------- in the app


def capture(app: Any) -> list[str]:
    written: list[str] = []
    original = app._driver.write

    def write(data: str) -> None:
        written.append(data)
        original(data)

    app._driver.write = write
    return written


def notices(app: Any) -> list[str]:
    from pi_tui.modes.interactive.widgets.chat_items import Notice

    return [str(n.text) for n in app.screen.query(Notice)]


@needs_x
async def test_ctrl_c_copies_the_editor_selection(make_app, x_display, monkeypatch):
    for name in ("WAYLAND_DISPLAY", "SSH_CONNECTION", "SSH_CLIENT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("DISPLAY", x_display)
    app, _session = make_app([])
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        editor = app.screen.query_one(PromptEditor)
        editor.insert("keep this text")
        await pilot.press("shift+home")  # select the line
        assert editor.selected_text == "keep this text"
        await pilot.press("ctrl+c")
        await wait_for(pilot, lambda: any("Copied the selection" in n for n in notices(app)))
        assert read_x_clipboard(x_display) == "keep this text"
        assert editor.text == "keep this text"  # copying does not clear
        assert any("(xclip)" in n for n in notices(app))
        await pilot.press("end")  # no selection: ctrl+c clears, as before
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert editor.text == ""


async def test_slash_copy_goes_through_osc52_without_a_tool(make_app, monkeypatch, tmp_path):
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    app, _session = make_app([{"text": "The answer: 42"}])
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        written = capture(app)
        editor = app.screen.query_one(PromptEditor)
        editor.insert("question")
        await pilot.press("enter")
        await settle(app, pilot)
        editor.insert("/copy")
        await pilot.press("enter")
        await wait_for(pilot, lambda: any("Copied the last answer" in n for n in notices(app)))
        assert osc52_sequence("The answer: 42") in written
        assert any("(the terminal (OSC 52))" in n for n in notices(app))
