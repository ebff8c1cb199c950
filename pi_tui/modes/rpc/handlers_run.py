"""RPC commands that run things: prompts and queues, abort, compaction, ``bash``, and replacing
the session (pi-behaviour.md §9.4, §13.9).

``prompt`` answers after its **preflight** (§13.9): expansion, model and credential checks, the
pre-prompt compaction check and ``before_agent_start`` happen inside ``AgentSession.prompt``
before the agent starts, so the success response is written just before the run's
``agent_start`` event (recognised through ``CURRENT_PROMPT``: the agent loop runs in the
command's own task). A prompt that is queued (``streamingBehavior`` while a run is active) or
handled without a run (an extension command, an ``input`` handler) succeeds when ``prompt()``
returns. A failure before the run starts is the error response; a failure after it has started
is reported only by the run's own events (an assistant message with ``stopReason: "error"``).
"""

from __future__ import annotations

import asyncio
import sys
import traceback
from pathlib import Path
from typing import Any

from pi_tui.core.errors import PiError
from pi_tui.modes.rpc.context import (
    CURRENT_PROMPT,
    DEFERRED,
    PromptTicket,
    RpcCommandError,
    RpcContext,
    field_images,
    field_str,
)

STREAMING_BEHAVIOURS = ("steer", "followUp")


def answer_preflight(ctx: RpcContext, event: dict[str, Any]) -> None:
    """Called for every event before it is written: the first ``agent_start`` of a prompt's task
    means its preflight passed, so the success response goes out first."""
    if event.get("type") != "agent_start":
        return
    ticket = CURRENT_PROMPT.get()
    if ticket is not None and not ticket.answered:
        ticket.answered = True
        ctx.respond("prompt", ticket.request_id)


async def prompt(ctx: RpcContext, command: dict[str, Any]) -> Any:
    text = field_str(command, "message") or ""
    images = field_images(command)
    behaviour = command.get("streamingBehavior")
    if behaviour is not None and behaviour not in STREAMING_BEHAVIOURS:
        raise RpcCommandError(f'prompt: streamingBehavior must be "steer" or "followUp", not {behaviour!r}')
    if images and behaviour is not None and ctx.session.is_streaming:
        raise RpcCommandError(_QUEUED_IMAGES)
    ticket = PromptTicket(command.get("id"))
    CURRENT_PROMPT.set(ticket)  # this task's context only
    try:
        await ctx.session.prompt(text, images=images, streaming_behavior=behaviour)
    except Exception as err:
        if not isinstance(err, PiError):  # a bug, not a refusal: keep the trace for the log
            traceback.print_exc(file=sys.stderr)
        if not ticket.answered:
            ticket.answered = True
            ctx.fail("prompt", ticket.request_id, _message(err))
        else:  # after preflight pi sends nothing; the run's events carry the failure
            print(f"pi-tui: prompt failed after it started: {_message(err)}", file=sys.stderr)
        return DEFERRED
    if not ticket.answered:  # queued, or handled without a run
        ticket.answered = True
        ctx.respond("prompt", ticket.request_id)
    return DEFERRED


_QUEUED_IMAGES = ("Images cannot be queued: pi-tui's steering and follow-up queues carry text only. "
                  "Send the images once the agent is idle.")


def _message(err: BaseException) -> str:
    return str(err) or type(err).__name__


async def steer(ctx: RpcContext, command: dict[str, Any]) -> Any:
    text = field_str(command, "message") or ""
    if field_images(command):
        raise RpcCommandError(_QUEUED_IMAGES)
    ctx.session.steer(text)
    return None


async def follow_up(ctx: RpcContext, command: dict[str, Any]) -> Any:
    text = field_str(command, "message") or ""
    if field_images(command):
        raise RpcCommandError(_QUEUED_IMAGES)
    ctx.session.follow_up(text)
    return None


async def abort(ctx: RpcContext, command: dict[str, Any]) -> Any:
    await ctx.session.abort()
    return None


async def abort_retry(ctx: RpcContext, command: dict[str, Any]) -> Any:
    """Cancel a pending auto-retry wait. ``AgentSession`` has no separate call for this; while it
    waits between attempts no model call is running, so ``abort()`` ends exactly the wait."""
    if ctx.session.state.is_retrying:
        await ctx.session.abort()
    return None


async def compact(ctx: RpcContext, command: dict[str, Any]) -> Any:
    instructions = field_str(command, "customInstructions", optional=True)
    result = await ctx.session.compact(instructions)
    return result.to_json() if hasattr(result, "to_json") else result


# --------------------------------------------------------------------------- bash


async def bash(ctx: RpcContext, command: dict[str, Any]) -> Any:
    """Run a command for the user (``!cmd``) and record its ``bashExecution`` message.

    ``AgentSession.run_user_bash`` takes no abort handle, so this runs the same executor with
    one (``abort_bash`` sets it; the result then says ``cancelled`` and keeps the output so far)
    and records the message the way the session does.
    """
    from pi_tui.tools.user_bash import run_user_bash

    text = field_str(command, "command") or ""
    if ctx.bash_abort is not None:
        raise RpcCommandError("bash: a command is already running (send abort_bash first)")
    session = ctx.session
    stop = asyncio.Event()
    ctx.bash_abort = stop
    try:
        message = await run_user_bash(text, cwd=session.cwd, settings=session.settings,
                                      artifact_dir=session.session_manager.artifact_dir, abort=stop)
    finally:
        ctx.bash_abort = None
    session.emit({"type": "message_start", "message": message})
    session.messages.append(message)
    session.session_manager.append_message(message)
    session.emit({"type": "message_end", "message": message})
    data: dict[str, Any] = {"output": message["output"]}
    if message.get("exitCode") is not None:
        data["exitCode"] = message["exitCode"]
    data.update({"cancelled": message["cancelled"], "truncated": message["truncated"]})
    if message.get("fullOutputPath"):
        data["fullOutputPath"] = message["fullOutputPath"]
    return data


async def abort_bash(ctx: RpcContext, command: dict[str, Any]) -> Any:
    if ctx.bash_abort is not None:
        ctx.bash_abort.set()
    return None


# --------------------------------------------------------------------------- session replacement


async def new_session(ctx: RpcContext, command: dict[str, Any]) -> Any:
    """``parentSession`` is accepted but not used: ``AgentSession.new_session()`` always records
    the session it replaces as the parent."""
    field_str(command, "parentSession", optional=True)
    await ctx.session.new_session()
    return {"cancelled": False}


async def switch_session(ctx: RpcContext, command: dict[str, Any]) -> Any:
    await ctx.session.switch_session(_existing_session_file(field_str(command, "sessionPath") or ""))
    return {"cancelled": False}


async def fork(ctx: RpcContext, command: dict[str, Any]) -> Any:
    entry_id = field_str(command, "entryId") or ""
    entry = ctx.session.session_manager.get_entry(entry_id)
    message = entry.get("message") if entry is not None and entry.get("type") == "message" else None
    if not isinstance(message, dict) or message.get("role") != "user":
        raise RpcCommandError("Invalid entry ID for forking")  # pi's text
    text = await ctx.session.fork(entry_id)
    return {"text": text or "", "cancelled": False}


def _existing_session_file(value: str) -> Path:
    path = Path(value).expanduser()
    if not path.is_file():
        raise RpcCommandError(f"Session file not found: {path}")
    return path
