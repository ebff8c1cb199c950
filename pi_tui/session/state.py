"""Read-only views of an ``AgentSession`` for the modes: ``state``, context usage, totals."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pi_tui.core.messages import AgentMessage, LlmMessage
from pi_tui.core.provider import ModelInfo, ToolSpec


@dataclass(frozen=True, slots=True, kw_only=True)
class UsageTotals:
    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    cost: float = 0.0

    @property
    def total_tokens(self) -> int:
        return self.input + self.output + self.cache_read + self.cache_write


def usage_totals(messages: list[AgentMessage]) -> UsageTotals:
    """Sums over every assistant message (errors and aborts included: they were paid for)."""
    inp = out = read = write = 0
    cost = 0.0
    for raw in messages:
        message: dict[str, Any] = dict(raw)
        if message.get("role") != "assistant":
            continue
        usage: dict[str, Any] = message.get("usage") or {}
        inp += int(usage.get("input", 0))
        out += int(usage.get("output", 0))
        read += int(usage.get("cacheRead", 0))
        write += int(usage.get("cacheWrite", 0))
        cost += float((usage.get("cost") or {}).get("total", 0.0))
    return UsageTotals(input=inp, output=out, cache_read=read, cache_write=write, cost=cost)


@dataclass(frozen=True, slots=True, kw_only=True)
class ContextUsage:
    """§2.2 ``getContextUsage()``. ``tokens`` and ``percent`` are None when unknown: after a
    compaction, until an answer reports its usage (the kept messages' usage predates it)."""

    tokens: int | None
    context_window: int
    percent: float | None
    estimated: bool
    """True when the number includes chars/4 estimates after the last reported usage."""

    @property
    def known(self) -> bool:
        return self.tokens is not None


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestPreview:
    """What the next model call would contain (for ``/context`` and ``pi-tui context``)."""

    system_prompt: str
    messages: list[LlmMessage]
    tools: list[ToolSpec]
    model: ModelInfo | None


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionState:
    model: ModelInfo | None
    thinking_level: str
    is_streaming: bool
    is_compacting: bool
    is_retrying: bool
    steering: list[str] = field(default_factory=list)
    follow_up: list[str] = field(default_factory=list)
    session_file: Path | None = None
    session_id: str = ""
    session_name: str | None = None
    message_count: int = 0
    totals: UsageTotals = field(default_factory=UsageTotals)
