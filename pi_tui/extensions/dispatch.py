"""The mechanics under ``ExtensionRunner``: which handlers exist, how one is called safely, and
where failures go (``extension_error`` events). See ``runner.py`` for the per-event rules."""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pi_tui.core.events import ExtensionErrorEvent
from pi_tui.core.tool import Tool
from pi_tui.extensions.api import (
    LOAD_EVENT,
    Extension,
    ExtensionContext,
    ExtensionHost,
    RegisteredCommand,
    accepts_context,
)
from pi_tui.extensions.ui import CURRENT_HANDLER_CLOCK, HandlerClock, NotifyLevel

log = logging.getLogger("pi_tui.extensions")

DEFAULT_TIMEOUT_S = 60.0
FAILED: Any = object()
"""What ``_call`` returns for a handler that raised or timed out (already reported)."""
ErrorListener = Callable[[ExtensionErrorEvent], None]


class HandlerDispatcher:
    """Registration, binding, error reporting and the guarded handler call."""

    def __init__(self, extensions: Sequence[Extension] = (), *, timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
        self.extensions: list[Extension] = []
        self.timeout_s = timeout_s
        self.errors: list[ExtensionErrorEvent] = []
        """Every error reported so far (load errors included), oldest first."""
        self._host: ExtensionHost | None = None
        self._error_listeners: list[ErrorListener] = []
        self._pending_notes: list[tuple[str, NotifyLevel]] = []
        for extension in extensions:
            self.add(extension)

    # ---------------------------------------------------------------- wiring

    @property
    def host(self) -> ExtensionHost | None:
        return self._host

    def bind(self, host: ExtensionHost) -> None:
        """Attach the session; notifications sent during loading are delivered now."""
        self._host = host
        pending, self._pending_notes = self._pending_notes, []
        for message, level in pending:
            self.notify(message, level)

    def unbind(self) -> None:
        self._host = None

    def add(self, extension: Extension) -> None:
        """Append an extension (load order = handler order). A tool whose name an earlier
        extension already registered is reported and dropped."""
        taken = {tool.name: ext.path for ext in self.extensions for tool in ext.tools}
        kept: list[Tool] = []
        for tool in extension.tools:
            if tool.name in taken:
                # a load problem (pi lists such conflicts with the load errors), so it is shown
                # with the start-up diagnostics, not only to error listeners attached later
                self.report(extension.path, LOAD_EVENT, f"tool {tool.name!r} is already registered by {taken[tool.name]}")
                continue
            taken[tool.name] = extension.path
            kept.append(tool)
        extension.tools = kept
        self.extensions.append(extension)

    def on_error(self, listener: ErrorListener) -> Callable[[], None]:
        """Call ``listener`` with every ``extension_error`` event; returns an unsubscribe function."""
        self._error_listeners.append(listener)
        return lambda: self._error_listeners.remove(listener) if listener in self._error_listeners else None

    def report(self, extension_path: Path | str, event: str, error: str) -> None:
        payload: ExtensionErrorEvent = {
            "type": "extension_error",
            "extensionPath": str(extension_path),
            "event": event,
            "error": error,
        }
        log.warning("extension %s failed in %s: %s", extension_path, event, error)
        self.errors.append(payload)
        for listener in list(self._error_listeners):
            try:
                listener(payload)
            except Exception:  # a listener must not break the runner
                log.exception("extension error listener failed")

    def notify(self, message: str, level: NotifyLevel = "info") -> None:
        if self._host is None:
            self._pending_notes.append((message, level))
        else:
            self._host.notify(message, level)

    # ---------------------------------------------------------------- registrations

    def has_handlers(self, event: str) -> bool:
        return any(ext.handlers.get(event) for ext in self.extensions)

    def tools(self) -> list[Tool]:
        return [tool for ext in self.extensions for tool in ext.tools]

    def commands(self) -> list[RegisteredCommand]:
        """All commands; a name used more than once becomes ``name:1``, ``name:2``… (load order)."""
        counts = Counter(name for ext in self.extensions for name, _, _ in ext.commands)
        seen: Counter[str] = Counter()
        result: list[RegisteredCommand] = []
        for ext in self.extensions:
            for name, handler, description in ext.commands:
                seen[name] += 1
                invocation = name if counts[name] == 1 else f"{name}:{seen[name]}"
                result.append(RegisteredCommand(name, invocation, handler, description, ext.path))
        return result

    def get_command(self, invocation_name: str) -> RegisteredCommand | None:
        return next((c for c in self.commands() if c.invocation_name == invocation_name), None)

    async def execute_command(self, text: str) -> bool:
        """Run ``/name args`` if an extension registered ``name``; True when one did (even if it
        failed: the failure is reported and the text is not sent to the model)."""
        if not text.startswith("/"):
            return False
        name, _, args = text[1:].partition(" ")
        command = self.get_command(name)
        if command is None:
            return False
        ctx = ExtensionContext(self._host)
        try:
            result = command.handler(args, ctx) if accepts_context(command.handler) else command.handler(args)
            if inspect.isawaitable(result):
                await result
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            self.report(command.extension_path, f"command:/{command.invocation_name}", describe(exc))
        return True

    # ---------------------------------------------------------------- calling

    def _handlers(self, event: str) -> list[tuple[Extension, Callable[..., Any]]]:
        return [(ext, h) for ext in self.extensions for h in ext.handlers.get(event, ())]

    async def _call(self, ext: Extension, handler: Callable[..., Any], event: dict[str, Any], ctx: ExtensionContext) -> Any:
        """The handler's result, or ``FAILED`` after reporting a raise or a timeout."""
        name = str(event.get("type"))
        try:
            result = handler(event, ctx) if accepts_context(handler) else handler(event)
            if inspect.isawaitable(result):
                # asyncio.timeout cancels the awaited handler in place (no extra task per call).
                # ctx.ui dialogs stop this clock while a person answers (extensions/ui.py).
                async with asyncio.timeout(self.timeout_s) as deadline:
                    token = CURRENT_HANDLER_CLOCK.set(HandlerClock(deadline))
                    try:
                        result = await result
                    finally:
                        CURRENT_HANDLER_CLOCK.reset(token)
            return result
        except TimeoutError:
            self.report(ext.path, name, f"handler timed out after {self.timeout_s:g}s")
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            self.report(ext.path, name, describe(exc))
        return FAILED

    def _ctx(self, **kwargs: Any) -> ExtensionContext:
        return ExtensionContext(self._host, **kwargs)

    async def emit(self, event_type: str, payload: dict[str, Any] | None = None, *, signal: Any = None) -> list[Any]:
        """Notify every handler; returns the non-None results (for events without a rule)."""
        results: list[Any] = []
        ctx = self._ctx(signal=signal)
        for ext, handler in self._handlers(event_type):
            event = {"type": event_type, **(payload or {})}
            result = await self._call(ext, handler, event, ctx)
            if result is not FAILED and result is not None:
                results.append(result)
        return results

    def _invalid(self, ext: Extension, event: str, result: Any, expected: str) -> None:
        self.report(ext.path, event, f"invalid result {result!r:.200}: expected {expected}")


def describe(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
