"""The retry loop of a run (pi-behaviour.md §7.5, §13.7).

Runs under the session lock right after the agent loop: while the last reply is a retryable
error, announce ``auto_retry_start``, drop the failed reply from the agent's state (the file
keeps it), wait (abortable), and ``continue()``. The decisions are in ``retry.py``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from pi_tui.agent.agent import Agent
from pi_tui.core.messages import AgentMessage, AssistantMessage
from pi_tui.session.live_state import LiveState
from pi_tui.session.retry import Clock, RetryState


class RetryLoop:
    def __init__(self, state: LiveState, agent: Agent, *, clock: Clock, emit: Callable[[dict[str, Any]], None]) -> None:
        self._state = state
        self._agent = agent
        self._clock = clock
        self._emit = emit
        self.attempts = RetryState()
        self._cancel = asyncio.Event()
        self.retrying = False
        """True while waiting before the next attempt (the run counts as streaming then)."""

    def arm(self) -> None:
        """At the start of a run (not at the wait: an abort while the run winds down must count)."""
        self._cancel.clear()

    def cancel(self) -> None:
        """An abort: the wait ends and no further attempt starts."""
        self._cancel.set()

    def succeeded(self) -> dict[str, Any] | None:
        """``auto_retry_end{success:true}`` after a retry worked (None if none ran)."""
        return self.attempts.succeeded()

    async def run_while_needed(self) -> None:
        settings_of = getattr(self._state.settings, "retry_settings", None)
        settings = settings_of() if callable(settings_of) else None
        while True:
            last = last_assistant_of(self._agent.messages)
            model = self._state.model
            decision = self.attempts.decide(
                last,
                enabled=settings.enabled if settings else True,
                max_retries=settings.max_retries if settings else 3,
                base_delay_ms=settings.base_delay_ms if settings else 2000,
                max_server_delay_ms=settings.provider_max_retry_delay_ms if settings else 60000,
                context_window=model.context_window if model else None,
            )
            if decision.exhausted_event is not None:
                self._emit(decision.exhausted_event)
            if not decision.retry or last is None:
                return
            self._emit({
                "type": "auto_retry_start", "attempt": decision.attempt,
                "maxAttempts": settings.max_retries if settings else 3,
                "delayMs": decision.delay_ms, "errorMessage": last.get("errorMessage", ""),
            })
            messages = self._agent.messages
            if messages and messages[-1] is last:
                messages.pop()  # it stays in the file
            if not await self._sleep_unless_aborted(decision.delay_ms / 1000):
                self._emit(self.attempts.cancelled())
                return
            await self._agent.continue_()

    async def _sleep_unless_aborted(self, seconds: float) -> bool:
        self.retrying = True
        sleeper = asyncio.ensure_future(self._clock.sleep(seconds))
        cancel = asyncio.ensure_future(self._cancel.wait())
        try:
            await asyncio.wait({sleeper, cancel}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            sleeper.cancel()
            cancel.cancel()
            self.retrying = False
        return not self._cancel.is_set()


def last_assistant_of(messages: list[AgentMessage]) -> AssistantMessage | None:
    """The reply the run ended with: the last assistant message after the last user message."""
    for message in reversed(messages):
        if message.get("role") == "assistant":
            return message  # type: ignore[return-value]
        if message.get("role") == "user":
            return None
    return None
