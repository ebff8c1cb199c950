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
from pi_tui.core.usage import UsageTotals, task_usage, usage_totals
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
    """The child's context now (after a compaction: the summary and what it kept)."""
    history: Callable[[], list[AgentMessage]]
    """Every message the child's session holds, compacted ones included: what its usage counts."""
    subscribe: Callable[[Listener], Callable[[], None]]
    close: Callable[[], None]
    """Release the child's session file (its lock); called once the task has ended."""
    notes: tuple[str, ...] = ()
    """What the child could not get as defined (a model that is not known here)."""


SpawnChild = Callable[[ChildSpec], ChildHandle]


def usage_of(messages: Sequence[AgentMessage]) -> UsageTotals:
    """The child's own model calls plus those of its own subagents (their task results)."""
    return usage_totals(messages).plus(subagent_usage(messages))


def subagent_usage(messages: Sequence[AgentMessage]) -> UsageTotals:
    """What a session's ``task`` calls cost (their results' ``details.usage``): ``/session`` and
    RPC ``get_session_stats`` show it beside the session's own usage (the footer sums the whole
    file: ``core.usage.FileTotals``)."""
    return task_usage(messages)


def final_answer(messages: Sequence[AgentMessage]) -> tuple[str, dict[str, Any] | None]:
    """The text of the child's last assistant message, and that message."""
    for raw in reversed(messages):
        message: dict[str, Any] = dict(raw)
        if message.get("role") != "assistant":
            continue
        parts = [block.get("text", "") for block in message.get("content") or [] if block.get("type") == "text"]
        return "".join(parts).strip(), message
    return "", None
