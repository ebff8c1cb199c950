"""The ``!cmd`` executor (pi's bash-executor, pi-behaviour.md §4.3 last line, §8).

Same shell, process group and bounded output as the ``bash`` tool, but the output is for a
``bashExecution`` message: ANSI escapes and control characters are stripped and ``\\r`` removed
(the tool keeps them; the user's terminal view should not). Cancellation is cooperative through
``abort`` (the result then says ``cancelled``); cancelling the task kills the command and
re-raises.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from pathlib import Path
from typing import TypedDict

from pi_tui.core.messages import JsonValue
from pi_tui.tools.common import output_dir
from pi_tui.tools.output import OutputAccumulator
from pi_tui.tools.shell import run_shell
from pi_tui.tools.truncate import truncate_tail

_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


class UserBashResult(TypedDict):
    output: str
    exitCode: int | None
    cancelled: bool
    truncated: bool
    fullOutputPath: str | None


def sanitize_output(text: str) -> str:
    """Strip ANSI sequences and control characters (keep tab and newline), drop ``\\r``."""
    return _CONTROL.sub("", _ANSI.sub("", text).replace("\r", ""))


async def run_user_bash(
    command: str,
    *,
    cwd: Path,
    settings: dict[str, JsonValue] | None = None,
    artifact_dir: Path | None = None,
    abort: asyncio.Event | None = None,
    on_chunk: Callable[[str], None] | None = None,
) -> UserBashResult:
    """Run ``command`` for the user; ``on_chunk`` receives sanitized text as it arrives."""
    acc = OutputAccumulator(output_dir(artifact_dir))

    def on_output(chunk: bytes) -> None:
        acc.feed(chunk)
        if on_chunk is not None:
            on_chunk(sanitize_output(chunk.decode("utf-8", "replace")))

    try:
        outcome = await run_shell(command, cwd=cwd, settings=settings or {}, on_output=on_output, abort=abort)
    finally:
        acc.finish()
    truncation = truncate_tail(sanitize_output(acc.tail_text()))
    truncated = truncation.truncated or acc.over_limits
    cancelled = outcome.exit_code is None
    return {
        "output": truncation.content,
        "exitCode": None if cancelled else outcome.exit_code,
        "cancelled": cancelled,
        "truncated": truncated,
        "fullOutputPath": str(acc.full_output_path) if acc.full_output_path is not None else None,
    }
