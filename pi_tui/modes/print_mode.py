"""``pi-tui -p "prompt" ["prompt 2" …]`` and ``--mode json`` (pi-behaviour.md §9.2, §9.3).

The prompts run one after another in one session. Text mode prints the text blocks of the last
assistant message to stdout; if that message ended in ``error`` or ``aborted`` its
``errorMessage`` (or ``Request <reason>``) goes to stderr and the exit code is 1. JSON mode
prints the session header line, then every session event as one JSON line
(``json_mode.py``). Diagnostics always go to stderr (JSON mode: also as ``notify`` warning
events after the header), and so do, in text mode, each automatic retry and a failed automatic
compaction (one line each); stdout carries only the answer.

Speed: a CLI run ends with flush + ``os._exit`` (after ``core/exit_cleanup``'s cleanups):
interpreter teardown after litellm was loaded costs about a second and buys nothing here.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys

from pi_tui.core.errors import PiError
from pi_tui.core.exit_cleanup import exit_now
from pi_tui.core.messages import assistant_text
from pi_tui.modes.shutdown import SignalShutdown, exit_status
from pi_tui.tools.shell import kill_running_process_groups

EXIT_FAILURE = 1


def run_print_mode(args: argparse.Namespace, *, hard_exit: bool | None = None) -> int:
    """Run and return the exit code (or end the process when ``hard_exit``; by default only
    outside tests)."""
    try:
        code = asyncio.run(_run_handling_signals(args))
    except KeyboardInterrupt:
        code = 130
    finally:
        kill_running_process_groups()  # however the run ended, no command it started runs on
    if hard_exit is None:
        hard_exit = "PYTEST_CURRENT_TEST" not in os.environ
    if hard_exit:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):  # a closed pipe (`pi-tui -p … | head -1`)
                pass
        exit_now(code)
    return code


async def _run_handling_signals(args: argparse.Namespace) -> int:
    """``_run`` with SIGTERM/SIGHUP/SIGINT handled (modes/shutdown.py): the run is aborted and
    recorded, the session shut down, and the status is 143/129/130."""
    shutdown = SignalShutdown()
    shutdown.install()
    try:
        code = await _run(args, shutdown)
    except asyncio.CancelledError:
        if shutdown.signum is None:
            raise
    finally:
        shutdown.remove()
    if shutdown.signum is None:
        return code
    print(f"pi-tui: {signal.Signals(shutdown.signum).name}: run aborted, session saved", file=sys.stderr)
    return exit_status(shutdown.signum)


async def _run(args: argparse.Namespace, shutdown: SignalShutdown | None = None) -> int:
    from pi_tui.modes.cli_session import initial_prompts, read_piped_stdin, session_from_args

    json_mode = getattr(args, "mode", None) == "json"
    try:
        prompts, images = initial_prompts(args, stdin_text=read_piped_stdin())
        if not prompts:
            print("pi-tui: no prompt given (pass it as an argument or on stdin)", file=sys.stderr)
            return EXIT_FAILURE
        session = session_from_args(args)
    except PiError as err:
        print(f"pi-tui: {err}", file=sys.stderr)
        return EXIT_FAILURE
    if json_mode:
        from pi_tui.modes.json_mode import attach_json_output

        attach_json_output(session, on_closed=None if shutdown is None else lambda: shutdown.trigger(signal.SIGPIPE))
        session.subscribe(say_denial)
    else:
        session.subscribe(say_on_stderr)
    if shutdown is not None:
        shutdown.on_signal = session.abort
    try:
        await session.start()  # session_start + resources_discover before the first prompt
        show_diagnostics(session, json_mode=json_mode)
        for index, text in enumerate(prompts):
            if shutdown is not None and shutdown.signum is not None:
                break  # a signal arrived: no further prompt starts
            await session.prompt(text, images=images if index == 0 else ())
    except PiError as err:
        print(f"pi-tui: {err}", file=sys.stderr)
        return EXIT_FAILURE
    finally:
        await _shutdown(session)
    return _report_last(session, print_text=not json_mode)


def show_diagnostics(session: object, *, json_mode: bool) -> None:
    """Start-up problems (settings, resources, models.json, the session file, extensions, project
    code skipped for want of trust), each naming its file, then what was loaded that the user
    should know about (``startup_info``), on stderr; in JSON mode also as ``notify`` warning events (stdout carries
    only events there)."""
    for _source, message in session.diagnostics():  # type: ignore[attr-defined]
        print(f"pi-tui: {message}", file=sys.stderr)
        if json_mode:
            session.emit({"type": "notify", "message": message, "level": "warning"})  # type: ignore[attr-defined]
    info = getattr(session, "startup_info", None)
    for message in info() if callable(info) else []:  # trusted project code, a project SYSTEM.md
        print(f"pi-tui: {message}", file=sys.stderr)
        if json_mode:
            session.emit({"type": "notify", "message": message, "level": "info"})  # type: ignore[attr-defined]


def say_denial(event: dict[str, object]) -> None:
    """A denied tool call, one line on stderr (print and JSON mode: nobody could be asked); and,
    once per run, bash running without a sandbox because a rule (or ``allowUnsandboxed``) allows it."""
    kind = event.get("type")
    if kind not in ("permission_denied", "permission_unsandboxed"):
        return
    from pi_tui.core.terminal_text import printable

    what = "permission denied" if kind == "permission_denied" else "no sandbox"
    line = f"{what} ({event.get('mode')} mode): {event.get('summary')}: {event.get('reason')}"
    print("pi-tui: " + printable(" ".join(line.split())), file=sys.stderr, flush=True)


def say_on_stderr(event: dict[str, object]) -> None:
    """Text mode: what happened on the way to the answer (JSON mode prints these as events),
    one line each on stderr, since stdout carries only the answer: each automatic retry, and an
    automatic compaction that failed. Notices (``/template``'s list, an extension's
    ``ctx.ui.notify``) are printed as they are, lines kept."""
    kind = event.get("type")
    if kind in ("permission_denied", "permission_unsandboxed"):
        say_denial(event)
        return
    if kind == "notify":
        print(event.get("message", ""), file=sys.stderr, flush=True)
        return
    if kind == "auto_retry_start":
        delay = float(event.get("delayMs") or 0) / 1000  # type: ignore[arg-type]
        line = (f"retrying in {delay:g} s (attempt {event.get('attempt')} of {event.get('maxAttempts')}) after: "
                f"{event.get('errorMessage') or 'an error'}")
    elif kind == "compaction_end" and event.get("errorMessage") and event.get("reason") != "manual":
        line = str(event["errorMessage"])
    else:
        return
    print("pi-tui: " + " ".join(line.split()), file=sys.stderr, flush=True)


def _report_last(session: object, *, print_text: bool) -> int:
    messages = session.messages  # type: ignore[attr-defined]
    last = messages[-1] if messages else None
    if last is None or last.get("role") != "assistant":
        return 0
    if last.get("stopReason") in ("error", "aborted"):
        print(last.get("errorMessage") or f"Request {last.get('stopReason')}", file=sys.stderr)
        return EXIT_FAILURE
    if print_text:
        text = assistant_text(last)
        sys.stdout.write(text + ("\n" if text and not text.endswith("\n") else ""))
    return 0


async def _shutdown(session: object) -> None:
    mcp = getattr(session, "mcp", None)
    if mcp is not None:
        await mcp.close()
    runner = getattr(session, "extensions", None)
    if runner is not None and runner.has_handlers("session_shutdown"):
        await runner.emit("session_shutdown", {"reason": "quit"})
    manager = getattr(session, "session_manager", None)
    if manager is not None:
        manager.close()
