"""Messages and content blocks, in pi's exact JSON shapes (pi-behaviour.md §7.1, §1.5).

Why TypedDicts and not classes: these objects are read from and written to pi's JSONL session
files and sent over the wire. Keeping them as plain JSON objects means

* a load → save round trip is byte-for-byte faithful (key order and unknown fields survive),
* loading 100,000 entries costs one ``json.loads`` per line and nothing more,
* mypy still checks every field access.

Field names are pi's (camelCase) on purpose: they are the file format.

Two levels exist:

* **Agent messages** (``AgentMessage``): everything that can sit in a session's context,
  including the app roles ``bashExecution``, ``custom``, ``branchSummary`` and
  ``compactionSummary``.
* **LLM messages** (``LlmMessage``): only ``user``, ``assistant`` and ``toolResult``; the result of
  ``core.context.convert.convert_to_llm``.
"""

from __future__ import annotations

import time
from typing import Any, Literal, NotRequired, TypeAlias, TypedDict

JsonValue: TypeAlias = Any
"""A JSON-compatible value (dict/list/str/int/float/bool/None)."""

StopReason = Literal["stop", "length", "toolUse", "error", "aborted"]
ThinkingLevel = Literal["off", "minimal", "low", "medium", "high", "xhigh"]
THINKING_LEVELS: tuple[ThinkingLevel, ...] = ("off", "minimal", "low", "medium", "high", "xhigh")


# --------------------------------------------------------------------------- content blocks


class TextContent(TypedDict):
    type: Literal["text"]
    text: str
    textSignature: NotRequired[str]


class ThinkingContent(TypedDict):
    type: Literal["thinking"]
    thinking: str
    thinkingSignature: NotRequired[str]
    redacted: NotRequired[bool]


class ImageContent(TypedDict):
    type: Literal["image"]
    data: str
    """Base64-encoded bytes."""
    mimeType: str


class ToolCall(TypedDict):
    type: Literal["toolCall"]
    id: str
    name: str
    arguments: dict[str, JsonValue]
    thoughtSignature: NotRequired[str]


UserContent: TypeAlias = TextContent | ImageContent
AssistantContent: TypeAlias = TextContent | ThinkingContent | ToolCall


# --------------------------------------------------------------------------- usage


class Cost(TypedDict):
    input: float
    output: float
    cacheRead: float
    cacheWrite: float
    total: float


class Usage(TypedDict):
    input: int
    output: int
    cacheRead: int
    cacheWrite: int
    totalTokens: int
    cost: Cost


def empty_usage() -> Usage:
    return {
        "input": 0,
        "output": 0,
        "cacheRead": 0,
        "cacheWrite": 0,
        "totalTokens": 0,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
    }


# --------------------------------------------------------------------------- LLM messages


class UserMessage(TypedDict):
    role: Literal["user"]
    content: str | list[UserContent]
    timestamp: int
    """Milliseconds since the epoch."""


class AssistantMessage(TypedDict):
    role: Literal["assistant"]
    content: list[AssistantContent]
    api: str
    provider: str
    model: str
    usage: Usage
    stopReason: StopReason
    timestamp: int
    errorMessage: NotRequired[str]
    responseId: NotRequired[str]
    responseModel: NotRequired[str]
    diagnostics: NotRequired[list[JsonValue]]
    errorKind: NotRequired[ErrorKind]
    """pi-tui addition: the classified failure (only when stopReason is error)."""
    retryAfterMs: NotRequired[int]
    """pi-tui addition: a server-requested wait (429 retry-after), when known."""


class ToolResultMessage(TypedDict):
    role: Literal["toolResult"]
    toolCallId: str
    toolName: str
    content: list[UserContent]
    isError: bool
    timestamp: int
    details: NotRequired[JsonValue]


# --------------------------------------------------------------------------- app roles


class BashExecutionMessage(TypedDict):
    role: Literal["bashExecution"]
    command: str
    output: str
    exitCode: NotRequired[int | None]
    cancelled: bool
    truncated: bool
    timestamp: int
    fullOutputPath: NotRequired[str]
    excludeFromContext: NotRequired[bool]


class CustomMessage(TypedDict):
    role: Literal["custom"]
    customType: str
    content: str | list[UserContent]
    display: bool
    timestamp: int
    details: NotRequired[JsonValue]


class BranchSummaryMessage(TypedDict):
    role: Literal["branchSummary"]
    summary: str
    fromId: str
    timestamp: int


class CompactionSummaryMessage(TypedDict):
    role: Literal["compactionSummary"]
    summary: str
    tokensBefore: int
    timestamp: int


LlmMessage: TypeAlias = UserMessage | AssistantMessage | ToolResultMessage
AgentMessage: TypeAlias = (
    UserMessage
    | AssistantMessage
    | ToolResultMessage
    | BashExecutionMessage
    | CustomMessage
    | BranchSummaryMessage
    | CompactionSummaryMessage
)

ErrorKind = Literal["context_overflow", "rate_limit", "transient", "auth", "bad_request", "unknown"]
"""How a provider failure was classified (pi-tui addition, stored on error assistants)."""


# --------------------------------------------------------------------------- helpers


def now_ms() -> int:
    return int(time.time() * 1000)


def text_of(content: str | list[Any]) -> str:
    """The text blocks of a content value joined with ``""`` (images and others skipped)."""
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") for b in content if b.get("type") == "text")


def user_message(text: str, *, images: list[ImageContent] | None = None, timestamp: int | None = None) -> UserMessage:
    """A user message as pi builds it: an array with the text first, then images."""
    content: list[UserContent] = [{"type": "text", "text": text}]
    content.extend(images or [])
    return {"role": "user", "content": content, "timestamp": timestamp if timestamp is not None else now_ms()}


def assistant_text(message: AssistantMessage) -> str:
    """The assistant's text blocks joined with ``"\\n"`` (how summaries and print mode read it)."""
    return "\n".join(b["text"] for b in message["content"] if b["type"] == "text")


def tool_calls_of(message: AssistantMessage) -> list[ToolCall]:
    return [b for b in message["content"] if b["type"] == "toolCall"]
