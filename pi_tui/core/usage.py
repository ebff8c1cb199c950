"""What model calls used, summed: one type for a session's own totals (``session/state.py``,
the footer, ``/session``, RPC ``get_session_stats``) and for what the ``task`` tool's children
used (``subagents/child.py``, a task result's ``details.usage``).

Sums come from assistant messages' ``usage`` (pi's shape: ``input``, ``output``, ``cacheRead``,
``cacheWrite``, ``cost.total``); errors and aborts count too, they were paid for. Over which
messages follows pi 0.73.1: its footer sums every entry of the session file (``FileTotals``:
all branches, the turns a compaction took out of the context included), its
``getSessionStats`` (RPC, ``/session``) the current context (``state.totals``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True, kw_only=True)
class UsageTotals:
    turns: int = 0
    """Model calls counted (assistant messages)."""
    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    cost: float = 0.0

    @property
    def total_tokens(self) -> int:
        return self.input + self.output + self.cache_read + self.cache_write

    def plus(self, other: UsageTotals) -> UsageTotals:
        return UsageTotals(turns=self.turns + other.turns, input=self.input + other.input,
                           output=self.output + other.output, cache_read=self.cache_read + other.cache_read,
                           cache_write=self.cache_write + other.cache_write, cost=self.cost + other.cost)

    def to_json(self) -> dict[str, Any]:
        return {"turns": self.turns, "input": self.input, "output": self.output, "cacheRead": self.cache_read,
                "cacheWrite": self.cache_write, "totalTokens": self.total_tokens, "cost": self.cost}

    @classmethod
    def from_json(cls, value: Any) -> UsageTotals:
        """The shape ``to_json`` writes (a task result's ``details.usage``); anything else is zero."""
        if not isinstance(value, dict):
            return cls()
        return cls(turns=_int(value.get("turns")), input=_int(value.get("input")), output=_int(value.get("output")),
                   cache_read=_int(value.get("cacheRead")), cache_write=_int(value.get("cacheWrite")),
                   cost=_float(value.get("cost")))


def _int(raw: Any) -> int:
    return int(raw) if isinstance(raw, (int, float)) and not isinstance(raw, bool) else 0


def _float(raw: Any) -> float:
    return float(raw) if isinstance(raw, (int, float)) and not isinstance(raw, bool) else 0.0


def usage_totals(messages: Iterable[Any]) -> UsageTotals:
    """Sums over every assistant message (``turns`` = how many)."""
    turns = inp = out = read = write = 0
    cost = 0.0
    for raw in messages:
        message: dict[str, Any] = dict(raw)
        if message.get("role") != "assistant":
            continue
        usage: dict[str, Any] = message.get("usage") or {}
        turns += 1
        inp += int(usage.get("input", 0))
        out += int(usage.get("output", 0))
        read += int(usage.get("cacheRead", 0))
        write += int(usage.get("cacheWrite", 0))
        cost += float((usage.get("cost") or {}).get("total", 0.0))
    return UsageTotals(turns=turns, input=inp, output=out, cache_read=read, cache_write=write, cost=cost)


def task_usage(messages: Iterable[Any]) -> UsageTotals:
    """What a session's ``task`` calls cost (their results' ``details.usage``)."""
    total = UsageTotals()
    for raw in messages:
        message: dict[str, Any] = dict(raw)
        if message.get("role") == "toolResult" and message.get("toolName") == "task":
            details = message.get("details")
            if isinstance(details, dict):
                total = total.plus(UsageTotals.from_json(details.get("usage")))
    return total


class FileTotals:
    """pi's footer rule: the usage of every assistant message among a session's entries, and
    beside it what its ``task`` calls cost. ``update(entries)`` adds only the entries appended
    since the last call (the footer asks after every event; the list is append-only, and a
    session that was replaced or reloaded has another list)."""

    def __init__(self) -> None:
        self._entries: list[Any] | None = None
        self._seen = 0
        self.own = UsageTotals()
        self.delegated = UsageTotals()

    def update(self, entries: list[Any]) -> FileTotals:
        if entries is not self._entries or len(entries) < self._seen:
            self._entries, self._seen, self.own, self.delegated = entries, 0, UsageTotals(), UsageTotals()
        fresh = [e["message"] for e in entries[self._seen:] if e.get("type") == "message" and "message" in e]
        self._seen = len(entries)
        if fresh:
            self.own = self.own.plus(usage_totals(fresh))
            self.delegated = self.delegated.plus(task_usage(fresh))
        return self
