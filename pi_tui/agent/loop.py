"""The agent loop (pi-behaviour.md §7.2 with the 0.73.1 changes of §13.7).

``run_agent_loop`` is one run: it appends the prompts, then takes turns — stream a reply, run
its tool calls — until the model stops calling tools; steering messages (polled at loop start
and after each ``turn_end``) are injected before the next model call, follow-ups (polled when
the loop would stop) start another round. A run ends after an ``error`` or ``aborted`` reply.

Every message the run creates is appended to ``context.messages`` and announced with
``message_start``/``message_end``; the run returns the new messages (also carried by
``agent_end``). After an abort the history is consistent: the aborted assistant is recorded
and every tool call it made has a result.
"""

from __future__ import annotations

import asyncio
import copy
import inspect
from collections.abc import Sequence
from typing import Any

from pi_tui.agent.abort import AbortSignal
from pi_tui.agent.tool_execution import execute_tool_calls
from pi_tui.agent.types import AgentContext, AgentLoopConfig, Emit, PreparedRequest, RequestContext
from pi_tui.agent.unfinished_calls import StreamedToolCalls, refuse_unfinished
from pi_tui.core.messages import (
    AgentMessage,
    AssistantMessage,
    ToolResultMessage,
    empty_usage,
    now_ms,
    tool_calls_of,
)
from pi_tui.core.provider import CompletionRequest, ToolSpec

ABORTED_MESSAGE = "Request was aborted."
"""An abort before the reply started streaming (pi: the HTTP client's own abort error)."""
STREAM_ABORTED_MESSAGE = "Request was aborted"
"""An abort while the reply was streaming (pi's providers throw this text, without a dot)."""
_BLOCK_ENDS = {"text": "text_end", "thinking": "thinking_end", "toolCall": "toolcall_end"}


async def _emit(emit: Emit, event: dict[str, Any]) -> None:
    outcome = emit(event)
    if inspect.isawaitable(outcome):
        await outcome


async def run_agent_loop(
    prompts: Sequence[AgentMessage],
    context: AgentContext,
    config: AgentLoopConfig,
    emit: Emit,
    signal: AbortSignal | None = None,
    *,
    poll_steering_first: bool = True,
) -> list[AgentMessage]:
    """One run. With no prompts it continues from the current history (``continue()``)."""
    signal = signal or AbortSignal()
    new_messages: list[AgentMessage] = []
    await _emit(emit, {"type": "agent_start"})
    await _emit(emit, {"type": "turn_start"})
    try:
        for prompt in prompts:
            await _add_message(prompt, context, config, emit, new_messages)
        await _run_turns(context, config, emit, signal, new_messages, poll_steering_first)
    except Exception as err:  # a broken hook must still leave a closed, consistent run
        failure = _run_failure(config, signal.aborted, str(err) or type(err).__name__)
        await _add_message(failure, context, config, emit, new_messages)
        await _emit(emit, {"type": "agent_end", "messages": new_messages})
    return new_messages


async def _run_turns(
    context: AgentContext,
    config: AgentLoopConfig,
    emit: Emit,
    signal: AbortSignal,
    new_messages: list[AgentMessage],
    poll_steering_first: bool,
) -> None:
    first_turn = True
    turn_index = 0
    pending = _poll(config.get_steering_messages) if poll_steering_first else []
    while True:
        more_tool_calls = True
        while more_tool_calls or pending:
            if not first_turn:
                await _emit(emit, {"type": "turn_start"})
            first_turn = False
            for message in pending:
                await _add_message(message, context, config, emit, new_messages)
            pending = []
            reply = await stream_assistant_reply(context, config, emit, signal, turn_index)
            turn_index += 1
            new_messages.append(reply)
            if reply["stopReason"] in ("error", "aborted"):
                await _emit(emit, {"type": "turn_end", "message": reply, "toolResults": []})
                await _emit(emit, {"type": "agent_end", "messages": new_messages})
                return
            calls = tool_calls_of(reply)
            results: list[ToolResultMessage] = []
            more_tool_calls = bool(calls)
            if calls:
                results, terminate = await execute_tool_calls(reply, calls, context, config, emit, signal)
                new_messages.extend(results)
                more_tool_calls = not terminate or signal.aborted
            await _emit(emit, {"type": "turn_end", "message": reply, "toolResults": results})
            if signal.aborted and not more_tool_calls:
                await _emit(emit, {"type": "agent_end", "messages": new_messages})
                return
            pending = _poll(config.get_steering_messages)
        if signal.aborted:
            break
        follow_ups = _poll(config.get_follow_up_messages)
        if not follow_ups:
            break
        pending = follow_ups
    await _emit(emit, {"type": "agent_end", "messages": new_messages})


def _poll(source: Any) -> list[AgentMessage]:
    return list(source()) if source is not None else []


async def _add_message(
    message: AgentMessage, context: AgentContext, config: AgentLoopConfig, emit: Emit, new_messages: list[AgentMessage]
) -> None:
    await _emit(emit, {"type": "message_start", "message": message})
    message = await _finalize(message, config)
    context.messages.append(message)
    new_messages.append(message)
    await _emit(emit, {"type": "message_end", "message": message})


async def _finalize(message: AgentMessage, config: AgentLoopConfig) -> AgentMessage:
    if config.finalize_message is None:
        return message
    replaced = await config.finalize_message(message)
    return replaced if replaced.get("role") == message.get("role") else message


# --------------------------------------------------------------------------- one model call


async def build_request(context: AgentContext, config: AgentLoopConfig, turn_index: int) -> CompletionRequest:
    """The request pipeline of one model call (see ``types.py``): transform → reduce →
    prepare_request → convert_to_llm → CompletionRequest."""
    messages = list(context.messages)
    if config.transform_context is not None:
        messages = await config.transform_context(copy.deepcopy(messages))
    if config.reduce_messages is not None:
        messages = await config.reduce_messages(messages)
    request_context = RequestContext(system_prompt=context.system_prompt, messages=messages, tools=list(context.tools))
    if config.prepare_request is not None:
        answer = await config.prepare_request(PreparedRequest(context=request_context, model=config.model, turn=turn_index))
        if answer is not None and answer.context is not None:
            request_context = answer.context
    converted = config.convert_to_llm(request_context.messages)
    llm_messages = await converted if inspect.isawaitable(converted) else converted
    api_key = None
    if config.get_api_key is not None:
        key = config.get_api_key(config.model)
        api_key = await key if inspect.isawaitable(key) else key
    return CompletionRequest(
        model=config.model,
        system_prompt=request_context.system_prompt,
        messages=list(llm_messages),
        tools=[ToolSpec(name=t.name, description=t.description, parameters=t.parameters) for t in request_context.tools],
        reasoning=config.thinking_level if config.thinking_level != "off" else None,
        session_id=config.session_id,
        thinking_budgets=config.thinking_budgets,
        api_key=api_key,
        on_payload=config.on_payload,
    )


async def stream_assistant_reply(
    context: AgentContext, config: AgentLoopConfig, emit: Emit, signal: AbortSignal, turn_index: int
) -> AssistantMessage:
    """Stream one reply into a partial message kept at the end of the history; return the
    final message (which replaces the partial). Never raises for provider failures."""
    if signal.aborted:
        return await _add_final(failed_assistant(config, "aborted", ABORTED_MESSAGE), context, config, emit, started=False)
    request = await build_request(context, config, turn_index)
    if config.on_request is not None:
        config.on_request(request)
    state: dict[str, Any] = {"partial": None, "final": None, "open": set()}
    calls = StreamedToolCalls()

    async def consume() -> None:
        async for raw in config.provider.stream(request):
            # A reply that arrives faster than it is handled comes from buffered data: nothing
            # here would suspend, so neither the abort (a cancel lands only at a suspension) nor a
            # signal handler or the TUI would get a turn until the whole reply was in. Give the
            # loop a turn per event, and stop once aborted.
            await asyncio.sleep(0)
            if signal.is_aborted():
                raise asyncio.CancelledError
            event: dict[str, Any] = dict(raw)
            kind = event["type"]
            _track_open_blocks(state["open"], event)
            calls.see(event)
            if kind == "start":
                state["partial"] = event["partial"]
                context.messages.append(event["partial"])
                await _emit(emit, {"type": "message_start", "message": event["partial"]})
            elif kind == "done":
                state["final"] = event["message"]
            elif kind == "error":
                state["final"] = event["error"]
            else:
                partial = event["partial"]
                if state["partial"] is not None:
                    context.messages[-1] = partial
                state["partial"] = partial
                await _emit(emit, {"type": "message_update", "message": partial, "assistantMessageEvent": event})

    task = signal.spawn(consume())
    await signal.wait_all([task])
    started = state["partial"] is not None
    received: AssistantMessage | None = state["final"]
    failure = None if task.cancelled() else task.exception()
    if task.cancelled() or (signal.is_aborted() and received is None):
        final = _aborted_from(state["partial"], config)
        if state["partial"] is not None:
            # The closing updates show the reply as aborted (stopReason, errorMessage), as pi's
            # do: its provider marks the message aborted before anyone reads those events.
            await _close_open_blocks(dict(final), state["open"], emit)  # type: ignore[arg-type]
    elif failure is not None:
        final = failed_assistant(config, "error", str(failure) or type(failure).__name__)
        if started:
            final["content"] = copy.deepcopy(state["partial"]["content"])
    elif received is None:
        final = failed_assistant(config, "error", "Provider stream ended without a final message")
    else:
        final = received
        unfinished = calls.unfinished(final, state["open"]) if final["stopReason"] not in ("error", "aborted") else []
        if unfinished:
            final = refuse_unfinished(final, unfinished)
    return await _add_final(final, context, config, emit, started=started)


async def _add_final(
    final: AssistantMessage, context: AgentContext, config: AgentLoopConfig, emit: Emit, *, started: bool
) -> AssistantMessage:
    if not started:
        await _emit(emit, {"type": "message_start", "message": final})
    finalized: AssistantMessage = await _finalize(final, config)  # type: ignore[assignment]
    if started:
        context.messages[-1] = finalized
    else:
        context.messages.append(finalized)
    await _emit(emit, {"type": "message_end", "message": finalized})
    return finalized


def _track_open_blocks(open_blocks: set[int], event: dict[str, Any]) -> None:
    """The content indexes whose ``*_start`` came without their ``*_end`` yet."""
    kind, index = event.get("type", ""), event.get("contentIndex")
    if not isinstance(index, int):
        return
    if kind.endswith("_start"):
        open_blocks.add(index)
    elif kind.endswith("_end"):
        open_blocks.discard(index)


async def _close_open_blocks(partial: AssistantMessage, open_blocks: set[int], emit: Emit) -> None:
    """An abort mid-stream: the blocks still open get their ``*_end`` updates, in content order,
    before ``message_end``, as pi's providers close every block when the stream stops."""
    content = partial["content"]
    for index in sorted(open_blocks):
        if index >= len(content):
            continue
        block: dict[str, Any] = dict(content[index])
        kind = _BLOCK_ENDS.get(str(block.get("type")))
        if kind is None:
            continue
        event: dict[str, Any] = {"type": kind, "contentIndex": index}
        if kind == "toolcall_end":
            event["toolCall"] = copy.deepcopy(block)
        else:
            event["content"] = block.get("text" if kind == "text_end" else "thinking", "")
        event["partial"] = partial
        await _emit(emit, {"type": "message_update", "message": partial, "assistantMessageEvent": event})
    open_blocks.clear()


def _aborted_from(partial: AssistantMessage | None, config: AgentLoopConfig) -> AssistantMessage:
    """The aborted reply. Once streaming had started it is the partial message as it stood (its
    keys in their order, ``responseId`` included) with ``stopReason: "aborted"`` and
    ``errorMessage`` last, exactly pi's shape."""
    if partial is None:
        return failed_assistant(config, "aborted", ABORTED_MESSAGE)
    message: dict[str, Any] = copy.deepcopy(dict(partial))
    message.pop("errorMessage", None)
    message.pop("errorKind", None)
    message["stopReason"] = "aborted"
    message["errorMessage"] = STREAM_ABORTED_MESSAGE
    return message  # type: ignore[return-value]


def _run_failure(config: AgentLoopConfig, aborted: bool, error_message: str) -> AssistantMessage:
    """The reply standing for a run that broke outside the model call, in the shape pi's agent
    gives it (``handleRunFailure``): one empty text block, ``errorMessage`` before ``timestamp``."""
    message: dict[str, Any] = dict(failed_assistant(config, "aborted" if aborted else "error", error_message))
    message["content"] = [{"type": "text", "text": ""}]
    message["timestamp"] = message.pop("timestamp")
    return message  # type: ignore[return-value]


def failed_assistant(config: AgentLoopConfig, reason: str, error_message: str) -> AssistantMessage:
    """An assistant message standing for a failed or aborted call (no content streamed)."""
    return {
        "role": "assistant",
        "content": [],
        "api": config.model.api,
        "provider": config.model.provider,
        "model": config.model.id,
        "usage": empty_usage(),
        "stopReason": reason,  # type: ignore[typeddict-item]
        "timestamp": now_ms(),
        "errorMessage": error_message,  # after timestamp: pi's providers add it last
    }
