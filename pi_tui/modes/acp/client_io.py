"""The client's files and terminals, when it offers them (``clientCapabilities``).

* ``ClientFiles`` is the file tools' ``FileAccess`` (``core/tool.py``): ``fs/read_text_file`` and
  ``fs/write_text_file``, so reads and edits see and change the editor's buffers, unsaved changes
  included. A client offering only one of the two gets the disk for the other.
* ``ClientTerminalBash`` is the ``bash`` tool run in a client terminal (``terminal/create`` with
  the same shell, prefix and working folder as the local tool, and the secret variables the
  local tool drops set empty): the editor shows the live output
  in the tool call; the model gets the output formatted and truncated exactly as the local tool
  does (tail, 2,000 lines / 50 KB, full output saved beside the session), with the same exit,
  timeout and abort texts. Abort kills the command (``terminal/kill``), also when it lands while
  the editor is still starting it; the terminal is always released.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from pathlib import Path
from typing import Any, Literal

from pi_tui.core.deadline import within
from pi_tui.core.errors import ToolError
from pi_tui.core.messages import JsonValue
from pi_tui.core.regular_files import open_regular_for_write
from pi_tui.core.tool import ToolAborted, ToolContext, ToolResult
from pi_tui.modes.acp.jsonrpc import Peer, RpcError
from pi_tui.modes.acp.updates import EventMapper
from pi_tui.tools.bash import BashTool, formatted_output
from pi_tui.tools.common import optional_number, output_dir, require_str
from pi_tui.tools.output import OutputAccumulator
from pi_tui.tools.shell import resolve_shell, shell_env, with_prefix

OUTPUT_BYTE_LIMIT = 4 * 1024 * 1024
"""What the client keeps of a command's output (its tail); the model sees at most 50 KB of it."""
KILL_GRACE_SECONDS = 5.0
_RELEASING: set[asyncio.Future[Any]] = set()
"""``terminal/release`` requests in flight (a task nobody holds may be collected)."""


def _forget(task: asyncio.Future[Any]) -> None:
    _RELEASING.discard(task)
    if not task.cancelled():
        task.exception()  # retrieved: a failed release is the editor's to report


class ClientFiles:
    def __init__(self, peer: Peer, session_id: str, *, read: bool, write: bool) -> None:
        self.peer = peer
        self.session_id = session_id
        self.read = read
        self.write = write

    async def read_text(self, path: Path) -> str:
        if not self.read:
            return await asyncio.to_thread(path.read_text, encoding="utf-8")
        try:
            answer = await self.peer.request("fs/read_text_file", {"sessionId": self.session_id, "path": str(path)})
        except RpcError as err:
            raise OSError(_client_failure("read", path, err)) from None
        content = answer.get("content") if isinstance(answer, dict) else None
        if not isinstance(content, str):
            raise OSError(f"The editor answered fs/read_text_file for {path} without text content")
        return content

    async def write_text(self, path: Path, content: str) -> None:
        if not self.write:
            await asyncio.to_thread(_write_disk, path, content)
            return
        try:
            await self.peer.request("fs/write_text_file", {"sessionId": self.session_id, "path": str(path),
                                                           "content": content})
        except RpcError as err:
            raise OSError(_client_failure("write", path, err)) from None


def _client_failure(verb: str, path: Path, err: RpcError) -> str:
    details = err.data.get("details") if isinstance(err.data, dict) else None
    return f"The editor could not {verb} {path}: {err.message}" + (f" ({details})" if details else "")


def _write_disk(path: Path, content: str) -> None:
    with open_regular_for_write(path) as fh:
        fh.write(content.encode("utf-8", "surrogatepass"))


class ClientTerminalBash:
    """``bash`` in a client terminal (``Tool`` protocol, same name, schema and prompt text)."""

    name = "bash"
    label = "bash"
    description = BashTool.description
    parameters: dict[str, JsonValue] = BashTool.parameters
    prompt_snippet: str | None = BashTool.prompt_snippet
    prompt_guidelines: tuple[str, ...] = BashTool.prompt_guidelines
    execution_mode: Literal["parallel", "sequential"] = "parallel"

    def __init__(self, peer: Peer, session_id: str, mapper: EventMapper) -> None:
        self.peer = peer
        self.session_id = session_id
        self.mapper = mapper

    def _params(self, terminal_id: str) -> dict[str, Any]:
        return {"sessionId": self.session_id, "terminalId": terminal_id}

    async def execute(self, call_id: str, args: dict[str, JsonValue], ctx: ToolContext) -> ToolResult:
        command = require_str(args, "command", self.name)
        timeout = optional_number(args, "timeout", self.name)
        shell = resolve_shell(ctx.settings)
        create = asyncio.ensure_future(self.peer.request("terminal/create", {
            "sessionId": self.session_id, "command": shell, "args": ["-c", with_prefix(command, ctx.settings)],
            "cwd": str(ctx.cwd), "env": _blanked_secrets(ctx), "outputByteLimit": OUTPUT_BYTE_LIMIT}))
        try:
            created = await asyncio.shield(create)
        except asyncio.CancelledError:
            await self._stop_once_created(create)
            raise ToolAborted(ToolResult(content=[{"type": "text", "text": "Command aborted"}], details={},
                                         is_error=True)) from None
        except RpcError as err:
            raise ToolError(f"The editor could not start a terminal for `{command}`: {err.message}") from None
        terminal_id = str(created.get("terminalId")) if isinstance(created, dict) else ""
        if not terminal_id:
            raise ToolError(f"The editor started no terminal for `{command}` (no terminalId)")
        state = self.mapper.calls.get(call_id)
        if state is not None:
            state.in_terminal = True
        self.mapper.send({"sessionUpdate": "tool_call_update", "toolCallId": call_id,
                          "content": [{"type": "terminal", "terminalId": terminal_id}]})
        try:
            return await self._run(terminal_id, command, timeout, ctx)
        finally:
            self._release(terminal_id)

    def _release(self, terminal_id: str) -> None:
        """``terminal/release``, not waited for: its answer carries nothing we need, and an
        editor that never sends it must hold neither a finished call nor a cancelled one (the
        abort's one cancellation is spent by then; nothing would end that wait). Bounded."""
        task = asyncio.ensure_future(within(self.peer.request("terminal/release", self._params(terminal_id)),
                                                      KILL_GRACE_SECONDS))
        _RELEASING.add(task)
        task.add_done_callback(_forget)

    async def _run(self, terminal_id: str, command: str, limit_s: float | None, ctx: ToolContext) -> ToolResult:
        timeout = limit_s
        waiting = self.peer.request("terminal/wait_for_exit", self._params(terminal_id))
        try:
            status = await within(waiting, timeout) if timeout else await waiting
        except TimeoutError:
            await self._kill(terminal_id)
            text = await self._output(terminal_id, ctx)
            message = f"Command timed out after {timeout:g} seconds"
            raise ToolError(f"{text}\n\n{message}" if text else message) from None
        except asyncio.CancelledError:
            await asyncio.shield(self._kill(terminal_id))
            text = await asyncio.shield(self._output(terminal_id, ctx))
            raise ToolAborted(ToolResult(content=[{"type": "text", "text": f"{text}\n\nCommand aborted" if text
                                                   else "Command aborted"}], details={}, is_error=True)) from None
        except RpcError as err:
            raise ToolError(f"The editor's terminal failed for `{command}`: {err.message}") from None
        text = await self._output(terminal_id, ctx) or "(no output)"
        code = status.get("exitCode") if isinstance(status, dict) else None
        killed_by = status.get("signal") if isinstance(status, dict) else None
        if isinstance(code, int) and code > 0:
            raise ToolError(f"{text}\n\nCommand exited with code {code}")
        if killed_by:
            raise ToolError(f"{text}\n\nCommand was killed by {_signal_name(str(killed_by))}")
        return ToolResult(content=[{"type": "text", "text": text}])

    async def _stop_once_created(self, create: asyncio.Future[Any]) -> None:
        """Cancelled while the editor was starting the terminal: the command may run already.
        Once the editor names the terminal, kill and release it (bounded: a silent editor)."""
        with contextlib.suppress(Exception, asyncio.CancelledError):
            created = await within(asyncio.shield(create), KILL_GRACE_SECONDS)
            terminal_id = created.get("terminalId") if isinstance(created, dict) else None
            if isinstance(terminal_id, str) and terminal_id:
                await self._kill(terminal_id)
                self._release(terminal_id)

    async def _kill(self, terminal_id: str) -> None:
        with contextlib.suppress(Exception):
            await within(self.peer.request("terminal/kill", self._params(terminal_id)), KILL_GRACE_SECONDS)

    async def _output(self, terminal_id: str, ctx: ToolContext) -> str:
        """The output the model sees, cut as the local tool cuts it."""
        try:
            answer = await within(self.peer.request("terminal/output", self._params(terminal_id)),
                                            KILL_GRACE_SECONDS)
        except (RpcError, TimeoutError) as err:
            return f"(the editor did not return the output: {err})"
        output = answer.get("output") if isinstance(answer, dict) else None
        acc = OutputAccumulator(output_dir(ctx.artifact_dir))
        try:
            acc.feed(str(output or "").encode("utf-8", "surrogatepass"))
        finally:
            acc.finish()
        text, _truncation = formatted_output(acc)
        if isinstance(answer, dict) and answer.get("truncated"):
            text = f"[Earlier output was dropped by the editor's terminal.]\n{text}"
        return text


def _blanked_secrets(ctx: ToolContext) -> list[dict[str, str]]:
    """The variables the local ``bash`` runs without (``shell_env``: secret-named ones and any
    holding a known key, ``shellEnvPassthrough`` kept), set empty for the editor's terminal. ACP
    can only set variables, and the editor was started from the environment pi-tui was, so
    these are the names that would carry keys into a command the model wrote."""
    kept = shell_env(ctx.settings, secret_values=ctx.secret_values)
    return [{"name": name, "value": ""} for name in sorted(os.environ) if name not in kept]


def _signal_name(value: str) -> str:
    if value.isdigit():
        with contextlib.suppress(ValueError):
            return signal.Signals(int(value)).name
    return value
