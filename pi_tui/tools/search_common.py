"""Shared bits of grep, find and ls: locating rg/fd, and the byte-limited listing output."""

from __future__ import annotations

import asyncio
import contextlib
import shutil

from pi_tui.core.messages import JsonValue
from pi_tui.tools.shell import shell_env
from pi_tui.tools.truncate import DEFAULT_MAX_BYTES, UNLIMITED_LINES, format_size, truncate_head


def find_binary(name: str) -> str | None:
    """``name`` on PATH or in ``<agentDir>/bin`` (where pi keeps downloaded tools); never downloads."""
    return shutil.which(name, path=shell_env().get("PATH"))


def kill_quietly(process: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError):
        process.kill()


def finish_listing(lines: list[str]) -> tuple[str, list[str], JsonValue]:
    """Join lines, cut the text at 50 KB (whole lines; no line limit) and return
    (text, notices, truncation details or None)."""
    truncation = truncate_head("\n".join(lines), max_lines=UNLIMITED_LINES)
    if not truncation.truncated:
        return truncation.content, [], None
    return truncation.content, [f"{format_size(DEFAULT_MAX_BYTES)} limit reached"], truncation.as_details()
