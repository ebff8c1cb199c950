"""Shared bits of grep, find and ls: locating rg/fd, and the byte-limited listing output."""

from __future__ import annotations

import asyncio
import contextlib
import shutil

from pi_tui.core.messages import JsonValue
from pi_tui.core.tool import ToolResult
from pi_tui.tools.shell import shell_env
from pi_tui.tools.truncate import DEFAULT_MAX_BYTES, UNLIMITED_LINES, format_size, truncate_head


def find_binary(name: str) -> str | None:
    """``name`` on PATH or in ``<agentDir>/bin`` (where pi keeps downloaded tools); never downloads."""
    return shutil.which(name, path=shell_env().get("PATH"))


def kill_quietly(process: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError):
        process.kill()


def listing_result(
    lines: list[str],
    *,
    limit_notice: str | None = None,
    details: dict[str, JsonValue] | None = None,
    trailing_notices: tuple[str, ...] = (),
) -> ToolResult:
    """The shared output of grep/find/ls: lines joined and cut at 50 KB (whole lines, no line
    limit), then pi's notices in one bracket — the limit notice, the byte notice, the rest."""
    truncation = truncate_head("\n".join(lines), max_lines=UNLIMITED_LINES)
    notices = [limit_notice] if limit_notice else []
    details = dict(details or {})
    if truncation.truncated:
        notices.append(f"{format_size(DEFAULT_MAX_BYTES)} limit reached")
        details["truncation"] = truncation.as_details()
    notices.extend(trailing_notices)
    text = truncation.content + (f"\n\n[{'. '.join(notices)}]" if notices else "")
    return ToolResult(content=[{"type": "text", "text": text}], details=details or None)
