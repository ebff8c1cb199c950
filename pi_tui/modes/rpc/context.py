"""What every RPC command handler gets: the session, the frame writer, and the per-server state
(the running ``bash`` command, the prompt awaiting its preflight, scoped models).

Response shapes (pi-behaviour.md §9.4)::

    {"id"?: ..., "type": "response", "command": <type>, "success": true, "data"?: ...}
    {"id"?: ..., "type": "response", "command": <type>, "success": false, "error": "<text>"}

``id`` is echoed only when the command had one; ``data`` is present only when the command
returns something (``None`` from a handler means "no data", ``NULL_DATA`` means ``"data": null``).
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pi_tui.core.errors import PiError
from pi_tui.core.provider import ModelInfo

if TYPE_CHECKING:
    from pi_tui.session.agent_session import AgentSession

NULL_DATA: Any = object()
"""A handler's return value meaning ``"data": null`` (e.g. ``cycle_model`` with one model)."""
DEFERRED: Any = object()
"""A handler's return value meaning "I answer myself" (``prompt``: after its preflight)."""


class RpcCommandError(PiError):
    """A command failed in a way the client should read: the text becomes ``error``."""


def success(command: str, request_id: Any = None, data: Any = None) -> dict[str, Any]:
    frame: dict[str, Any] = {}
    if request_id is not None:
        frame["id"] = request_id
    frame.update({"type": "response", "command": command, "success": True})
    if data is NULL_DATA:
        frame["data"] = None
    elif data is not None:
        frame["data"] = data
    return frame


def failure(command: str, request_id: Any, error: str) -> dict[str, Any]:
    frame: dict[str, Any] = {}
    if request_id is not None:
        frame["id"] = request_id
    frame.update({"type": "response", "command": command, "success": False, "error": error})
    return frame


@dataclass(slots=True)
class PromptTicket:
    """One ``prompt`` command waiting for its preflight; answered exactly once."""

    request_id: Any
    answered: bool = False


CURRENT_PROMPT: contextvars.ContextVar[PromptTicket | None] = contextvars.ContextVar("rpc_prompt", default=None)
"""Set inside the task running a ``prompt`` command, so the ``agent_start`` of *that* run (the
agent loop runs in the same task) can be recognised as "preflight passed"."""


@dataclass(slots=True)
class RpcContext:
    session: AgentSession
    write: Callable[[dict[str, Any]], None]
    """Writes one frame to stdout (already serialized per line, flushed)."""
    scoped_models: list[tuple[ModelInfo, str | None]] = field(default_factory=list)
    """``--models``: the models ``cycle_model`` cycles through, each with its ``:thinking``."""
    bash_running: bool = False
    """A ``bash`` command is running (one at a time; ``abort_bash`` stops it)."""

    def respond(self, command: str, request_id: Any, data: Any = None) -> None:
        self.write(success(command, request_id, data))

    def fail(self, command: str, request_id: Any, error: str) -> None:
        self.write(failure(command, request_id, error))


# --------------------------------------------------------------------------- field access


def field_str(command: dict[str, Any], name: str, *, optional: bool = False) -> str | None:
    """A string field, or a clear ``RpcCommandError`` naming the command and field."""
    value = command.get(name)
    if value is None and optional:
        return None
    if not isinstance(value, str):
        problem = "is missing" if value is None else f"must be a string, not {type(value).__name__}"
        raise RpcCommandError(f'{command.get("type")}: field "{name}" {problem}')
    return value


def field_bool(command: dict[str, Any], name: str) -> bool:
    value = command.get(name)
    if not isinstance(value, bool):
        problem = "is missing" if value is None else f"must be true or false, not {value!r}"
        raise RpcCommandError(f'{command.get("type")}: field "{name}" {problem}')
    return value


def field_images(command: dict[str, Any]) -> list[Any]:
    """``images``: a list of ``{type:"image", data, mimeType}`` blocks (absent = none)."""
    value = command.get("images")
    if value is None:
        return []
    if not isinstance(value, list):
        raise RpcCommandError(f'{command.get("type")}: field "images" must be a list')
    for index, image in enumerate(value):
        if not (isinstance(image, dict) and isinstance(image.get("data"), str)
                and isinstance(image.get("mimeType"), str)):
            raise RpcCommandError(
                f'{command.get("type")}: images[{index}] must be {{"type":"image","data":<base64>,"mimeType":<type>}}'
            )
    return [{"type": "image", "data": image["data"], "mimeType": image["mimeType"]} for image in value]
