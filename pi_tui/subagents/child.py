"""What the ``task`` tool needs from a child session, and what it reports about one.

The room never builds a session itself (it may not import ``session`` or ``sdk``): the
composition root passes a ``SpawnChild`` callable that turns a ``ChildSpec`` into a
``ChildHandle`` — a child ``AgentSession`` with its own session file whose header's
``parentSession`` is the parent's file.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pi_tui.core.messages import AgentMessage
from pi_tui.subagents.definitions import AgentDefinition

Listener = Callable[[dict[str, Any]], None]


@dataclass(frozen=True, slots=True, kw_only=True)
class ChildSpec:
    agent: AgentDefinition
    tools: Sequence[str]
    """The child's tool names, already limited to what the parent may use."""
    depth: int
    """The child's depth (the parent's + 1)."""
    description: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ChildHandle:
    session_id: str
    session_file: Path | None
    model: str
    """``provider/id`` the child runs on."""
    prompt: Callable[[str], Awaitable[None]]
    abort: Callable[[], Awaitable[None]]
    messages: Callable[[], list[AgentMessage]]
    subscribe: Callable[[Listener], Callable[[], None]]
    close: Callable[[], None]
    """Release the child's session file (its lock); called once the task has ended."""
    notes: tuple[str, ...] = ()
    """What the child could not get as defined (a model that is not known here)."""


SpawnChild = Callable[[ChildSpec], ChildHandle]


@dataclass(frozen=True, slots=True, kw_only=True)
class ChildUsage:
    turns: int = 0
    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    cost: float = 0.0

    @property
    def total_tokens(self) -> int:
        return self.input + self.output + self.cache_read + self.cache_write

    def to_json(self) -> dict[str, Any]:
        return {"turns": self.turns, "input": self.input, "output": self.output, "cacheRead": self.cache_read,
                "cacheWrite": self.cache_write, "totalTokens": self.total_tokens, "cost": self.cost}

    def plus(self, other: ChildUsage) -> ChildUsage:
        return ChildUsage(turns=self.turns + other.turns, input=self.input + other.input,
                          output=self.output + other.output, cache_read=self.cache_read + other.cache_read,
                          cache_write=self.cache_write + other.cache_write, cost=self.cost + other.cost)

    @classmethod
    def from_json(cls, value: Any) -> ChildUsage:
        if not isinstance(value, dict):
            return cls()

        def number(key: str) -> int:
            raw = value.get(key, 0)
            return int(raw) if isinstance(raw, (int, float)) and not isinstance(raw, bool) else 0

        cost = value.get("cost", 0.0)
        return cls(turns=number("turns"), input=number("input"), output=number("output"),
                   cache_read=number("cacheRead"), cache_write=number("cacheWrite"),
                   cost=float(cost) if isinstance(cost, (int, float)) and not isinstance(cost, bool) else 0.0)


def usage_of(messages: Sequence[AgentMessage]) -> ChildUsage:
    """The child's own model calls plus those of its own subagents (their task results)."""
    own = ChildUsage()
    for raw in messages:
        message: dict[str, Any] = dict(raw)
        if message.get("role") == "assistant":
            usage = message.get("usage") or {}
            own = own.plus(ChildUsage(
                turns=1, input=int(usage.get("input", 0)), output=int(usage.get("output", 0)),
                cache_read=int(usage.get("cacheRead", 0)), cache_write=int(usage.get("cacheWrite", 0)),
                cost=float((usage.get("cost") or {}).get("total", 0.0))))
    return own.plus(subagent_usage(messages))


def subagent_usage(messages: Sequence[AgentMessage]) -> ChildUsage:
    """What a session's ``task`` calls cost (their results' ``details.usage``): the footer and
    ``/session`` show it beside the session's own usage."""
    total = ChildUsage()
    for raw in messages:
        message: dict[str, Any] = dict(raw)
        if message.get("role") == "toolResult" and message.get("toolName") == "task":
            details = message.get("details")
            if isinstance(details, dict):
                total = total.plus(ChildUsage.from_json(details.get("usage")))
    return total


def final_answer(messages: Sequence[AgentMessage]) -> tuple[str, dict[str, Any] | None]:
    """The text of the child's last assistant message, and that message."""
    for raw in reversed(messages):
        message: dict[str, Any] = dict(raw)
        if message.get("role") != "assistant":
            continue
        parts = [block.get("text", "") for block in message.get("content") or [] if block.get("type") == "text"]
        return "".join(parts).strip(), message
    return "", None
