"""Executing the tool calls of one assistant message (pi-behaviour.md §7.3 with §13.7).

Preparation of each call, in source order: ``tool_execution_start``, tool lookup, the tool's
``prepare_arguments`` shim (if it has one), schema validation, ``before_tool_call``. A call that
resolves during preparation (unknown tool, invalid arguments, blocked) gets its
``tool_execution_end`` at once.

* **parallel** (default): the runnable calls then run concurrently; each emits
  ``tool_execution_end`` when finalized (completion order); after all are done the toolResult
  ``message_start``/``message_end`` pairs follow in source order.
* **sequential** (setting, or any called tool with ``execution_mode == "sequential"``): one call
  at a time, start → … → end → message start/end.

Steering never interrupts a batch in 0.73.1: every call is answered. An abort cancels the
running tools; each unfinished call is answered with ``Operation aborted``, or with the result a
tool raised ``ToolAborted`` with (``bash``: its output + ``Command aborted``).
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pi_tui.agent.abort import AbortSignal
from pi_tui.agent.types import AgentContext, AgentLoopConfig, Emit, ToolCallInfo
from pi_tui.agent.validation import ArgumentValidationError, validate_tool_arguments
from pi_tui.core.messages import AssistantMessage, ToolCall, ToolResultMessage, now_ms
from pi_tui.core.tool import Tool, ToolAborted, ToolContext, ToolResult, text_result

ABORTED_TOOL_TEXT = "Operation aborted"
_PENDING_UPDATES: set[asyncio.Task[None]] = set()


@dataclass(slots=True)
class _Call:
    call: ToolCall
    tool: Tool | None = None
    args: dict[str, Any] | None = None
    result: ToolResult | None = None
    """Set when the call is resolved (immediately during preparation, or after running)."""
    ended: bool = False
    """``tool_execution_end`` was emitted."""
    aborted_result: ToolResult | None = None
    """What the tool asked to record when it was cancelled (``ToolAborted``)."""


async def _emit(emit: Emit, event: dict[str, Any]) -> None:
    outcome = emit(event)
    if inspect.isawaitable(outcome):
        await outcome


async def execute_tool_calls(
    assistant: AssistantMessage,
    tool_calls: list[ToolCall],
    context: AgentContext,
    config: AgentLoopConfig,
    emit: Emit,
    signal: AbortSignal,
) -> tuple[list[ToolResultMessage], bool]:
    """Run every call; return the toolResult messages in source order (also appended to
    ``context.messages``, with their message events emitted) and whether every result asked
    to terminate the run (pi 0.73.1 early stop)."""
    tools = {tool.name: tool for tool in context.tools}
    sequential = config.tool_execution == "sequential" or any(
        getattr(tools.get(c["name"]), "execution_mode", "parallel") == "sequential" for c in tool_calls
    )
    calls = [_Call(call) for call in tool_calls]
    if sequential:
        results: list[ToolResultMessage] = []
        for item in calls:
            await _prepare(item, tools, assistant, context, config, emit)
            if item.result is None:
                await _run_and_finalize([item], assistant, context, config, emit, signal)
            results.extend(await _publish_results([item], context, config, emit, recorded=results))
        return results, _terminates(calls)
    for item in calls:
        await _prepare(item, tools, assistant, context, config, emit)
    runnable = [item for item in calls if item.result is None]
    await _run_and_finalize(runnable, assistant, context, config, emit, signal)
    return await _publish_results(calls, context, config, emit), _terminates(calls)


async def _prepare(
    item: _Call,
    tools: dict[str, Tool],
    assistant: AssistantMessage,
    context: AgentContext,
    config: AgentLoopConfig,
    emit: Emit,
) -> None:
    call = item.call
    await _emit(emit, {"type": "tool_execution_start", "toolCallId": call["id"], "toolName": call["name"], "args": call["arguments"]})
    tool = tools.get(call["name"])
    if tool is None:
        await _resolve_now(item, text_result(f"Tool {call['name']} not found", details={}, is_error=True), emit)
        return
    item.tool = tool
    args: dict[str, Any] = call["arguments"] if isinstance(call["arguments"], dict) else {}
    shim = getattr(tool, "prepare_arguments", None)
    try:
        if callable(shim):
            args = shim(dict(args))
        args = validate_tool_arguments(tool.name, tool.parameters, args)
    except ArgumentValidationError as err:
        await _resolve_now(item, text_result(str(err), details={}, is_error=True), emit)
        return
    except Exception as err:  # a broken shim is the tool's failure, never the loop's
        await _resolve_now(item, text_result(str(err) or type(err).__name__, details={}, is_error=True), emit)
        return
    item.args = args
    if config.before_tool_call is not None:
        info = ToolCallInfo(tool_call=call, args=args, assistant_message=assistant, context=context)
        try:
            verdict = await config.before_tool_call(info)
        except Exception as err:
            await _resolve_now(item, text_result(str(err) or "Tool execution was blocked", details={}, is_error=True), emit)
            return
        if verdict is not None and verdict.block:
            await _resolve_now(item, text_result(verdict.reason or "Tool execution was blocked", details={}, is_error=True), emit)


async def _resolve_now(item: _Call, result: ToolResult, emit: Emit) -> None:
    item.result = result
    await _emit_end(item, emit)


async def _emit_end(item: _Call, emit: Emit) -> None:
    assert item.result is not None
    call = item.call
    item.ended = True
    await _emit(
        emit,
        {
            "type": "tool_execution_end",
            "toolCallId": call["id"],
            "toolName": call["name"],
            "result": _result_json(item.result),
            "isError": item.result.is_error,
        },
    )


async def _run_and_finalize(
    items: list[_Call],
    assistant: AssistantMessage,
    context: AgentContext,
    config: AgentLoopConfig,
    emit: Emit,
    signal: AbortSignal,
) -> None:
    if not items:
        return

    async def run_one(item: _Call) -> None:
        item.result = await _execute(item, config, emit)
        item.result = await _after_hook(item, assistant, context, config)
        await _emit_end(item, emit)

    tasks = [signal.spawn(run_one(item)) for item in items]
    await signal.wait_all(tasks)
    for item, task in zip(items, tasks, strict=True):
        if item.ended:
            continue
        if task.cancelled() or item.result is None:
            item.result = item.aborted_result or text_result(ABORTED_TOOL_TEXT, details={}, is_error=True)
        elif task.exception() is not None:
            # Only a hook or a listener can fail here; the tool's own errors are already results.
            item.result = text_result(str(task.exception()), details={}, is_error=True)
        await _emit_end(item, emit)


async def _execute(item: _Call, config: AgentLoopConfig, emit: Emit) -> ToolResult:
    assert item.tool is not None and item.args is not None
    call = item.call
    loop = asyncio.get_running_loop()
    updates: list[asyncio.Task[None]] = []

    def on_update(partial: ToolResult) -> None:
        event = {
            "type": "tool_execution_update",
            "toolCallId": call["id"],
            "toolName": call["name"],
            "args": call["arguments"],
            "partialResult": _result_json(partial),
        }
        try:
            outcome = emit(event)
            if inspect.isawaitable(outcome):
                task = loop.create_task(_await(outcome))
                _PENDING_UPDATES.add(task)
                task.add_done_callback(_PENDING_UPDATES.discard)
                updates.append(task)
        except Exception:
            pass  # a listener failing must not fail the tool

    base = config.tool_context() if config.tool_context is not None else ToolContext(cwd=Path.cwd())
    ctx = dataclasses.replace(base, on_update=on_update)
    try:
        result: Any = await item.tool.execute(call["id"], item.args, ctx)
    except ToolAborted as aborted:
        item.aborted_result = aborted.result
        raise
    except asyncio.CancelledError:
        raise
    except Exception as err:
        result = text_result(str(err) or type(err).__name__, details={}, is_error=True)
    finally:
        if updates:  # every update is announced before the call's tool_execution_end
            await asyncio.gather(*updates, return_exceptions=True)
    if not isinstance(result, ToolResult):
        return text_result(f"Tool {call['name']} returned an invalid result", details={}, is_error=True)
    return result


def _result_json(result: ToolResult) -> dict[str, Any]:
    """``{content, details}`` as pi's events carry it: no ``details`` key when there are none."""
    shaped: dict[str, Any] = {"content": result.content}
    if result.details is not None:
        shaped["details"] = result.details
    return shaped


async def _await(awaitable: Any) -> None:
    await awaitable


async def _after_hook(item: _Call, assistant: AssistantMessage, context: AgentContext, config: AgentLoopConfig) -> ToolResult:
    result = item.result
    assert result is not None
    if config.after_tool_call is None:
        return result
    info = ToolCallInfo(tool_call=item.call, args=item.args or {}, assistant_message=assistant, context=context)
    try:
        change = await config.after_tool_call(info, result)
    except Exception as err:
        return text_result(str(err) or type(err).__name__, details={}, is_error=True)
    return change.applied_to(result) if change is not None else result


async def _publish_results(
    items: list[_Call], context: AgentContext, config: AgentLoopConfig, emit: Emit,
    *, recorded: list[ToolResultMessage] | None = None,
) -> list[ToolResultMessage]:
    """Build the toolResult messages, pass them through ``transform_tool_results`` (the
    session's artifact step sees a whole batch at once; sequentially, one result with the
    batch's ``recorded`` ones, so its per-turn budget still holds), then record and announce each."""
    messages = [_result_message(item) for item in items]
    if config.transform_tool_results is not None:
        changed = await config.transform_tool_results(messages, list(recorded or ()))
        if len(changed) == len(messages):
            messages = changed
    published: list[ToolResultMessage] = []
    for message in messages:
        await _emit(emit, {"type": "message_start", "message": message})
        if config.finalize_message is not None:
            replaced = await config.finalize_message(message)
            if replaced.get("role") == "toolResult":
                message = replaced  # type: ignore[assignment]
        context.messages.append(message)
        await _emit(emit, {"type": "message_end", "message": message})
        published.append(message)
    return published


def _result_message(item: _Call) -> ToolResultMessage:
    result = item.result
    assert result is not None
    message: ToolResultMessage = {
        "role": "toolResult",
        "toolCallId": item.call["id"],
        "toolName": item.call["name"],
        "content": result.content,
        "details": result.details,
        "isError": result.is_error,
        "timestamp": now_ms(),
    }
    if result.details is None:
        del message["details"]
    return message


def _terminates(calls: list[_Call]) -> bool:
    return bool(calls) and all(c.result is not None and c.result.terminate for c in calls)
