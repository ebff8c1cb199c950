"""The ``bash`` tool (pi-behaviour.md §4.3, §13.4).

The model sees the tail of the output (errors come last), at most 2,000 lines / 50 KB, with a
notice naming the full-output file. That file lives in the session's artifact folder, so the
path still works after a restart. A non-zero exit, a timeout and an abort are error results
carrying the output seen so far.

Abort is asyncio cancellation: the process group is killed, output not yet sent goes out as a
last update, and the cancellation propagates as ``ToolAborted`` carrying the call's result, the
formatted output + ``Command aborted`` (pi's text), which the loop records.
"""

from __future__ import annotations

import asyncio
import signal
import time
from typing import Literal

from pi_tui.core.errors import ToolError
from pi_tui.core.messages import JsonValue
from pi_tui.core.tool import ToolAborted, ToolContext, ToolResult
from pi_tui.tools.common import optional_number, output_dir, require_str
from pi_tui.tools.output import OutputAccumulator
from pi_tui.tools.shell import run_shell
from pi_tui.tools.truncate import DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, Truncation, format_size

UPDATE_INTERVAL_SECONDS = 0.1


def truncation_notice(truncation: Truncation, last_line_bytes: int, full_output_path: str) -> str:
    """pi's ``[Showing …]`` line for a tail-truncated output (empty when not truncated)."""
    if not truncation.truncated:
        return ""
    end_line = truncation.total_lines
    start_line = end_line - truncation.output_lines + 1
    if truncation.last_line_partial:
        return (
            f"\n\n[Showing last {format_size(truncation.output_bytes)} of line {end_line} "
            f"(line is {format_size(last_line_bytes)}). Full output: {full_output_path}]"
        )
    if truncation.truncated_by == "lines":
        return f"\n\n[Showing lines {start_line}-{end_line} of {truncation.total_lines}. Full output: {full_output_path}]"
    return (
        f"\n\n[Showing lines {start_line}-{end_line} of {truncation.total_lines} "
        f"({format_size(DEFAULT_MAX_BYTES)} limit). Full output: {full_output_path}]"
    )


def formatted_output(acc: OutputAccumulator) -> tuple[str, Truncation]:
    """The text the model sees (without a status line) and the truncation behind it."""
    truncation = acc.truncation()
    text = truncation.content
    if truncation.truncated:
        text += truncation_notice(truncation, acc.last_line_bytes, str(acc.full_output_path))
    return text, truncation


def _details(acc: OutputAccumulator, truncation: Truncation) -> JsonValue:
    details: dict[str, JsonValue] = {}
    if truncation.truncated:
        details["truncation"] = truncation.as_details()
    if acc.full_output_path is not None:
        details["fullOutputPath"] = str(acc.full_output_path)
    return details or None


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


BASH_PARAMETERS: dict[str, JsonValue] = {
    "type": "object",
    "properties": {
        "command": {"type": "string", "description": "The shell command line to run"},
        "timeout": {"type": "number", "description": "Seconds before the command is killed (no limit when omitted)"},
    },
    "required": ["command"],
}


ESCALATION_PARAMETERS: dict[str, JsonValue] = {
    "escalate": {"type": "boolean", "description": "Run outside the sandbox (the user is asked every time); "
                 "only when the sandbox blocked something the task needs"},
    "justification": {"type": "string", "description": "With escalate: why the command must leave the sandbox, "
                      "shown to the user"},
}

ESCALATING_BASH_PARAMETERS: dict[str, JsonValue] = {
    **BASH_PARAMETERS,
    "properties": {**BASH_PARAMETERS["properties"], **ESCALATION_PARAMETERS},
}


class BashTool:
    name = "bash"
    label = "bash"
    description = (
        "Run a shell command in the current working directory and return its combined stdout and "
        f"stderr. Only the last {DEFAULT_MAX_LINES} lines or {DEFAULT_MAX_BYTES // 1024}KB are "
        "returned (whichever is reached first); the complete output is then saved to a file whose "
        "path is given. Optionally pass a timeout in seconds."
    )
    parameters: dict[str, JsonValue] = BASH_PARAMETERS
    prompt_snippet: str | None = "Run shell commands (ls, rg, git, tests, builds …)"
    prompt_guidelines: tuple[str, ...] = ()
    execution_mode: Literal["parallel", "sequential"] = "parallel"

    async def execute(self, call_id: str, args: dict[str, JsonValue], ctx: ToolContext) -> ToolResult:
        command = require_str(args, "command", self.name)
        timeout = optional_number(args, "timeout", self.name)
        acc = OutputAccumulator(output_dir(ctx.artifact_dir), secrets=ctx.secret_values)
        last_update = 0.0
        unsent = False  # output arrived since the last update

        def send_update() -> None:
            nonlocal unsent
            if not unsent:  # as pi: never the same update twice
                return
            unsent = False
            truncation = acc.truncation()
            ctx.on_update(ToolResult(  # details {} rather than none, as pi's output updates
                content=[{"type": "text", "text": truncation.content}], details=_details(acc, truncation) or {}
            ))

        def on_output(chunk: bytes) -> None:
            nonlocal last_update, unsent
            acc.feed(chunk)
            unsent = True
            now = time.monotonic()
            if now - last_update >= UPDATE_INTERVAL_SECONDS:
                last_update = now
                send_update()

        ctx.on_update(ToolResult(content=[], details=None))
        try:
            outcome = await run_shell(
                command, cwd=ctx.cwd, settings=ctx.settings, on_output=on_output, timeout_seconds=timeout,
                secret_values=ctx.secret_values, sandbox=ctx.sandbox, call_id=call_id,
            )
        except asyncio.CancelledError:
            acc.finish()
            send_update()
            text, truncation = formatted_output(acc)
            status = f"{text}\n\nCommand aborted" if text else "Command aborted"
            raise ToolAborted(ToolResult(content=[{"type": "text", "text": status}],
                                         details=_details(acc, truncation) or {}, is_error=True)) from None
        except OSError as error:  # e.g. a full disk while saving the output
            raise ToolError(f"Could not save the output of `{command}`: {error}") from None
        finally:
            acc.finish()
        send_update()
        text, truncation = formatted_output(acc)
        if outcome.timed_out:
            status = f"Command timed out after {timeout:g} seconds"
            raise ToolError(f"{text}\n\n{status}" if text else status)
        shown = text or "(no output)"
        code = outcome.exit_code
        hint = ""
        if code is not None and code != 0 and ctx.sandbox is not None and text:
            hint = ctx.sandbox.explain(text, call_id)  # what the sandbox blocked, when its marks are there
        hint = f"\n{hint}" if hint else ""
        if code is not None and code > 0:
            raise ToolError(f"{shown}\n\nCommand exited with code {code}{hint}")
        if code is not None and code < 0:
            raise ToolError(f"{shown}\n\nCommand was killed by {_signal_name(-code)}{hint}")
        return ToolResult(content=[{"type": "text", "text": shown}], details=_details(acc, truncation))


class EscalatingBashTool(BashTool):
    """bash when it runs in a sandbox: the model may ask to leave it (``escalate`` + ``justification``)."""

    parameters: dict[str, JsonValue] = ESCALATING_BASH_PARAMETERS
    description = BashTool.description + (
        " Commands run in a sandbox: the project is writable, the rest of the system read-only, "
        "credentials hidden. If the sandbox blocks what the task needs, ask with escalate: true and a "
        "justification.")
