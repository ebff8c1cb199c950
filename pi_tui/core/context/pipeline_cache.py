"""The preparation cache and the cache-aware micro frontier (spec/context-pipeline.md step 6).

``RequestPreparer.prepare(messages)`` turns the projected context into the request copy:

* identical input → the previous output, the *same object*;
* input that only appends to the previous one → the unit index of the previous input is reused
  and only the new messages are grouped (plus the last tool group, which may have grown);
* anything else (a branch move, a new compaction) → prepared from scratch.

Why the cost stays proportional to the new messages: grouping is incremental; once snip applies,
the request holds at most ``first + 1 + last`` units whatever the history length; each unit's
size and compacted form are computed once and memoized; and the cache-aware frontier is a
left-to-right scan that only ever advances. "Identical" and "append-only" are checked in O(1)
when the messages are the session's own objects (the projection does not copy, the loop hands
them over uncopied unless something transforms the context): the history is append-only and a
path is a chain, so the same object at the previous last position means the same prefix. A
different first message (a new compaction summary) means a new prefix. When the input is a
copy (an extension's ``context`` handler gets pi's deep copy), the previous input is compared
by value instead: a C-level list comparison, far cheaper than preparing again.

Cache-aware micro (``variant = "cache-aware"``): the results of older tool groups are compacted
in batches. A scan from the oldest unit accumulates the result tokens of tool groups that are
outside the protected tail (the newest ``micro_keep_recent`` groups and the newest
``protect`` tokens of tool output); each time the accumulated gain reaches ``min_gain`` a
checkpoint is set, and everything before the last checkpoint is compacted. The frontier is
therefore a function of the history alone (the same history always yields the same request) and
the request prefix stays byte-identical between checkpoints, which is what keeps a provider's
prompt cache warm.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pi_tui.core.context.pipeline import (
    PipelineConfig,
    Reduction,
    Unit,
    build_units,
    flatten,
    reduce_units,
)
from pi_tui.core.messages import AgentMessage


@dataclass(slots=True)
class Prepared:
    """One prepared request copy."""

    messages: list[AgentMessage]
    reduction: Reduction | None
    events: list[dict[str, Any]] = field(default_factory=list)
    """``context_reduced`` events for the steps whose effect changed since the previous request."""
    reused: str = "none"
    """``identical`` | ``append`` | ``none``: what the cache could reuse."""

    @property
    def bytes(self) -> int:
        return self.reduction.bytes_after if self.reduction is not None else 0


def _same(a: Any, b: Any) -> bool:
    return a is b or a == b


def cache_aware_budgets(config: PipelineConfig) -> tuple[int, int]:
    """``(protect_tokens, min_gain_tokens)``, bounded so the summary threshold stays reachable.

    opencode's numbers (protect 40k, gain 20k tokens) assume no byte threshold; with the
    pipeline's 50,000-byte summary threshold (~12,500 tokens) they would send every long session
    straight to the summarizer (measured: 58 summaries in 200 turns with half/quarter bounds).
    So the protected tail is at most a quarter of the threshold and the minimum gain at most an
    eighth: the steady-state request (tail + not-yet-pruned batch + the small units snip keeps)
    then stays under the threshold.
    """
    threshold_tokens = max(1, config.summary_threshold_bytes // 4)
    return (
        min(config.cache_aware_protect_tokens, threshold_tokens // 4),
        max(1, min(config.cache_aware_min_gain_tokens, threshold_tokens // 8)),
    )


class RequestPreparer:
    """Prepares request copies for one session, keeping the last input and output (never persisted)."""

    def __init__(self, config: PipelineConfig | None = None, *, strategy: str = "pipeline") -> None:
        self.config = config or PipelineConfig()
        self.strategy = strategy
        self._reset()

    def _reset(self) -> None:
        self._input: list[AgentMessage] = []
        self._length = 0
        self._first: Any = None
        self._last: Any = None
        self._units: list[Unit] = []
        self._orphans = 0
        self._repaired = 0
        self._bytes = 0
        self._tokens = 0
        self._output: Prepared | None = None
        self._scan_next = 0
        self._scan_gain = 0
        self._frontier = 0
        self._effect: tuple[int, int] = (0, 0)

    def invalidate(self) -> None:
        """Forget everything (the session was replaced)."""
        self._reset()

    @property
    def frontier(self) -> int:
        return self._frontier

    def prepare(self, messages: Sequence[AgentMessage]) -> Prepared:
        n = len(messages)
        if self._output is not None and n == self._length and n and self._same_prefix(messages, n):
            self._output.reused = "identical"
            self._output.events = []
            self._input = list(messages)
            return self._output
        reused = "none"
        if self._output is not None and n > self._length > 0 and self._same_prefix(messages, self._length):
            reused = "append"
            self._extend(messages)
        else:
            self._rebuild(messages)
        self._input = list(messages)
        self._length = n
        self._first = messages[0] if n else None
        self._last = messages[-1] if n else None
        prepared = self._finish(messages)
        prepared.reused = reused
        self._output = prepared
        return prepared

    def _same_prefix(self, messages: Sequence[AgentMessage], length: int) -> bool:
        """Do ``messages`` start with the previous input (``length`` = its length)?"""
        if _same(messages[0], self._first) and messages[length - 1] is self._last:
            return True  # the history's own objects: O(1)
        return list(messages[:length]) == self._input  # a copy: compare values

    # ------------------------------------------------------------------ units

    def _rebuild(self, messages: Sequence[AgentMessage]) -> None:
        self._units, self._orphans = build_units(messages)
        self._repaired = sum(1 for u in self._units if u.repaired)
        self._bytes = self._tokens = 0
        if self.strategy == "pipeline":
            self._count(self._units, +1)
        self._scan_next = self._scan_gain = self._frontier = 0

    def _extend(self, messages: Sequence[AgentMessage]) -> None:
        start = self._length
        if self._units and self._units[-1].open:
            popped = self._units.pop()
            start = popped.start
            self._repaired -= popped.repaired
            if self.strategy == "pipeline":
                self._count([popped], -1)
            self._scan_next = min(self._scan_next, len(self._units))
        new_units, orphans = build_units(messages, start)
        self._units.extend(new_units)
        self._orphans += orphans
        self._repaired += sum(1 for u in new_units if u.repaired)
        if self.strategy == "pipeline":
            self._count(new_units, +1)

    def _count(self, units: Sequence[Unit], sign: int) -> None:
        for unit in units:
            size = unit.size()
            self._bytes += sign * size[0]
            self._tokens += sign * size[1]

    # ------------------------------------------------------------------ output

    def _finish(self, messages: Sequence[AgentMessage]) -> Prepared:
        if self.strategy != "pipeline":
            if self._orphans or self._repaired:
                out = flatten(self._units)
            else:  # nothing to repair: the input itself (no O(n) copy)
                out = messages if isinstance(messages, list) else list(messages)
            return Prepared(messages=out, reduction=None)
        micro_before = self._advance_frontier() if self.config.cache_aware else None
        reduction = reduce_units(self._units, self.config, micro_before=micro_before, totals=(self._bytes, self._tokens))
        prepared = Prepared(messages=reduction.messages, reduction=reduction)
        effect = (reduction.snipped_units, reduction.micro_units)
        if effect != self._effect:
            prepared.events = _events(reduction)
        self._effect = effect
        return prepared

    def _advance_frontier(self) -> int:
        protect_tokens, min_gain = cache_aware_budgets(self.config)
        protected_from = self._protected_from(protect_tokens)
        while self._scan_next < protected_from:
            unit = self._units[self._scan_next]
            self._scan_next += 1
            if not unit.is_tool_group:
                continue
            self._scan_gain += unit.result_tokens()
            if self._scan_gain >= min_gain:
                self._frontier = self._scan_next
                self._scan_gain = 0
        return self._frontier

    def _protected_from(self, protect_tokens: int) -> int:
        """First unit of the protected tail: newest ``keep_recent`` groups and ``protect`` tokens."""
        groups = 0
        tokens = 0
        index = len(self._units)
        while index > 0:
            unit = self._units[index - 1]
            if unit.is_tool_group:
                if groups >= self.config.micro_keep_recent and tokens >= protect_tokens:
                    break
                groups += 1
                tokens += unit.result_tokens()
            index -= 1
        return index


def _events(reduction: Reduction) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    if reduction.snipped_units:
        events.append(
            {
                "type": "context_reduced",
                "step": "snip",
                "bytesBefore": reduction.bytes_before,
                "bytesAfter": reduction.bytes_after_snip,
                "tokensBefore": reduction.tokens_before,
                "tokensAfter": reduction.tokens_after_snip,
                "detail": f"{reduction.snipped_units} middle groups omitted",
            }
        )
    if reduction.micro_units:
        events.append(
            {
                "type": "context_reduced",
                "step": "micro",
                "bytesBefore": reduction.bytes_after_snip,
                "bytesAfter": reduction.bytes_after,
                "tokensBefore": reduction.tokens_after_snip,
                "tokensAfter": reduction.tokens_after,
                "detail": f"results of {reduction.micro_units} older tool groups compacted",
            }
        )
    return events
