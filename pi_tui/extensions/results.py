"""What the runner's typed ``emit_*`` helpers return (the combined answer of all handlers)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pi_tui.core.messages import CustomMessage, ImageContent


@dataclass(frozen=True, slots=True)
class InputResult:
    """``continue`` (send ``text``), or ``handled`` (an extension consumed the input: send nothing)."""

    action: Literal["continue", "handled"]
    text: str
    images: list[ImageContent] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class BeforeAgentStartResult:
    system_prompt: str | None
    """The prompt for this run only; None (or when handlers chained it to "") means the base."""
    messages: list[CustomMessage] = field(default_factory=list)
    """``custom`` messages to append after the user message, in handler order."""


@dataclass(frozen=True, slots=True)
class CompactDecision:
    """``cancel``: do not compact. Else ``compaction`` (when set) replaces the summarizer call."""

    cancel: bool = False
    compaction: dict[str, Any] | None = None
    """``{summary, firstKeptEntryId, tokensBefore, details?}`` from the last handler that gave one."""

    @property
    def from_extension(self) -> bool:
        return self.compaction is not None


@dataclass(frozen=True, slots=True)
class TreeDecision:
    cancel: bool = False
    summary: dict[str, Any] | None = None
    """``{summary, details?}``: use this instead of generating a branch summary."""
    custom_instructions: str | None = None
    replace_instructions: bool | None = None
    label: str | None = None


@dataclass(frozen=True, slots=True)
class ResourcePaths:
    skill_paths: list[str] = field(default_factory=list)
    prompt_paths: list[str] = field(default_factory=list)
    theme_paths: list[str] = field(default_factory=list)
    extension_of: dict[str, Path] = field(default_factory=dict)
    """Each returned path → the extension that returned it (the last one, when several did;
    RPC ``get_commands`` names it in ``sourceInfo.source`` as pi does)."""
