"""What ``pi.register_command`` refuses, and why (docs/extensions.md).

A command is ``/name args`` running ``handler(args)`` or ``handler(args, ctx)``. Whatever cannot
be called that way — a dict in pi's TypeScript shape ``{handler, description}``, a string, a
function with the wrong parameters — would otherwise be accepted and fail only when someone types
the command, far from the line that caused it. ``command_problem`` finds it at registration, so
the loader can name the file, the command and the mistake while the extension loads.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any

KNOWN_OPTIONS = ("description",)


def _kind(value: Any) -> str:
    if value is None:
        return "None"
    kind = type(value).__name__
    return f"{'an' if kind[0] in 'aeiou' else 'a'} {kind}"


def command_problem(name: object, handler: object, description: object, options: Mapping[str, Any],
                    takes_ctx: Callable[[Any], bool]) -> str | None:
    """Why this registration cannot work, or None when it can. ``takes_ctx(handler)`` is how the
    runner decides between ``handler(args)`` and ``handler(args, ctx)`` (``api.accepts_context``)."""
    if not isinstance(name, str):
        return f"the name is {_kind(name)}, not a string"
    bare = name.removeprefix("/")
    if not bare or any(ch.isspace() for ch in bare):
        return "a command name must be one word (no spaces), like 'deploy'"
    if unknown := sorted(set(options) - set(KNOWN_OPTIONS)):
        return (f"unknown option {', '.join(map(repr, unknown))}; the options are "
                f"{', '.join(KNOWN_OPTIONS)}=")
    if isinstance(handler, Mapping):
        return (f"the handler is {_kind(handler)}, not a function (pi's TypeScript "
                "{handler, description} object is not the Python API): pass the function itself, "
                f"pi.register_command({bare!r}, handler, description='…')")
    if not callable(handler):
        return f"the handler is {_kind(handler)}, not a function taking (args) or (args, ctx)"
    if not isinstance(description, str):
        return f"description is {_kind(description)}, not a string"
    return _signature_problem(handler, takes_ctx(handler))


def _signature_problem(handler: Any, takes_ctx: bool) -> str | None:
    """The call the runner will make must bind."""
    try:
        signature = inspect.signature(handler)
    except (TypeError, ValueError):  # a builtin without a signature: nothing to check
        return None
    try:
        signature.bind("", None) if takes_ctx else signature.bind("")
    except TypeError:
        return (f"the handler takes {signature}; it is called as handler(args) or handler(args, ctx)")
    return None
