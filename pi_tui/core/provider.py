"""The provider seam: one streamed model call (pi-behaviour.md §7.1, §14).

Contract of ``Provider.stream``:

* It yields ``AssistantMessageEvent`` dicts in pi's shapes (``start``, ``text_*``, ``thinking_*``,
  ``toolcall_*``) and always finishes with exactly one ``done`` or ``error`` event carrying the
  final ``AssistantMessage``.
* It never raises for model, HTTP or network failures: those end the stream with an ``error``
  event whose message has ``stopReason`` ``"error"``, an ``errorMessage`` and an ``errorKind``.
* Cancellation is asyncio cancellation: when the consuming task is cancelled the generator is
  closed and ``CancelledError`` propagates; the agent loop records the aborted message.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeAlias, TypedDict

from pi_tui.core.messages import AssistantMessage, JsonValue, LlmMessage, ThinkingLevel, ToolCall


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelCost:
    """Prices in dollars per million tokens."""

    input: float = 0.0
    output: float = 0.0
    cache_read: float = 0.0
    cache_write: float = 0.0


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelInfo:
    """Everything the session needs to know about a model.

    ``provider``/``id`` are pi's naming (``fake`` / ``fake-model``); ``litellm_model`` is the
    name handed to litellm (``openai/gpt-4o``, or ``openai/<id>`` with ``base_url`` for a
    models.json ``openai-completions`` provider).
    """

    provider: str
    id: str
    name: str = ""
    api: str = "openai-completions"
    litellm_model: str = ""
    base_url: str | None = None
    context_window: int = 128_000
    context_window_source: Literal["models.json", "litellm", "builtin", "default"] = "default"
    max_tokens: int = 16_384
    reasoning: bool = False
    input: tuple[str, ...] = ("text",)
    cost: ModelCost = field(default_factory=ModelCost)
    headers: dict[str, str] = field(default_factory=dict)
    compat: dict[str, JsonValue] = field(default_factory=dict)
    thinking_level_map: dict[str, str | None] = field(default_factory=dict)

    @property
    def ref(self) -> str:
        return f"{self.provider}/{self.id}"

    @property
    def supports_images(self) -> bool:
        return "image" in self.input


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolSpec:
    """A tool as the model sees it."""

    name: str
    description: str
    parameters: dict[str, JsonValue]


PayloadHook: TypeAlias = Callable[[dict[str, Any]], "dict[str, Any] | None"]


@dataclass(frozen=True, slots=True, kw_only=True)
class CompletionRequest:
    model: ModelInfo
    system_prompt: str
    messages: list[LlmMessage]
    tools: list[ToolSpec] = field(default_factory=list)
    max_tokens: int | None = None
    """Explicit output budget (summaries); None means the model default (min(maxTokens, 32000))."""
    reasoning: ThinkingLevel | None = None
    session_id: str | None = None
    api_key: str | None = None
    on_payload: PayloadHook | None = None
    """Called with the finished request body; may return a replacement (before_provider_request)."""
    timeout_ms: int | None = None
    """``retry.provider.timeoutMs``: how long the provider may go without sending anything
    (connecting, waiting for the headers) or, once the body streams, without sending any more of
    the reply (keep-alives do not count) before the call fails as a transient timeout. None
    means the provider's default (10 minutes)."""
    thinking_budgets: dict[str, int] | None = None
    """The ``thinkingBudgets`` setting (level → tokens), on main agent calls only (§15.1): the
    thinking budget of Anthropic's budget models and of Gemini 2.x for that level."""


# --------------------------------------------------------------------------- stream events


class StartEvent(TypedDict):
    type: Literal["start"]
    partial: AssistantMessage


class BlockStartEvent(TypedDict):
    type: Literal["text_start", "thinking_start", "toolcall_start"]
    contentIndex: int
    partial: AssistantMessage


class DeltaEvent(TypedDict):
    type: Literal["text_delta", "thinking_delta", "toolcall_delta"]
    contentIndex: int
    delta: str
    partial: AssistantMessage


class BlockEndEvent(TypedDict):
    type: Literal["text_end", "thinking_end"]
    contentIndex: int
    content: str
    partial: AssistantMessage


class ToolCallEndEvent(TypedDict):
    type: Literal["toolcall_end"]
    contentIndex: int
    toolCall: ToolCall
    partial: AssistantMessage


class DoneEvent(TypedDict):
    type: Literal["done"]
    reason: Literal["stop", "length", "toolUse"]
    message: AssistantMessage


class ErrorEvent(TypedDict):
    type: Literal["error"]
    reason: Literal["error", "aborted"]
    error: AssistantMessage


AssistantMessageEvent: TypeAlias = (
    StartEvent | BlockStartEvent | DeltaEvent | BlockEndEvent | ToolCallEndEvent | DoneEvent | ErrorEvent
)


class Provider(Protocol):
    """Streams one assistant response. See the module docstring for the contract."""

    def stream(self, request: CompletionRequest) -> AsyncIterator[AssistantMessageEvent]: ...
