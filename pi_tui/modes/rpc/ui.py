"""Extension UI over RPC (pi-behaviour.md §9.4): ``extension_ui_request`` out,
``extension_ui_response`` in.

* ``ctx.ui`` dialogs (``RpcExtensionUI``): ``select{title, options}``, ``confirm{title,
  message}``, ``input{title, placeholder?}``, ``editor{title, prefill?}`` (plus ``timeout`` in ms
  when the extension gave one) are sent and wait for the client's ``{type:
  "extension_ui_response", id, value | confirmed | cancelled: true}``. The extension layer
  enforces the timeout; the client need not.
* Fire-and-forget: ``setStatus{statusKey, statusText}`` (``statusText`` left out clears it) and
  ``notify{message, notifyType}``, made from every ``notify`` session event (``ctx.ui.notify``,
  ``pi.notify`` and pi-tui's own notices).

An answer of the wrong shape (a ``value`` that is not one of the options, a ``confirmed`` that is
not a boolean) is reported on stderr and counts as cancelled.
"""

from __future__ import annotations

import asyncio
import sys
import uuid
from collections.abc import Callable, Sequence
from typing import Any

NOTIFY_TYPES = ("info", "warning", "error")


class UiBridge:
    def __init__(self, write: Callable[[dict[str, Any]], None]) -> None:
        self._write = write
        self._pending: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._input_ended = False

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
        or ``{cancelled: true}``). Cancelled at once when stdin has ended (no answer can come)."""
        if self._input_ended:
            return {"cancelled": True}
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

    def input_ended(self) -> None:
        """stdin is closed: answer every open and every later dialog with "cancelled"."""
        self._input_ended = True
        self.cancel_all()

    def cancel_all(self) -> None:
        for future in self._pending.values():
            if not future.done():
                future.set_result({"cancelled": True})


class RpcExtensionUI:
    """``ExtensionUI`` (pi_tui/extensions/ui.py) for RPC mode: every dialog is a request frame."""

    def __init__(self, bridge: UiBridge, write: Callable[[dict[str, Any]], None]) -> None:
        self._bridge = bridge
        self._write = write

    async def _ask(self, method: str, timeout_s: float | None, **fields: Any) -> dict[str, Any]:
        if timeout_s is not None:
            fields["timeout"] = round(timeout_s * 1000)
        return await self._bridge.request(method, **fields)

    async def select(self, title: str, options: Sequence[str], *, timeout_s: float | None) -> str | None:
        answer = await self._ask("select", timeout_s, title=title, options=list(options))
        value = _value(answer, "select")
        if value is not None and value not in options:
            _bad_answer("select", f"value {value!r} is not one of the options")
            return None
        return value

    async def confirm(self, title: str, message: str, *, timeout_s: float | None) -> bool | None:
        answer = await self._ask("confirm", timeout_s, title=title, message=message)
        if answer.get("cancelled") is True:
            return None
        confirmed = answer.get("confirmed")
        if not isinstance(confirmed, bool):
            _bad_answer("confirm", 'expected "confirmed": true/false or "cancelled": true')
            return None
        return confirmed

    async def input(self, title: str, placeholder: str | None, *, timeout_s: float | None) -> str | None:
        fields: dict[str, Any] = {"title": title}
        if placeholder is not None:
            fields["placeholder"] = placeholder
        return _value(await self._ask("input", timeout_s, **fields), "input")

    async def editor(self, title: str, prefill: str, *, timeout_s: float | None) -> str | None:
        fields: dict[str, Any] = {"title": title}
        if prefill:
            fields["prefill"] = prefill
        return _value(await self._ask("editor", timeout_s, **fields), "editor")

    def set_status(self, key: str, text: str | None) -> None:
        frame: dict[str, Any] = {"type": "extension_ui_request", "id": str(uuid.uuid4()), "method": "setStatus",
                                 "statusKey": key}
        if text is not None:
            frame["statusText"] = text
        self._write(frame)


def _value(answer: dict[str, Any], method: str) -> str | None:
    if answer.get("cancelled") is True:
        return None
    value = answer.get("value")
    if not isinstance(value, str):
        _bad_answer(method, 'expected "value": <string> or "cancelled": true')
        return None
    return value


def _bad_answer(method: str, problem: str) -> None:
    print(f"pi-tui: extension_ui_response to {method}: {problem}; treated as cancelled", file=sys.stderr)
