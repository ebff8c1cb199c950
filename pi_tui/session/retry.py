"""Automatic retry of transient provider failures (pi-behaviour.md §7.5 with §13.7).

After a run ends on a retryable error the session waits ``baseDelayMs × 2^(attempt-1)`` (2, 4,
8 s by default) — or the server's ``retry-after`` when it asked for longer — removes the error
reply from the agent's state (it stays in the session file) and continues. A context overflow
is never retried blindly: compaction decides what happens to it.
"""

from __future__ import annotations

import asyncio
import re
import time
from dataclasses import dataclass
from typing import Any, Protocol

from pi_tui.core.messages import AgentMessage, AssistantMessage
from pi_tui.core.overflow import is_context_overflow

RETRYABLE_RE = re.compile(
    r"overloaded|provider.?returned.?error|rate.?limit|too many requests|429|500|502|503|504|"
    r"service.?unavailable|server.?error|internal.?error|network.?error|connection.?error|"
    r"connection.?refused|connection.?lost|websocket.?closed|websocket.?error|other side closed|"
    r"fetch failed|upstream.?connect|reset before headers|socket hang up|ended without|"
    r"http2 request did not get a response|timed? out|timeout|terminated|retry delay",
    re.IGNORECASE,
)
RETRY_CANCELLED = "Retry cancelled"


class Clock(Protocol):
    """Time as the session sees it; tests inject one whose ``sleep`` returns at once."""

    def now(self) -> float: ...

    async def sleep(self, seconds: float) -> None: ...


class SystemClock:
    def now(self) -> float:
        return time.time()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


def is_retryable(message: AgentMessage | None, context_window: int | None) -> bool:
    if message is None or message.get("role") != "assistant":
        return False
    if message.get("stopReason") != "error" or not message.get("errorMessage"):
        return False
    if message.get("errorKind") == "context_overflow" or is_context_overflow(message, context_window):
        return False
    if message.get("errorKind") in ("rate_limit", "transient"):
        return True
    return RETRYABLE_RE.search(str(message.get("errorMessage"))) is not None


@dataclass(slots=True, kw_only=True)
class RetryDecision:
    retry: bool
    attempt: int
    delay_ms: int = 0
    exhausted_event: dict[str, Any] | None = None
    """``auto_retry_end{success:false}`` to emit when the attempts ran out."""


class RetryState:
    """The attempt counter across the runs of one ``prompt()``."""

    def __init__(self) -> None:
        self.attempt = 0

    def decide(
        self, last: AssistantMessage | None, *, enabled: bool, max_retries: int, base_delay_ms: int,
        max_server_delay_ms: int, context_window: int | None,
    ) -> RetryDecision:
        if not enabled or not is_retryable(last, context_window):
            return RetryDecision(retry=False, attempt=self.attempt)
        assert last is not None
        self.attempt += 1
        requested = int(last.get("retryAfterMs") or 0)
        if self.attempt > max_retries or requested > max_server_delay_ms:
            final = str(last.get("errorMessage", ""))
            if requested > max_server_delay_ms:
                final += f" (the server asked to retry after {requested / 1000:g} s; retry delay above the limit)"
            attempts = self.attempt - 1
            self.attempt = 0
            return RetryDecision(
                retry=False,
                attempt=attempts,
                exhausted_event={"type": "auto_retry_end", "success": False, "attempt": attempts, "finalError": final},
            )
        delay = max(base_delay_ms * 2 ** (self.attempt - 1), requested)
        return RetryDecision(retry=True, attempt=self.attempt, delay_ms=delay)

    def succeeded(self) -> dict[str, Any] | None:
        """The ``auto_retry_end{success:true}`` event after a retry worked (None if none ran)."""
        if self.attempt == 0:
            return None
        event = {"type": "auto_retry_end", "success": True, "attempt": self.attempt}
        self.attempt = 0
        return event

    def cancelled(self) -> dict[str, Any]:
        event = {"type": "auto_retry_end", "success": False, "attempt": self.attempt, "finalError": RETRY_CANCELLED}
        self.attempt = 0
        return event
