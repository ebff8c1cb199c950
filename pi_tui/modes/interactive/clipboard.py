"""Copying text to the clipboard as pi does (``/copy``, and ``tui.input.copy`` on a selection).

Order (pi's ``utils/clipboard``): a local clipboard tool first — ``pbcopy`` on macOS; on Linux
``termux-clipboard-set`` under Termux, ``wl-copy`` in a Wayland session, then ``xclip`` /
``xsel`` when ``$DISPLAY`` is set — because a terminal may cap or mangle a large OSC 52 payload.
OSC 52 (``ESC ]52;c;<base64> BEL``) is written when no tool worked, and also over SSH/mosh, where
the tool would fill the remote machine's clipboard rather than yours. An OSC 52 payload over
100,000 base64 characters is not sent (pi's limit). Each tool gets the text on stdin and
``TOOL_SECONDS`` to take it; it runs off the UI loop (asyncio subprocess).

No Textual here: the app hands in the writer for the terminal.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import logging
import shutil
import sys
from collections.abc import Callable, Mapping, Sequence

from pi_tui.core.deadline import within

MAX_OSC52_CHARS = 100_000
TOOL_SECONDS = 5.0

_log = logging.getLogger(__name__)


def osc52_sequence(text: str) -> str | None:
    """``ESC ]52;c;<base64 of the UTF-8 text> BEL``; None when it would be too long to send."""
    encoded = base64.b64encode(text.encode("utf-8", "surrogatepass")).decode("ascii")
    return None if len(encoded) > MAX_OSC52_CHARS else f"\x1b]52;c;{encoded}\x07"


def is_remote(env: Mapping[str, str]) -> bool:
    return bool(env.get("SSH_CONNECTION") or env.get("SSH_CLIENT") or env.get("MOSH_CONNECTION"))


def clipboard_tools(env: Mapping[str, str], platform: str = sys.platform) -> list[list[str]]:
    """The commands to try, in order, for this system (only those found on ``$PATH``)."""
    candidates: list[list[str]] = []
    if platform == "darwin":
        candidates.append(["pbcopy"])
    elif platform.startswith("linux") or platform.startswith("freebsd"):
        if env.get("TERMUX_VERSION"):
            candidates.append(["termux-clipboard-set"])
        if env.get("WAYLAND_DISPLAY"):
            candidates.append(["wl-copy"])
        if env.get("DISPLAY"):
            candidates += [["xclip", "-selection", "clipboard"], ["xsel", "--clipboard", "--input"]]
    path = env.get("PATH")
    return [c for c in candidates if shutil.which(c[0], path=path) is not None]


async def run_tool(command: Sequence[str], text: str, env: Mapping[str, str], *, seconds: float = TOOL_SECONDS) -> bool:
    """Give ``text`` to one clipboard tool on stdin; True when it exited with 0 in time. (xclip
    and wl-copy stay behind, detached, to serve the selection: only their first process is
    waited for.)"""
    try:
        process = await asyncio.create_subprocess_exec(
            *command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL, env=dict(env), start_new_session=True)
    except OSError as err:
        _log.info("clipboard tool %s could not start: %s", command[0], err)
        return False
    try:
        await within(process.communicate(text.encode("utf-8", "surrogatepass")), seconds)
    except (TimeoutError, asyncio.CancelledError):
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        _log.info("clipboard tool %s took longer than %.0f s", command[0], seconds)
        return False
    except (BrokenPipeError, ConnectionResetError):
        return False
    return process.returncode == 0


async def copy_text(text: str, write: Callable[[str], None], env: Mapping[str, str], *,
                    platform: str = sys.platform) -> list[str]:
    """Copy ``text``; returns how it went out (``["xclip"]``, ``["osc52"]``, both over SSH, or
    ``[]`` when nothing could take it)."""
    used: list[str] = []
    for command in clipboard_tools(env, platform):
        if await run_tool(command, text, env):
            used.append(command[0])
            break
    if not used or is_remote(env):
        sequence = osc52_sequence(text)
        if sequence is not None:
            try:
                write(sequence)
                used.append("osc52")
            except Exception as err:  # no terminal to write to
                _log.info("OSC 52 not written: %s", err)
    return used
