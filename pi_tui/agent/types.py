"""The agent loop's inputs: its context, its configuration and the hook signatures.

The loop is a function over these values (see ``loop.py``); everything stateful (queues, the
abort signal, persistence) is handed in by the caller, so the loop can run under the
``AgentSession`` or on its own in a test with nothing but a ``ScriptedProvider``.

Hooks and their order for one model call (ARCHITECTURE.md, "Canonical history vs request
history")::

    context.messages ─ transform_context ─ reduce_messages ─ prepare_request ─ convert_to_llm ─ provider

``prepare_request`` sees agent messages (so it can rebuild the context from the session
projection, roles like ``compactionSummary`` included); its result goes through
``convert_to_llm`` like everything else. None of the hooks change the canonical history: they
shape one request only.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from pi_tui.core.messages import (
    AgentMessage,
    AssistantMessage,
    JsonValue,
    LlmMessage,
    ThinkingLevel,
    ToolCall,
    ToolResultMessage,
)
from pi_tui.core.provider import (
    AssistantMessageEvent,
    CompletionRequest,
    ModelInfo,
    PayloadHook,
    Provider,
)
from pi_tui.core.tool import Tool, ToolContext, ToolResult

ToolExecutionMode = Literal["parallel", "sequential"]


@dataclass(slots=True)
class AgentContext:
    """What the loop works on: the system prompt, the message history (mutated in place as the
    run appends messages) and the active tools, in the order the model sees them."""

    system_prompt: str
    messages: list[AgentMessage]
    tools: list[Tool] = field(default_factory=list)


@dataclass(slots=True)
class RequestContext:
    """One request before it is converted: what ``prepare_request`` may replace wholesale."""

    system_prompt: str
    messages: list[AgentMessage]
    tools: list[Tool]


@dataclass(slots=True, kw_only=True)
class PreparedRequest:
    """The argument of ``prepare_request``."""

    context: RequestContext
    model: ModelInfo
    turn: int
    """0-based index of the model call within this run."""


@dataclass(slots=True, kw_only=True)
class PrepareRequestResult:
    """``prepare_request``'s answer; ``context=None`` keeps the context unchanged."""

    context: RequestContext | None = None


@dataclass(slots=True, kw_only=True)
class BeforeToolCallResult:
    block: bool = False
    reason: str | None = None


@dataclass(slots=True, kw_only=True)
class ToolCallInfo:
    """What the tool hooks receive about one call."""

    tool_call: ToolCall
    args: dict[str, JsonValue]
    """The validated (and coerced) arguments."""
    assistant_message: AssistantMessage
    context: AgentContext


@dataclass(slots=True, kw_only=True)
class AfterToolCallResult:
    """Each field that is not ``None`` replaces the tool result's value (whole values, §13.7)."""

    content: list[Any] | None = None
    details: JsonValue = None
    replace_details: bool = False
    """``details=None`` is ambiguous: set this to replace the details with None explicitly."""
    is_error: bool | None = None

    def applied_to(self, result: ToolResult) -> ToolResult:
        """``result`` with each given field replaced (whole values, no merge)."""
        return ToolResult(
            content=self.content if self.content is not None else result.content,
            details=self.details if (self.details is not None or self.replace_details) else result.details,
            is_error=self.is_error if self.is_error is not None else result.is_error,
            terminate=result.terminate,
        )


TransformContext: TypeAlias = Callable[[list[AgentMessage]], Awaitable[list[AgentMessage]]]
ConvertToLlm: TypeAlias = Callable[[list[AgentMessage]], "list[LlmMessage] | Awaitable[list[LlmMessage]]"]
PrepareRequest: TypeAlias = Callable[[PreparedRequest], Awaitable["PrepareRequestResult | None"]]
BeforeToolCall: TypeAlias = Callable[[ToolCallInfo], Awaitable["BeforeToolCallResult | None"]]
AfterToolCall: TypeAlias = Callable[[ToolCallInfo, ToolResult], Awaitable["AfterToolCallResult | None"]]
FinalizeMessage: TypeAlias = Callable[[AgentMessage], Awaitable[AgentMessage]]
MessageSource: TypeAlias = Callable[[], Sequence[AgentMessage]]
StreamFn: TypeAlias = Callable[[CompletionRequest], AsyncIterator[AssistantMessageEvent]]
Emit: TypeAlias = Callable[[Any], "Awaitable[None] | None"]


@dataclass(slots=True, kw_only=True)
class AgentLoopConfig:
    """Everything one run needs besides its context. Only ``model``, ``provider`` and
    ``convert_to_llm`` are required; every hook is optional."""

    model: ModelInfo
    provider: Provider
    convert_to_llm: ConvertToLlm
    thinking_level: ThinkingLevel = "off"
    session_id: str | None = None
    thinking_budgets: dict[str, int] | None = None
    """The ``thinkingBudgets`` setting, passed to the provider on every call of the loop."""
    get_api_key: Callable[[ModelInfo], str | Awaitable[str | None] | None] | None = None
    transform_context: TransformContext | None = None
    reduce_messages: TransformContext | None = None
    """The session's built-in request-time reducers (runs after ``transform_context``)."""
    prepare_request: PrepareRequest | None = None
    before_tool_call: BeforeToolCall | None = None
    after_tool_call: AfterToolCall | None = None
    finalize_message: FinalizeMessage | None = None
    """Called with every finished message before ``message_end`` (the extension ``message_end``
    hook); the returned message replaces it in the history and in later events."""
    transform_tool_results: (
        Callable[[list[ToolResultMessage], list[ToolResultMessage]], Awaitable[list[ToolResultMessage]]] | None
    ) = None
    """Sees the toolResult messages of one batch before they are recorded (the session's
    artifact step: large outputs saved to files and replaced by a preview), with the results of
    the same assistant message already recorded (sequential execution records one at a time)."""
    on_payload: PayloadHook | None = None
    on_request: Callable[[CompletionRequest], None] | None = None
    """Sees every finished request before it goes to the provider (the UI's /context compares
    the next request with the last one)."""
    get_steering_messages: MessageSource | None = None
    get_follow_up_messages: MessageSource | None = None
    tool_execution: ToolExecutionMode = "parallel"
    tool_context: Callable[[], ToolContext] | None = None
    """Builds the ToolContext for a tool call (cwd, artifact dir, settings)."""
