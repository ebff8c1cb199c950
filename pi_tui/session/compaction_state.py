"""What the compaction runner remembers between operations, for one session (issue 12).

Everything here belongs to the session it was learned in: after ``/new``, ``/resume`` or a fork
the runner looks at a different session id and starts from a clean state, so three failures in
one conversation never switch compaction off in the next. The two circuit breakers are separate:
the pipeline's summary step failing (a model that cannot write the strict JSON) must not switch
off pi-style threshold and overflow recovery.
"""

from __future__ import annotations

from dataclasses import dataclass, field

CIRCUIT_BREAKER_FAILURES = 3


@dataclass(slots=True)
class Breaker:
    """Consecutive failures of one kind of automatic compaction; open at the limit."""

    failures: int = 0
    open: bool = False

    def failed(self) -> bool:
        """Count a failure; True when this one opened the breaker."""
        self.failures += 1
        if self.failures >= CIRCUIT_BREAKER_FAILURES and not self.open:
            self.open = True
            return True
        return False

    def reset(self) -> None:
        self.failures = 0
        self.open = False


@dataclass(slots=True)
class SessionCompactionState:
    automatic: Breaker = field(default_factory=Breaker)
    """Threshold and overflow compaction (the pi strategy's triggers, also active under the pipeline)."""
    pipeline: Breaker = field(default_factory=Breaker)
    """The pipeline's JSON summary step."""
    overflow_attempted: bool = False
    """One compact-and-retry per overflow; reset by a user message or a good answer."""
    threshold_attempted: bool = False
    """One threshold compaction per user turn (from one user message to the next): a failed one
    is not tried again before the next prompt, only after its answer."""
    pipeline_summary_at: tuple[int, str | None] | None = None
    """The history (length, leaf) the pipeline last tried to summarize: not retried as is."""
    threshold_stuck: tuple[object, ...] | None = None
    """Set when a threshold compaction left the context above the threshold: the next one would
    do the same for the same reason. Holds the (model, window, settings) it happened with; a
    different model or settings, or a compaction that gets below the threshold, clear it."""
    notes_shown: set[str] = field(default_factory=set)
    """Warnings already shown once in this session."""
