"""Running a shell command in its own process group (shared by ``bash`` and ``!cmd``).

Why a process group: a command like ``make test`` starts children and grandchildren. Timeout or
abort must kill all of them, not only the shell, or they keep running (and keep the output pipe
open). The shell is started as a session leader (``setsid``), so its process-group id is its pid
and ``killpg`` reaches the whole tree that did not deliberately detach itself.

stdout and stderr share one pipe so the output keeps its arrival order, as in a terminal.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import shutil
import signal
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pi_tui.core.errors import ToolError
from pi_tui.core.messages import JsonValue

READ_CHUNK_BYTES = 1 << 20
_PIPE_BUFFER_LIMIT = 4 << 20
_PIPE_SIZE_BYTES = 1 << 20
AFTER_EXIT_GRACE_SECONDS = 1.0
_EXIT_POLL_SECONDS = 0.01
_AGENT_DIR_ENV = "PI_CODING_AGENT_DIR"


def resolve_shell(settings: dict[str, JsonValue]) -> str:
    """``shellPath`` setting, else /bin/bash, else bash on PATH, else sh."""
    custom = settings.get("shellPath")
    if isinstance(custom, str) and custom:
        if not os.path.exists(custom):
            raise ToolError(f"Custom shell path not found: {custom}")
        return custom
    if os.path.exists("/bin/bash"):
        return "/bin/bash"
    return shutil.which("bash") or "sh"


def _agent_bin_dir() -> str:
    # Same rule as resources.locations.agent_dir(); tools may not import resources (layering).
    env = os.environ.get(_AGENT_DIR_ENV)
    if env:
        base = str(Path.home()) + env[1:] if env.startswith("~/") or env == "~" else env
    else:
        base = str(Path.home() / ".pi" / "agent")
    return os.path.join(base, "bin")


def shell_env() -> dict[str, str]:
    """The process env with ``<agentDir>/bin`` first on PATH (where pi installs helper tools)."""
    env = dict(os.environ)
    bin_dir = _agent_bin_dir()
    parts = env.get("PATH", "").split(os.pathsep) if env.get("PATH") else []
    if bin_dir not in parts:
        env["PATH"] = os.pathsep.join([bin_dir, *parts])
    return env


def with_prefix(command: str, settings: dict[str, JsonValue]) -> str:
    prefix = settings.get("shellCommandPrefix")
    if isinstance(prefix, str) and prefix:
        return f"{prefix}\n{command}"
    return command


def kill_process_group(pid: int) -> None:
    """SIGKILL the whole group led by ``pid``; a group that is already gone is fine."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


@dataclass(slots=True)
class ShellOutcome:
    exit_code: int | None
    """The exit status; negative for a signal (as ``Popen.returncode``); None when killed by us."""
    timed_out: bool = False


async def run_shell(
    command: str,
    *,
    cwd: Path,
    settings: dict[str, JsonValue],
    on_output: Callable[[bytes], None],
    timeout_seconds: float | None = None,
    abort: asyncio.Event | None = None,
) -> ShellOutcome:
    """Run ``command`` and feed every output chunk to ``on_output``, in arrival order.

    Timeout kills the group and reports ``timed_out``; ``abort`` being set kills it and returns
    ``exit_code=None``; cancellation of the calling task kills it and re-raises.
    """
    _require_cwd(cwd)
    shell = resolve_shell(settings)
    try:
        process = await asyncio.create_subprocess_exec(
            shell, "-c", with_prefix(command, settings),
            cwd=cwd, env=shell_env(), stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
            start_new_session=True, limit=_PIPE_BUFFER_LIMIT,
        )
    except OSError as error:
        raise ToolError(f"Failed to start shell {shell}: {error.strerror or error} (command: {command})") from None
    stdout = process.stdout
    assert stdout is not None
    _widen_pipe(process)

    async def read_all() -> None:
        while chunk := await stdout.read(READ_CHUNK_BYTES):
            on_output(chunk)

    async def pump() -> None:
        # Output ends when the pipe closes, but a background job (`server &`) keeps it open
        # long after the shell exited: then read on for a short grace and stop waiting (the
        # job keeps running, as the user asked for with `&`).
        reader = asyncio.ensure_future(read_all())
        exited = asyncio.ensure_future(_exit_code(process))
        try:
            done, _ = await asyncio.wait({reader, exited}, return_when=asyncio.FIRST_COMPLETED)
            if reader not in done:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(asyncio.shield(reader), AFTER_EXIT_GRACE_SECONDS)
            await exited
        finally:
            for task in (reader, exited):
                if not task.done():
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await task
        if not reader.cancelled() and reader.exception() is not None:
            raise reader.exception()  # type: ignore[misc]

    async def pump_until_abort() -> bool:
        """True when finished, False when aborted first."""
        if abort is None:
            await pump()
            return True
        pump_task = asyncio.ensure_future(pump())
        abort_task = asyncio.ensure_future(abort.wait())
        try:
            done, _ = await asyncio.wait({pump_task, abort_task}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            abort_task.cancel()
            if not pump_task.done():
                pump_task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await pump_task
        if pump_task in done and not pump_task.cancelled():
            pump_task.result()
            return True
        return False

    finished = False
    try:
        if timeout_seconds is not None and timeout_seconds > 0:
            try:
                finished = await asyncio.wait_for(pump_until_abort(), timeout_seconds)
            except TimeoutError:
                await _reap(process)
                return ShellOutcome(None, timed_out=True)
        else:
            finished = await pump_until_abort()
        if not finished:
            await _reap(process)
            return ShellOutcome(None)
        return ShellOutcome(process.returncode)
    finally:
        if process.returncode is None or not finished:
            kill_process_group(process.pid)
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(_exit_code(process), 5)
        transport = getattr(process, "_transport", None)
        if transport is not None:
            transport.close()


def _widen_pipe(process: asyncio.subprocess.Process) -> None:
    """Ask Linux for a 1 MiB pipe: 16x fewer reads and wake-ups than the default 64 KiB when a
    command floods its output (best effort; other systems keep their default)."""
    set_size = getattr(fcntl, "F_SETPIPE_SZ", None)
    transport = getattr(process, "_transport", None)
    if set_size is None or transport is None:
        return
    pipe_transport = transport.get_pipe_transport(1)
    pipe = pipe_transport.get_extra_info("pipe") if pipe_transport is not None else None
    if pipe is None:
        return
    with contextlib.suppress(OSError):
        fcntl.fcntl(pipe.fileno(), set_size, _PIPE_SIZE_BYTES)


def _require_cwd(cwd: Path) -> None:
    if not os.path.isdir(cwd):
        raise ToolError(f"Working directory does not exist: {cwd}\nCannot execute bash commands.")


async def _exit_code(process: asyncio.subprocess.Process) -> int:
    """Wait for the process to exit. Unlike ``process.wait()`` (Python 3.11), this does not also
    wait for every holder of the output pipe to close it."""
    while process.returncode is None:  # noqa: ASYNC110 - 3.11 has no exit-only event to await
        await asyncio.sleep(_EXIT_POLL_SECONDS)
    return process.returncode


async def _reap(process: asyncio.subprocess.Process) -> None:
    kill_process_group(process.pid)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(_exit_code(process), 5)
