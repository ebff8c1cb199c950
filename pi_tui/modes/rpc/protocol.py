"""The RPC command table and the dispatch of one input record (pi-behaviour.md §9.4).

A record that is not JSON, or not an object with a string ``type``, is answered with
``command: "parse"``; an unknown ``type`` with ``Unknown command: <type>``. Every other command
runs its handler; the handler's return value becomes ``data`` (see ``context.py``), a raised
error becomes ``error``. ``extension_ui_response`` is not a command: it answers an earlier
``extension_ui_request`` and gets no response of its own.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from pi_tui.modes.rpc import handlers_checkpoints as checkpoints
from pi_tui.modes.rpc import handlers_run as run
from pi_tui.modes.rpc import handlers_state as state
from pi_tui.modes.rpc.context import RpcContext, failure

Handler = Callable[[RpcContext, dict[str, Any]], Awaitable[Any]]

COMMANDS: dict[str, Handler] = {
    # prompting and runs
    "prompt": run.prompt,
    "steer": run.steer,
    "follow_up": run.follow_up,
    "abort": run.abort,
    "compact": run.compact,
    "abort_retry": run.abort_retry,
    "bash": run.bash,
    "abort_bash": run.abort_bash,
    # replacing the session
    "new_session": run.new_session,
    "switch_session": run.switch_session,
    "fork": run.fork,
    "clone": run.clone,
    # pi-tui's own: files follow the session tree (docs/checkpoints.md)
    "navigate_tree": checkpoints.navigate_tree,
    "get_checkpoints": checkpoints.get_checkpoints,
    "preview_restore": checkpoints.preview_restore,
    # state
    "get_state": state.get_state,
    "set_model": state.set_model,
    "cycle_model": state.cycle_model,
    "get_available_models": state.get_available_models,
    "set_thinking_level": state.set_thinking_level,
    "cycle_thinking_level": state.cycle_thinking_level,
    "set_steering_mode": state.set_steering_mode,
    "set_follow_up_mode": state.set_follow_up_mode,
    "set_auto_compaction": state.set_auto_compaction,
    "set_auto_retry": state.set_auto_retry,
    "set_session_name": state.set_session_name,
    # views
    "get_session_stats": state.get_session_stats,
    "get_fork_messages": state.get_fork_messages,
    "get_last_assistant_text": state.get_last_assistant_text,
    "get_messages": state.get_messages,
    "get_commands": state.get_commands,
    "export_html": state.export_html,
}

UI_RESPONSE = "extension_ui_response"


class ParsedCommand:
    """One input record, classified: a command to run, a UI response, or a frame to answer with."""

    __slots__ = ("command", "handler", "reply")

    def __init__(self, command: dict[str, Any] | None = None, handler: Handler | None = None,
                 reply: dict[str, Any] | None = None) -> None:
        self.command = command
        self.handler = handler
        self.reply = reply


def parse_record(record: str) -> ParsedCommand | None:
    """None for a blank record (skipped); otherwise what to do with it."""
    if not record.strip():
        return None
    try:
        command = json.loads(record)
    except json.JSONDecodeError as err:
        return ParsedCommand(reply=failure("parse", None, f"Failed to parse command: {err}"))
    except RecursionError:
        return ParsedCommand(reply=failure("parse", None, "Failed to parse command: nested too deeply"))
    if not isinstance(command, dict) or not isinstance(command.get("type"), str):
        request_id = command.get("id") if isinstance(command, dict) else None
        return ParsedCommand(reply=failure(
            "parse", request_id, 'Failed to parse command: expected a JSON object with a string "type"'))
    kind = command["type"]
    if kind == UI_RESPONSE:
        return ParsedCommand(command=command)
    handler = COMMANDS.get(kind)
    if handler is None:
        return ParsedCommand(reply=failure(kind, command.get("id"), f"Unknown command: {kind}"))
    return ParsedCommand(command=command, handler=handler)
