"""RPC commands that run things: prompts and queues, abort, compaction, ``bash``, and replacing
the session: new, switch, fork, clone (pi-behaviour.md §9.4, §13.9).

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
    field_bool,
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
        await ctx.session.prompt(text, images=images, streaming_behavior=behaviour, source="rpc")
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
    """Run a command for the user, exactly like ``!cmd``: ``AgentSession.run_user_bash`` (the
    extension ``user_bash`` event, the full output beside the session file, and the
    ``bashExecution`` message recorded at once when idle or, during a run, before the next
    prompt so a tool call and its result stay adjacent). ``abort_bash`` stops it through
    ``AgentSession.abort_user_bash``; the result then says ``cancelled`` and keeps the output
    so far."""
    text = field_str(command, "command") or ""
    if ctx.bash_running:
        raise RpcCommandError("bash: a command is already running (send abort_bash first)")
    ctx.bash_running = True
    try:
        message = await ctx.session.run_user_bash(text)
    finally:
        ctx.bash_running = False
    data: dict[str, Any] = {"output": message["output"]}
    if message.get("exitCode") is not None:
        data["exitCode"] = message["exitCode"]
    data.update({"cancelled": message["cancelled"], "truncated": message["truncated"]})
    if message.get("fullOutputPath"):
        data["fullOutputPath"] = message["fullOutputPath"]
    return data


async def abort_bash(ctx: RpcContext, command: dict[str, Any]) -> Any:
    if ctx.bash_running:
        ctx.session.abort_user_bash()
    return None


# --------------------------------------------------------------------------- session replacement


async def new_session(ctx: RpcContext, command: dict[str, Any]) -> Any:
    """``parentSession`` (any string, as pi takes it) becomes the new header's parent; without
    it the replaced session's file is the parent. ``cancelled``: an extension's
    ``session_before_switch`` refused."""
    parent = field_str(command, "parentSession", optional=True)
    started = await ctx.session.new_session(parent_session=parent)
    return {"cancelled": not started}


async def switch_session(ctx: RpcContext, command: dict[str, Any]) -> Any:
    path = _existing_session_file(field_str(command, "sessionPath") or "")
    switched = await ctx.session.switch_session(path)
    return {"cancelled": not switched}


async def fork(ctx: RpcContext, command: dict[str, Any]) -> Any:
    entry_id = field_str(command, "entryId") or ""
    entry = ctx.session.session_manager.get_entry(entry_id)
    message = entry.get("message") if entry is not None and entry.get("type") == "message" else None
    if not isinstance(message, dict) or message.get("role") != "user":
        raise RpcCommandError("Invalid entry ID for forking")  # pi's text
    restore = command.get("restoreFiles") is not None and field_bool(command, "restoreFiles")
    try:
        text = await ctx.session.fork(entry_id, restore_files=True) if restore else await ctx.session.fork(entry_id)
    except PiError as err:
        raise RpcCommandError(str(err)) from err
    if text is None and ctx.session.replacement_cancelled:  # session_before_fork refused
        return {"text": "", "cancelled": True}
    answer: dict[str, Any] = {"text": text or "", "cancelled": False}
    if restore:
        answer["files"] = ctx.session.last_restore
    return answer


async def clone(ctx: RpcContext, command: dict[str, Any]) -> Any:
    """``clone``: the current branch (root to leaf) copied into a new session, which becomes the
    current one, as pi's ``fork(leaf, {position: "at"})``. ``cancelled``: an extension's
    ``session_before_fork`` refused."""
    leaf = ctx.session.session_manager.leaf_id
    if leaf is None:
        raise RpcCommandError("Cannot clone session: no current entry selected")  # pi's text
    await ctx.session.fork(leaf, "at")
    return {"cancelled": ctx.session.replacement_cancelled}


def _existing_session_file(value: str) -> Path:
    path = Path(value).expanduser()
    if not path.is_file():
        raise RpcCommandError(f"Session file not found: {path}")
    return path
