"""Tool calls whose arguments did not finish streaming are never run, whatever the provider said.

The providers already end a cut stream with an error (nothing of an error reply runs), but a
provider can be wrong: a proxy that closes the stream cleanly, an extension's provider that
reports ``done`` for whatever it got. So the loop watches the reply's own events: a tool call that
started (``toolcall_start``) but never ended (``toolcall_end``), or whose streamed argument text
is an unfinished JSON prefix (an open string, object or array), did not finish. A reply holding
one is turned into a transient error before anything runs; the session's retry decides what
comes next, and the partial reply is kept as an error, never as an answer.
"""

from __future__ import annotations

import copy
from typing import Any

from pi_tui.core.messages import AssistantMessage
from pi_tui.core.partial_json import PartialJson

UNFINISHED_MESSAGE = "The stream ended before the arguments of tool call {names} were complete; not run"


class StreamedToolCalls:
    """Follows the argument text of one reply's tool calls, as streamed."""

    def __init__(self) -> None:
        self._arguments: dict[int, PartialJson] = {}

    def see(self, event: dict[str, Any]) -> None:
        index = event.get("contentIndex")
        if event.get("type") == "toolcall_delta" and isinstance(index, int):
            self._arguments.setdefault(index, PartialJson()).append(str(event.get("delta") or ""))

    def unfinished(self, message: AssistantMessage, open_blocks: set[int]) -> list[str]:
        """The names of the message's tool calls that did not finish streaming (``open_blocks``:
        the blocks whose ``*_start`` had no ``*_end``)."""
        names = []
        for index, block in enumerate(message.get("content") or []):
            if block.get("type") != "toolCall":
                continue
            arguments = self._arguments.get(index)
            if index in open_blocks or (arguments is not None and not arguments.is_complete):
                names.append(str(block.get("name") or "?"))
        return names


def refuse_unfinished(message: AssistantMessage, names: list[str]) -> AssistantMessage:
    """The reply as a transient error (content kept, nothing of it runs)."""
    refused = copy.deepcopy(message)
    refused["stopReason"] = "error"
    refused["errorKind"] = "transient"
    refused["errorMessage"] = UNFINISHED_MESSAGE.format(names=", ".join(repr(n) for n in names))
    return refused
