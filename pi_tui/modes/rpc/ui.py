"""Extension UI over RPC (pi-behaviour.md §9.4): ``extension_ui_request`` out,
``extension_ui_response`` in.

pi-tui's extension API has one UI call today, ``ctx.notify``/``pi.notify`` (a ``notify`` session
event); over RPC it becomes a fire-and-forget request ``{type:"extension_ui_request", id,
method:"notify", message, notifyType}`` — the shape pi's RPC clients already render. The dialog
methods (select, confirm, input, editor) need a client answer: ``request()`` sends one and waits
for the matching ``extension_ui_response``; nothing in the extension API calls it yet
(docs/rpc.md).
"""

from __future__ import annotations

import asyncio
import sys
import uuid
from collections.abc import Callable
from typing import Any

NOTIFY_TYPES = ("info", "warning", "error")


class UiBridge:
    def __init__(self, write: Callable[[dict[str, Any]], None]) -> None:
        self._write = write
        self._pending: dict[str, asyncio.Future[dict[str, Any]]] = {}

    def notify_request(self, event: dict[str, Any]) -> dict[str, Any]:
        """The frame for a ``notify`` session event."""
        level = event.get("level")
        return {
            "type": "extension_ui_request",
            "id": str(uuid.uuid4()),
            "method": "notify",
            "message": str(event.get("message", "")),
            "notifyType": level if level in NOTIFY_TYPES else "info",
        }

    async def request(self, method: str, **fields: Any) -> dict[str, Any]:
        """Send a dialog request and wait for the client's answer (``{value}``, ``{confirmed}``
        or ``{cancelled: true}``). Cancelled when the server shuts down."""
        request_id = str(uuid.uuid4())
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        self._write({"type": "extension_ui_request", "id": request_id, "method": method, **fields})
        try:
            return await future
        finally:
            self._pending.pop(request_id, None)

    def resolve(self, response: dict[str, Any]) -> None:
        """An ``extension_ui_response`` arrived; one for no pending request is ignored (a
        notify needs no answer, a late answer has nobody waiting)."""
        future = self._pending.get(str(response.get("id")))
        if future is None:
            if response.get("id") is None:
                print("pi-tui: extension_ui_response without an id ignored", file=sys.stderr)
            return
        if not future.done():
            future.set_result(response)

    def cancel_all(self) -> None:
        for future in self._pending.values():
            if not future.done():
                future.set_result({"cancelled": True})
