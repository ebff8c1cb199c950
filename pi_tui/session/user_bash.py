"""``!cmd`` / ``!!cmd`` for the session (pi-behaviour.md §1.7, §10.2 ``user_bash``).

The command runs through ``tools.user_bash`` (or an extension's ``{result}`` replacement). The
``bashExecution`` message is announced at once; while a run is streaming it is held back and
recorded (history + file) only before the next prompt, so a tool call and its result stay
adjacent in the history.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pi_tui.core.messages import AgentMessage, BashExecutionMessage
from pi_tui.session.live_state import LiveState

if TYPE_CHECKING:  # not imported at run time: a session without extensions never loads them (start-up)
    from pi_tui.extensions.runner import ExtensionRunner


class UserBash:
    def __init__(
        self, state: LiveState, *, extensions: ExtensionRunner | None, emit: Callable[[dict[str, Any]], None],
        is_streaming: Callable[[], bool], record: Callable[[AgentMessage], None],
    ) -> None:
        self._state = state
        self._extensions = extensions
        self._emit = emit
        self._is_streaming = is_streaming
        self._record = record
        """Into the agent's history and the session file."""
        self._pending: list[AgentMessage] = []
        self._abort = asyncio.Event()

    async def run(self, command: str, *, exclude_from_context: bool = False) -> BashExecutionMessage:
        message = await self._execute(command, exclude_from_context)
        message["output"] = self._state.redactor.redact(message["output"])  # as every tool's output
        self._emit({"type": "message_start", "message": message})
        self._emit({"type": "message_end", "message": message})
        if self._is_streaming():
            self._pending.append(message)
        else:
            self._record(message)
        return message

    def abort(self) -> None:
        self._abort.set()

    def flush_pending(self) -> None:
        """Record the ``!cmd`` results held back during a run (called before a prompt)."""
        pending, self._pending = self._pending, []
        for message in pending:
            self._record(message)

    async def _execute(self, command: str, exclude: bool) -> BashExecutionMessage:
        # A fresh abort event before anything awaits, so an abort during the extension call counts.
        self._abort = asyncio.Event()
        executor = None
        extensions, state = self._extensions, self._state
        if extensions is not None and extensions.has_handlers("user_bash"):
            answer = await extensions.emit_user_bash(command, exclude, state.cwd)
            result = answer.get("result") if answer else None
            if isinstance(result, dict):
                return _from_result(command, result, exclude)
            if answer and answer.get("operations") is not None:
                executor = _executor_from(answer["operations"])
        from pi_tui.tools.user_bash import run_user_bash

        if self._abort.is_set():
            return _from_result(command, {"cancelled": True, "exitCode": None}, exclude)
        # Full outputs go beside the session file, so they survive a restart (in-memory: temp).
        return await run_user_bash(command, cwd=state.cwd, settings=state.settings,
                                   artifact_dir=state.saved_artifact_dir(), abort=self._abort,
                                   exclude_from_context=exclude, executor=executor,
                                   secret_values=state.redactor.values, sandbox=state.sandbox)


def _from_result(command: str, result: dict[str, Any], exclude: bool) -> BashExecutionMessage:
    from pi_tui.tools.user_bash import bash_execution_message

    code = result.get("exitCode")
    return bash_execution_message(
        command, output=str(result.get("output", "")),
        exit_code=code if isinstance(code, int) and not isinstance(code, bool) else None,
        cancelled=bool(result.get("cancelled", False)), truncated=bool(result.get("truncated", False)),
        full_output_path=str(result["fullOutputPath"]) if result.get("fullOutputPath") else None,
        exclude_from_context=exclude)


def _executor_from(operations: Any) -> Any:
    """An extension's ``operations`` (an object or dict with ``exec``) as a shell executor.

    ``exec(command, cwd, on_data=..., signal=...)`` may be sync or async; ``on_data`` takes
    text or bytes; the result is ``{"exitCode": n}`` or the number. A failure becomes the
    command's output with exit code 1 (the user sees it, nothing is raised)."""
    run = operations.get("exec") if isinstance(operations, dict) else getattr(operations, "exec", None)
    if not callable(run):
        return None

    async def execute(command: str, cwd: Path, on_output: Callable[[bytes], None], abort: asyncio.Event | None) -> int | None:
        def on_data(chunk: str | bytes) -> None:
            on_output(chunk.encode("utf-8") if isinstance(chunk, str) else bytes(chunk))

        try:
            outcome = run(command, str(cwd), on_data=on_data, signal=abort)
            if inspect.isawaitable(outcome):
                outcome = await outcome
        except Exception as err:
            on_data(f"{type(err).__name__}: {err}\n")
            return 1
        code = outcome.get("exitCode") if isinstance(outcome, dict) else outcome
        return code if isinstance(code, int) and not isinstance(code, bool) else None

    return execute
