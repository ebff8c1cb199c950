"""The retry loop of a run (pi-behaviour.md §7.5, §13.7), mixed into ``AgentSession``.

Runs under the session lock right after the agent loop: while the last reply is a retryable
error, announce ``auto_retry_start``, drop the failed reply from the agent's state (the file
keeps it), wait (abortable), and ``continue()``. The decisions are in ``retry.py``.
"""

from __future__ import annotations

import asyncio

from pi_tui.core.messages import AssistantMessage
from pi_tui.session.session_base import SessionBase


class RetryMixin(SessionBase):
    _retry_cancel: asyncio.Event

    def _last_assistant(self) -> AssistantMessage | None:
        raise NotImplementedError

    async def _retry_while_needed(self) -> None:
        settings = self.settings.retry_settings() if hasattr(self.settings, "retry_settings") else None
        while True:
            last = self._last_assistant()
            decision = self._retry.decide(
                last,
                enabled=settings.enabled if settings else True,
                max_retries=settings.max_retries if settings else 3,
                base_delay_ms=settings.base_delay_ms if settings else 2000,
                max_server_delay_ms=settings.provider_max_retry_delay_ms if settings else 60000,
                context_window=self._model.context_window if self._model else None,
            )
            if decision.exhausted_event is not None:
                self.emit(decision.exhausted_event)
            if not decision.retry or last is None:
                return
            self.emit({
                "type": "auto_retry_start", "attempt": decision.attempt,
                "maxAttempts": settings.max_retries if settings else 3,
                "delayMs": decision.delay_ms, "errorMessage": last.get("errorMessage", ""),
            })
            if self.agent.messages and self.agent.messages[-1] is last:
                self.agent.messages.pop()  # it stays in the file
            if not await self._sleep_unless_aborted(decision.delay_ms / 1000):
                self.emit(self._retry.cancelled())
                return
            await self.agent.continue_()

    async def _sleep_unless_aborted(self, seconds: float) -> bool:
        self._retrying = True  # _retry_cancel is cleared when the run starts (AgentSession._run)
        sleeper = asyncio.ensure_future(self.clock.sleep(seconds))
        cancel = asyncio.ensure_future(self._retry_cancel.wait())
        try:
            await asyncio.wait({sleeper, cancel}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            sleeper.cancel()
            cancel.cancel()
            self._retrying = False
        return not self._retry_cancel.is_set()

