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
import fnmatch
import os
import shutil
import signal
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pi_tui.core.deadline import cancel_and_wait, within
from pi_tui.core.errors import ToolError
from pi_tui.core.messages import JsonValue
from pi_tui.core.redact import is_secret_name
from pi_tui.core.tool import ShellSandbox, WrappedCommand
from pi_tui.tools.group_reaper import group_ended, group_started, start_reaper

_PIPE_SIZE_BYTES = 1 << 20
AFTER_EXIT_GRACE_SECONDS = 1.0
SPAWN_GRACE_SECONDS = 2.0
"""How long a call cancelled while its shell was starting waits for the start, to kill the group."""
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


def shell_env(settings: Mapping[str, Any] | None = None, *, secret_values: Collection[str] = (),
              base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment a command runs with: the process env (or ``base``) with ``<agentDir>/bin``
    first on PATH (where pi installs helper tools), without the secrets a command could print
    into the conversation: variables named like ``*_API_KEY``/``*_TOKEN``/``*_SECRET``
    (``core.redact.is_secret_name``) and any variable holding one of ``secret_values`` (the
    session's known keys). The ``shellEnvPassthrough`` setting (names or globs) keeps named ones."""
    passthrough = [p.upper() for p in (settings or {}).get("shellEnvPassthrough") or () if isinstance(p, str)]
    secrets = set(secret_values)
    env = {
        name: value
        for name, value in (os.environ if base is None else base).items()
        if any(fnmatch.fnmatchcase(name.upper(), p) for p in passthrough)
        or not (is_secret_name(name) or value in secrets)
    }
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


_RUNNING_GROUPS: set[int] = set()
"""Process groups of the shells running right now (``bash`` calls and ``!cmd``), for
``kill_running_process_groups``."""


def track_process_group(pgid: int) -> None:
    """A process group started elsewhere (an MCP server) that must die with pi-tui, as commands do."""
    _RUNNING_GROUPS.add(pgid)
    start_reaper()
    group_started(pgid)


def untrack_process_group(pgid: int) -> None:
    _RUNNING_GROUPS.discard(pgid)
    group_ended(pgid)


def kill_running_process_groups() -> int:
    """SIGKILL every running command's whole process group; returns how many there were.

    For the way out of the process (SIGTERM, SIGHUP, a terminal gone, an exception): the usual
    path, cancelling the tool's task, runs only while the event loop still runs. Safe from any
    thread and from a signal handler (no locks: a copy of a set and ``killpg``)."""
    groups = list(_RUNNING_GROUPS)
    for pgid in groups:
        kill_process_group(pgid)
    return len(groups)


@dataclass(slots=True)
class ShellOutcome:
    exit_code: int | None
    """The exit status; negative for a signal (as ``Popen.returncode``); None when killed by us."""
    timed_out: bool = False


class _ShellProtocol(asyncio.SubprocessProtocol):
    """Hands each chunk straight to ``on_output`` (no StreamReader buffer, one copy fewer) and
    reports exit and end-of-output separately: a background job can hold the pipe open long
    after the shell exited."""

    def __init__(self, on_output: Callable[[bytes], None], loop: asyncio.AbstractEventLoop) -> None:
        self._on_output = on_output
        self.exited: asyncio.Future[None] = loop.create_future()
        self.output_closed: asyncio.Future[None] = loop.create_future()
        self.failed: asyncio.Future[None] = loop.create_future()
        self.error: BaseException | None = None

    def pipe_data_received(self, fd: int, data: bytes | str) -> None:
        if self.error is not None:
            return
        try:
            self._on_output(data if isinstance(data, bytes) else data.encode())
        except Exception as error:  # surfaced by run_shell; the loop must not see it
            self.error = error
            self.failed.set_result(None)

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        if fd == 1 and not self.output_closed.done():
            self.output_closed.set_result(None)

    def process_exited(self) -> None:
        if not self.exited.done():
            self.exited.set_result(None)


async def run_shell(
    command: str,
    *,
    cwd: Path,
    settings: dict[str, JsonValue],
    on_output: Callable[[bytes], None],
    timeout_seconds: float | None = None,
    abort: asyncio.Event | None = None,
    secret_values: Collection[str] = (),
    sandbox: ShellSandbox | None = None,
    call_id: str | None = None,
) -> ShellOutcome:
    """Run ``command`` and feed every output chunk to ``on_output``, in arrival order.

    The command's environment is ``shell_env`` (no secrets, ``secret_values`` included).
    Timeout kills the group and reports ``timed_out``; ``abort`` being set kills it and returns
    ``exit_code=None``; cancellation of the calling task kills it and re-raises. An exception
    raised by ``on_output`` stops the command and is re-raised. With a ``sandbox`` the shell
    starts inside it (bwrap) unless it answers None for this ``call_id``.
    """
    _require_cwd(cwd)
    shell = resolve_shell(settings)
    start_reaper()
    loop = asyncio.get_running_loop()
    argv = [shell, "-c", with_prefix(command, settings)]
    wrapped = sandbox.wrap(argv, cwd, call_id) if sandbox is not None else None
    spawn = asyncio.ensure_future(loop.subprocess_exec(
        lambda: _ShellProtocol(on_output, loop),
        *(wrapped.argv if wrapped is not None else argv),
        cwd=cwd, env=shell_env(settings, secret_values=secret_values), stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
        start_new_session=True, pass_fds=wrapped.pass_fds if wrapped is not None else (),
    ))
    try:
        transport, protocol = await asyncio.shield(spawn)
    except asyncio.CancelledError:
        await _kill_once_started(spawn, wrapped)
        raise
    except OSError as error:
        if wrapped is not None:
            wrapped.finish()
        raise ToolError(f"Failed to start shell {shell}: {error.strerror or error} (command: {command})") from None
    finally:
        if wrapped is not None:
            if spawn.done() or spawn.cancelled():
                wrapped.close()
            else:  # cancelled while starting: close once the start is over
                spawn.add_done_callback(lambda _done: wrapped.close())
    pid = transport.get_pid()
    _RUNNING_GROUPS.add(pid)  # start_new_session: the shell's pid is its group id
    group_started(pid)  # killed even if pi-tui is (SIGKILL, OOM): tools/group_reaper.py
    _widen_pipe(transport)

    async def pump() -> None:
        # Output ends when the pipe closes; when the shell exits first (a job left running with
        # `&` holds the pipe), read on for a short grace, then stop waiting.
        await asyncio.wait(
            {protocol.exited, protocol.output_closed, protocol.failed}, return_when=asyncio.FIRST_COMPLETED
        )
        if protocol.failed.done():
            return
        if not protocol.output_closed.done():
            with contextlib.suppress(TimeoutError):
                await within(asyncio.shield(protocol.output_closed), AFTER_EXIT_GRACE_SECONDS)
        await protocol.exited

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
            await cancel_and_wait(pump_task, abort_task)
        return pump_task in done and not pump_task.cancelled()

    finished = False
    try:
        if timeout_seconds is not None and timeout_seconds > 0:
            try:
                finished = await within(pump_until_abort(), timeout_seconds)
            except TimeoutError:
                return ShellOutcome(None, timed_out=True)
        else:
            finished = await pump_until_abort()
        if protocol.error is not None:
            finished = False  # kill the command: its output can no longer be kept
            raise protocol.error
        return ShellOutcome(transport.get_returncode() if finished else None)
    finally:
        if not finished or transport.get_returncode() is None:
            kill_process_group(pid)
            with contextlib.suppress(BaseException):
                await within(asyncio.shield(protocol.exited), 5)
        # A job the command left running in the background (`server &`) outlives the call, as
        # in pi; only the groups of commands still running are killed on the way out.
        _RUNNING_GROUPS.discard(pid)
        group_ended(pid)
        transport.close()
        if wrapped is not None:  # the sandbox is gone: what it says afterwards ends the output
            notice = wrapped.finish()
            if notice:
                with contextlib.suppress(Exception):
                    on_output(f"\n{notice}\n".encode())


async def _kill_once_started(spawn: asyncio.Future[Any], wrapped: WrappedCommand | None = None) -> None:
    """Cancelled while the shell was starting: it already runs (and may have started commands
    of its own) before ``subprocess_exec`` returns, and asyncio, cancelled there, would kill the
    shell alone, orphaning its children. Kill the whole group as soon as the start completes.
    A sandboxed command's guard runs then too: what it planted in ``.git`` in that moment is
    moved aside like any other command's (``finish`` waits, bounded, for the sandbox to end)."""

    def kill(done: asyncio.Future[Any]) -> None:
        if not done.cancelled() and done.exception() is None:
            transport = done.result()[0]
            kill_process_group(transport.get_pid())
            transport.close()
        if wrapped is not None:
            wrapped.finish(output_gone=True)  # the call was cancelled: no output to add it to

    spawn.add_done_callback(kill)  # even if this task is cancelled again while it waits
    with contextlib.suppress(asyncio.CancelledError):
        await asyncio.wait({spawn}, timeout=SPAWN_GRACE_SECONDS)


def _widen_pipe(transport: asyncio.SubprocessTransport) -> None:
    """Ask Linux for a 1 MiB pipe: far fewer reads and wake-ups than the default 64 KiB when a
    command floods its output (best effort; other systems keep their default)."""
    set_size = getattr(fcntl, "F_SETPIPE_SZ", None)
    pipe_transport = transport.get_pipe_transport(1)
    pipe = pipe_transport.get_extra_info("pipe") if pipe_transport is not None else None
    if set_size is None or pipe is None:
        return
    with contextlib.suppress(OSError, ValueError):  # ValueError: a quick command's pipe already closed
        fcntl.fcntl(pipe.fileno(), set_size, _PIPE_SIZE_BYTES)


def _require_cwd(cwd: Path) -> None:
    if not os.path.isdir(cwd):
        raise ToolError(f"Working directory does not exist: {cwd}\nCannot execute bash commands.")
