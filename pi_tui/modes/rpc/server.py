"""``pi-tui --mode rpc``: JSON commands on stdin, responses and events on stdout
(pi-behaviour.md §9.4, §13.9; client guide: docs/rpc.md).

* Framing is strict JSONL (``framing.py``). stdout carries only frames: while RPC mode runs,
  fd 1 and ``sys.stdout`` point at stderr and frames use a private copy of the real stdout
  (``modes/protocol_stdout.py``), so nothing printed or started by any part corrupts the stream.
* Every command runs in its own task, as pi handles each line without waiting for the previous
  one: ``abort`` or ``steer`` is handled while a ``prompt`` or ``compact`` is still running.
  Quick commands answer in the order they arrived.
* Every session event is written as it happens, unchanged, except ``notify``, which becomes an
  ``extension_ui_request`` (``ui.py``). Extensions' ``ctx.ui`` dialogs and statuses are
  ``extension_ui_request`` frames too; the client's ``extension_ui_response`` lines answer them. Extension errors are session events already
  (``{type:"extension_error", extensionPath, event, error}``); those reported while extensions
  loaded, before the server started, are written first.
* Before the first command the session is started (``AgentSession.start()``: extensions get
  ``session_start`` and ``resources_discover`` once), then its start-up problems
  (``diagnostics()``: settings, resources, models.json, the session file, model restore notes)
  go to stderr and, as ``notify`` warnings, to the client. Extension load failures among them
  are not repeated as notices: the client already has them as ``extension_error`` frames.
* At end of input the server finishes the commands in flight (a running prompt runs to its end;
  an extension dialog still waiting is answered "cancelled", as no answer can come any more),
  then shuts the session down and exits 0.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
import threading
import traceback
from collections.abc import AsyncIterable, AsyncIterator, Callable
from typing import IO, TYPE_CHECKING, Any

from pi_tui.core.errors import PiError
from pi_tui.modes.protocol_stdout import serve_protocol
from pi_tui.modes.rpc.context import DEFERRED, RpcContext, failure, success
from pi_tui.modes.rpc.framing import LineSplitter, encode_frame
from pi_tui.modes.rpc.handlers_run import answer_preflight
from pi_tui.modes.rpc.protocol import ParsedCommand, parse_record
from pi_tui.modes.rpc.ui import RpcExtensionUI, UiBridge
from pi_tui.modes.shutdown import SignalShutdown

if TYPE_CHECKING:
    from pi_tui.session.agent_session import AgentSession

EXIT_FAILURE = 1
READ_SIZE = 65536
PI_TUI_ONLY_EVENTS = frozenset({"model_changed", "checkpoint"})
"""Session events pi-tui's own UI needs where pi has none. ``model_changed`` would add a frame to
``set_model``/``cycle_model``, whose responses already carry the model; ``checkpoint`` (a file
snapshot or restore) would add frames pi's clients never see — ``get_checkpoints`` and the
``files`` of ``navigate_tree``/``fork`` answer it instead."""


def _is_user_bash_message(event: dict[str, Any]) -> bool:
    """The ``message_start``/``message_end`` pi-tui's session announces a ``bashExecution`` with
    (its TUI shows the output from them). pi sends none: the ``bash`` response carries the
    result, and ``get_messages`` has the message once recorded."""
    message = event.get("message")
    return (event.get("type") in ("message_start", "message_end") and isinstance(message, dict)
            and message.get("role") == "bashExecution")


class FrameWriter:
    """Writes frames to a binary stream, one flushed line each. A closed pipe (the client went
    away) makes later writes no-ops instead of errors in the middle of a run."""

    def __init__(self, stream: IO[bytes]) -> None:
        self._stream = stream
        self.closed = False
        self.on_closed: Callable[[], None] | None = None
        """Runs once when the client stops reading for good (serving then ends: SIGPIPE)."""

    def __call__(self, frame: dict[str, Any]) -> None:
        if self.closed:
            return
        try:
            self._stream.write(encode_frame(frame))
            self._stream.flush()
        except (BrokenPipeError, ValueError, OSError):
            self.closed = True
            if self.on_closed is not None:
                self.on_closed()


class RpcServer:
    def __init__(self, session: AgentSession, write: Callable[[dict[str, Any]], None], *,
                 scoped_models: list[Any] | None = None) -> None:
        self.session = session
        self.write = write
        self.ui = UiBridge(write)
        session.set_extension_ui(RpcExtensionUI(self.ui, write))  # ctx.ui dialogs become requests
        self.context = RpcContext(session=session, write=write, scoped_models=list(scoped_models or []))
        self._tasks: set[asyncio.Task[None]] = set()
        self._started = False
        self._unsubscribe = session.subscribe(self._on_event)
        runner = session.extensions
        for error in list(getattr(runner, "errors", None) or []):
            write(dict(error))

    # ------------------------------------------------------------------ events

    def _on_event(self, event: dict[str, Any]) -> None:
        answer_preflight(self.context, event)
        kind = event.get("type")
        if kind == "notify":
            self.write(self.ui.notify_request(event))
            return
        if kind in PI_TUI_ONLY_EVENTS or _is_user_bash_message(event):
            return
        self.write(event)

    # ------------------------------------------------------------------ start-up

    async def start(self) -> None:
        """Start the session once and report its start-up problems (``serve`` calls it first)."""
        if self._started:
            return
        self._started = True
        try:
            await self.session.start()
        except PiError as err:  # keep serving: the commands may still work (and say what fails)
            self.session.add_diagnostic("session", f"start-up failed: {err}")
        except Exception as err:  # a bug: keep the trace for the log, tell the client
            traceback.print_exc(file=sys.stderr)
            self.session.add_diagnostic("session", f"start-up failed: {type(err).__name__}: {err}")
        for source, message in self.session.diagnostics():
            print(f"pi-tui: {message}", file=sys.stderr)
            if source != "extensions":  # already written as extension_error frames
                self.session.emit({"type": "notify", "message": message, "level": "warning"})
        for message in self.session.startup_info():  # trusted project code, a project SYSTEM.md
            print(f"pi-tui: {message}", file=sys.stderr)
            self.session.emit({"type": "notify", "message": message, "level": "info"})

    # ------------------------------------------------------------------ input

    async def serve(self, chunks: AsyncIterable[bytes]) -> None:
        """Start the session, handle every record of ``chunks`` (raw stdin bytes, split on LF),
        then wait for the commands still running."""
        await self.start()
        splitter = LineSplitter()
        async for chunk in chunks:
            for record in splitter.feed(chunk):
                self.handle_record(record)
        tail = splitter.finish()
        if tail is not None:
            self.handle_record(tail)
        await asyncio.sleep(0)  # let the last records' tasks run (an answer among them)
        self.ui.input_ended()  # a dialog still open now can never be answered
        await self.drain()

    def handle_record(self, record: str) -> None:
        """Start handling one record. Each gets a task, even a parse error's reply, so frames
        of quick commands leave in the order the records came in (tasks start FIFO)."""
        parsed = parse_record(record)
        if parsed is None:
            return
        task = asyncio.ensure_future(self._handle(parsed))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _handle(self, parsed: ParsedCommand) -> None:
        if parsed.reply is not None:
            self.write(parsed.reply)
            return
        command = parsed.command
        assert command is not None
        if parsed.handler is None:
            self.ui.resolve(command)
            return
        kind, request_id = command["type"], command.get("id")
        try:
            data = await parsed.handler(self.context, command)
        except PiError as err:
            self.write(failure(kind, request_id, str(err) or type(err).__name__))
            return
        except Exception as err:  # a bug: answer the client, keep the trace for the log
            traceback.print_exc(file=sys.stderr)
            self.write(failure(kind, request_id, f"{type(err).__name__}: {err}"))
            return
        if data is not DEFERRED:
            self.write(success(kind, request_id, data))

    async def drain(self) -> None:
        """Wait until no command is running and the session has settled (an extension command
        may have scheduled a run of its own that outlives the ``prompt`` command)."""
        while True:
            while self._tasks:
                await asyncio.gather(*list(self._tasks), return_exceptions=True)
            await asyncio.sleep(0)  # let just-scheduled work start
            if self.session.is_idle():
                return
            await asyncio.sleep(0.02)

    async def close(self) -> None:
        self.ui.cancel_all()
        self.session.set_extension_ui(None)  # nobody is left to answer
        self._unsubscribe()
        from pi_tui.session.mcp_tools import close_mcp

        await close_mcp(self.session)
        runner = self.session.extensions
        if runner is not None and runner.has_handlers("session_shutdown"):
            await runner.emit("session_shutdown", {"reason": "quit"})
        self.session.session_manager.close()


# --------------------------------------------------------------------------- process entry


async def stdin_chunks(stream: IO[bytes] | None) -> AsyncIterator[bytes]:
    """Raw chunks of ``stream``, read on a thread (works for pipes, files and terminals alike);
    no stream (stdin closed at start) is empty input."""
    if stream is None:
        return
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[bytes | None] = asyncio.Queue()

    def pump() -> None:
        try:
            while True:
                chunk = os.read(stream.fileno(), READ_SIZE)
                if not chunk:
                    break
                loop.call_soon_threadsafe(queue.put_nowait, chunk)
        except OSError:
            pass
        finally:
            loop.call_soon_threadsafe(queue.put_nowait, None)

    threading.Thread(target=pump, name="rpc-stdin", daemon=True).start()
    while (chunk := await queue.get()) is not None:
        yield chunk


def run_rpc_mode(args: argparse.Namespace, *, hard_exit: bool | None = None) -> int:
    """Serve stdin until it ends; returns the exit code (or ends the process, outside tests)."""
    return serve_protocol(lambda frames_out: _serve_process(args, FrameWriter(frames_out)), hard_exit=hard_exit)


RPC_PERMISSION_TIMEOUT_S = 300.0
"""A permission question (an ``extension_ui_request`` select) unanswered this long is a denial."""


async def _serve_process(args: argparse.Namespace, writer: FrameWriter) -> int:
    from pi_tui.modes.cli_session import session_from_args
    from pi_tui.modes.rpc.handlers_state import resolve_scoped_models

    files = [m for m in getattr(args, "messages", None) or [] if m.startswith("@")]
    if files:
        print(f"pi-tui: @file arguments are not allowed in RPC mode ({', '.join(files)}); "
              "send the content in a prompt command", file=sys.stderr)
        return EXIT_FAILURE
    if getattr(args, "messages", None):
        print("pi-tui: RPC mode ignores message arguments; send prompt commands on stdin", file=sys.stderr)
    try:
        from pi_tui.modes.cli_session import permission_options

        session = session_from_args(args, permissions=permission_options(
            args, ask=True, ask_timeout_s=RPC_PERMISSION_TIMEOUT_S, headless_reason="RPC: no answer"))
    except PiError as err:
        print(f"pi-tui: {err}", file=sys.stderr)
        return EXIT_FAILURE
    scoped = resolve_scoped_models(getattr(args, "models", None), session.model_registry)
    server = RpcServer(session, writer, scoped_models=scoped)
    # SIGTERM/SIGHUP/SIGINT: abort what runs (recorded), shut down, exit 143/129/130 as pi does.
    shutdown = SignalShutdown()
    shutdown.on_signal = session.abort
    shutdown.install()
    writer.on_closed = lambda: shutdown.trigger(signal.SIGPIPE)  # the client stopped reading for good
    try:
        await server.serve(stdin_chunks(sys.stdin.buffer if sys.stdin is not None else None))
    except asyncio.CancelledError:
        if shutdown.signum is None:
            raise
    finally:
        shutdown.remove()
        session.abort_user_bash()
        await server.close()
    return shutdown.exit_code or 0
