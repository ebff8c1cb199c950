"""The ``!cmd`` executor (pi's bash-executor, pi-behaviour.md §4.3 last line, §8).

Same shell, process group and bounded output as the ``bash`` tool, but the output is for a
``bashExecution`` message: ANSI escapes and control characters are stripped and ``\\r`` removed
(the tool keeps them; the user's terminal view should not). Cancellation is cooperative through
``abort`` (the result then says ``cancelled``); cancelling the task kills the command and
re-raises.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Collection
from pathlib import Path
from typing import Any, cast

from pi_tui.core.messages import BashExecutionMessage, JsonValue, now_ms
from pi_tui.core.terminal_text import printable
from pi_tui.core.tool import ShellSandbox
from pi_tui.tools.common import output_dir
from pi_tui.tools.output import OutputAccumulator
from pi_tui.tools.shell import run_shell
from pi_tui.tools.truncate import truncate_tail

ShellExecutor = Callable[[str, Path, Callable[[bytes], None], "asyncio.Event | None"], Awaitable["int | None"]]
"""``(command, cwd, on_output, abort) -> exit code``: a replacement for the local shell."""


async def run_user_bash(
    command: str,
    *,
    cwd: Path,
    settings: dict[str, JsonValue] | Any = None,
    artifact_dir: Path | None = None,
    abort: asyncio.Event | None = None,
    on_chunk: Callable[[str], None] | None = None,
    exclude_from_context: bool = False,
    executor: ShellExecutor | None = None,
    secret_values: Collection[str] = (),
    sandbox: ShellSandbox | None = None,
) -> BashExecutionMessage:
    """Run ``command`` for the user and return the ``bashExecution`` message (pi's fields:
    output, exitCode, cancelled, truncated, fullOutputPath when the output was saved).

    ``settings`` is the merged settings dict or anything with ``as_dict()`` (SettingsManager).
    ``on_chunk`` receives sanitized text as it arrives. ``executor`` replaces the local shell
    (an extension's ``user_bash`` ``operations``): it gets the command, the cwd, a byte sink and
    ``abort``, and returns the exit code; the output still goes through truncation and the
    full-output file. With an executor the result is ``cancelled`` when ``abort`` was set.
    The command's environment drops secrets as the ``bash`` tool's does (``shell.shell_env``:
    the user's own command, but its output goes into the conversation and the session file).
    """
    acc = OutputAccumulator(output_dir(artifact_dir), secrets=secret_values)
    settings_dict = _settings_dict(settings)

    def on_output(chunk: bytes) -> None:
        acc.feed(chunk)
        if on_chunk is not None:
            on_chunk(printable(chunk.decode("utf-8", "replace")))

    try:
        if executor is None:
            exit_code = (await run_shell(command, cwd=cwd, settings=settings_dict, on_output=on_output,
                                         abort=abort, secret_values=secret_values,
                                         sandbox=sandbox)).exit_code
            cancelled = exit_code is None
        else:
            exit_code = await executor(command, cwd, on_output, abort)
            cancelled = abort is not None and abort.is_set()
    finally:
        acc.finish()
    truncation = truncate_tail(printable(acc.tail_text()))
    truncated = truncation.truncated or acc.over_limits
    return bash_execution_message(
        command, output=truncation.content, exit_code=None if cancelled else exit_code, cancelled=cancelled,
        truncated=truncated, full_output_path=str(acc.full_output_path) if acc.full_output_path else None,
        exclude_from_context=exclude_from_context)


def bash_execution_message(command: str, *, output: str, exit_code: int | None, cancelled: bool, truncated: bool,
                           full_output_path: str | None = None,
                           exclude_from_context: bool = False) -> BashExecutionMessage:
    """The ``bashExecution`` message with pi's keys in pi's order (its ``recordBashResult``): a
    value pi leaves undefined is left out, so a cancelled command has no ``exitCode`` and the
    session line reads as pi's."""
    message: dict[str, Any] = {"role": "bashExecution", "command": command, "output": output}
    if exit_code is not None:
        message["exitCode"] = exit_code
    message.update({"cancelled": cancelled, "truncated": truncated})
    if full_output_path:
        message["fullOutputPath"] = full_output_path
    message["timestamp"] = now_ms()
    if exclude_from_context:
        message["excludeFromContext"] = True
    return cast(BashExecutionMessage, message)


def _settings_dict(settings: Any) -> dict[str, JsonValue]:
    if settings is None:
        return {}
    if isinstance(settings, dict):
        return settings
    as_dict = getattr(settings, "as_dict", None)
    return dict(as_dict()) if callable(as_dict) else {}
