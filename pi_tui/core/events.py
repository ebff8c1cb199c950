"""Events every mode renders (pi-behaviour.md §7.1, §13.7), in pi's JSON shapes.

Events are notifications: listeners are called synchronously, must be cheap and must not raise
(a raising listener is logged and ignored). Hooks that change behaviour live elsewhere
(``pi_tui.extensions``). JSON and RPC modes print these dicts as they are, one per line.

pi-tui adds a few events of its own (marked below); pi ignores unknown event types.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, NotRequired, TypeAlias, TypedDict

from pi_tui.core.messages import AgentMessage, AssistantMessage, JsonValue, ToolResultMessage
from pi_tui.core.provider import AssistantMessageEvent

# --------------------------------------------------------------------------- agent events


class AgentStartEvent(TypedDict):
    type: Literal["agent_start"]


class AgentEndEvent(TypedDict):
    type: Literal["agent_end"]
    messages: list[AgentMessage]


class TurnStartEvent(TypedDict):
    type: Literal["turn_start"]


class TurnEndEvent(TypedDict):
    type: Literal["turn_end"]
    message: AssistantMessage
    toolResults: list[ToolResultMessage]


class MessageStartEvent(TypedDict):
    type: Literal["message_start"]
    message: AgentMessage


class MessageUpdateEvent(TypedDict):
    type: Literal["message_update"]
    message: AssistantMessage
    assistantMessageEvent: AssistantMessageEvent


class MessageEndEvent(TypedDict):
    type: Literal["message_end"]
    message: AgentMessage


class ToolExecutionStartEvent(TypedDict):
    type: Literal["tool_execution_start"]
    toolCallId: str
    toolName: str
    args: dict[str, JsonValue]


class ToolExecutionUpdateEvent(TypedDict):
    type: Literal["tool_execution_update"]
    toolCallId: str
    toolName: str
    args: dict[str, JsonValue]
    partialResult: JsonValue
    """``{"content": [...], "details": ...}``"""


class ToolExecutionEndEvent(TypedDict):
    type: Literal["tool_execution_end"]
    toolCallId: str
    toolName: str
    result: JsonValue
    """``{"content": [...], "details": ...}``"""
    isError: bool


# --------------------------------------------------------------------------- session events

CompactionReason = Literal["manual", "threshold", "overflow"]


class CompactionStartEvent(TypedDict):
    type: Literal["compaction_start"]
    reason: CompactionReason


class CompactionEndEvent(TypedDict):
    type: Literal["compaction_end"]
    reason: CompactionReason
    result: JsonValue
    """``{summary, firstKeptEntryId, tokensBefore, details}`` or None."""
    aborted: bool
    willRetry: bool
    errorMessage: NotRequired[str]
    tokensAfter: NotRequired[int]
    """pi-tui addition: estimated context tokens after the compaction."""
    durationMs: NotRequired[int]
    """pi-tui addition."""


class AutoRetryStartEvent(TypedDict):
    type: Literal["auto_retry_start"]
    attempt: int
    maxAttempts: int
    delayMs: int
    errorMessage: str


class AutoRetryEndEvent(TypedDict):
    type: Literal["auto_retry_end"]
    success: bool
    attempt: int
    finalError: NotRequired[str]


class QueueUpdateEvent(TypedDict):
    type: Literal["queue_update"]
    steering: list[str]
    followUp: list[str]


class SessionInfoChangedEvent(TypedDict):
    type: Literal["session_info_changed"]
    name: str | None


class ThinkingLevelChangedEvent(TypedDict):
    type: Literal["thinking_level_changed"]
    level: str


class ModelChangedEvent(TypedDict):
    """pi-tui addition."""

    type: Literal["model_changed"]
    provider: str
    modelId: str


class ContextReducedEvent(TypedDict):
    """pi-tui addition: a request-time reducer changed what the model sees (pipeline strategy)."""

    type: Literal["context_reduced"]
    step: Literal["artifact", "snip", "micro", "summary", "summary_rejected"]
    bytesBefore: int
    bytesAfter: int
    tokensBefore: int
    tokensAfter: int
    detail: str


class ArtifactSavedEvent(TypedDict):
    """pi-tui addition: a large tool result was saved to a file and replaced by a preview."""

    type: Literal["artifact_saved"]
    toolCallId: str
    toolName: str
    path: str
    originalBytes: int


class CompactionCircuitOpenEvent(TypedDict):
    """pi-tui addition: automatic compaction stopped after consecutive failures (for the rest
    of this session; ``/new`` starts clean)."""

    type: Literal["compaction_circuit_open"]
    failures: int
    source: Literal["automatic", "pipeline"]
    """``automatic``: threshold/overflow compaction; ``pipeline``: the pipeline's summary step."""
    message: str


class ExtensionErrorEvent(TypedDict):
    type: Literal["extension_error"]
    extensionPath: str
    event: str
    error: str


class NotifyEvent(TypedDict):
    """pi-tui addition: a message for the user (from an extension or the session)."""

    type: Literal["notify"]
    message: str
    level: Literal["info", "warning", "error"]


AgentEvent: TypeAlias = (
    AgentStartEvent
    | AgentEndEvent
    | TurnStartEvent
    | TurnEndEvent
    | MessageStartEvent
    | MessageUpdateEvent
    | MessageEndEvent
    | ToolExecutionStartEvent
    | ToolExecutionUpdateEvent
    | ToolExecutionEndEvent
)

SessionEvent: TypeAlias = (
    AgentEvent
    | CompactionStartEvent
    | CompactionEndEvent
    | AutoRetryStartEvent
    | AutoRetryEndEvent
    | QueueUpdateEvent
    | SessionInfoChangedEvent
    | ThinkingLevelChangedEvent
    | ModelChangedEvent
    | ContextReducedEvent
    | ArtifactSavedEvent
    | CompactionCircuitOpenEvent
    | ExtensionErrorEvent
    | NotifyEvent
)

EventSink: TypeAlias = Callable[[Any], None]
"""Receives events; must not raise."""
