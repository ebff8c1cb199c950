"""Read-only views of an ``AgentSession`` for the modes: ``state``, context usage, totals."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from pi_tui.core.messages import LlmMessage
from pi_tui.core.provider import ModelInfo, ToolSpec
from pi_tui.core.usage import UsageTotals, usage_totals

__all__ = ["ContextUsage", "RequestPreview", "SessionState", "UsageTotals", "usage_totals"]


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
