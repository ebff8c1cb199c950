"""Where other parts plug into a session's runs: the SDK's single hooks and the hook lists.

The SDK's hooks (``transform_context`` … ``after_tool_call``, signatures in ``agent.types``) are
one callable each, set by whoever builds the session. The lists are for the collaborators that
``sdk.py`` (or a mode) attaches — checkpoints, permissions, MCP — so that each adds
itself with one ``append`` instead of a line in ``AgentSession``:

* ``session_started(reason)`` — after ``session_start`` reached the extensions: ``startup``,
  ``reload``, ``new``, ``resume``, ``fork`` (a checkpoint at session start and resume);
* ``before_prompt(text)`` — a prompt is about to run (after the extension ``input`` event and
  template expansion, before compaction and the run): a checkpoint before each prompt;
* ``turn_ended(turn)`` — one turn (a reply and its tool calls) ended; ``turn.tool_names`` says
  which tools ran (a checkpoint after a turn in which a file-changing tool ran);
* ``before_leaf_change(target_id)`` — ``navigate_tree`` or ``fork`` is about to move the leaf
  (a snapshot before a restore);
* ``pipeline_summarized(entry_id)`` — the pipeline strategy's JSON summary was just recorded as
  a compaction entry, inside a run, before the request it shrank is rebuilt from the file: an
  entry appended here (the todo list's reminder) is in that request. The other compactions
  happen between runs and announce themselves with ``compaction_end``;
* ``tool_gates`` — awaited before each tool call, before the extensions' ``tool_call`` and the
  SDK's ``before_tool_call``; the first that blocks wins (permissions; ask the user with
  ``AgentSession.ask_user``). A gate that raises blocks the call: a broken permission check must
  not let a call through.

Two more ways in live on ``AgentSession`` itself: ``add_tools`` (tools that arrive late, MCP)
and ``ask_user`` (a choice through the mode's dialogs, for a permission prompt). Subagents get
their child sessions from ``sdk.py`` (``_spawn_child``, built from the parent's configuration).

A listed hook that raises is reported as an error ``notify`` and the run goes on (events vs
hooks, ARCHITECTURE.md). Hooks run in the order they were added, on the session's event loop.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from pi_tui.agent.types import (
    AfterToolCall,
    BeforeToolCall,
    BeforeToolCallResult,
    PrepareRequest,
    ToolCallInfo,
    TransformContext,
)
from pi_tui.core.messages import AgentMessage


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnEnded:
    """What ``turn_ended`` hooks receive: the turn's reply and the results of its tool calls."""

    message: AgentMessage
    tool_results: list[AgentMessage]

    @property
    def tool_names(self) -> list[str]:
        return [str(dict(r).get("toolName", "")) for r in self.tool_results]


ToolGate = Callable[[ToolCallInfo], Awaitable[BeforeToolCallResult | None]]
Notify = Callable[[str, str], None]


@dataclass(slots=True, kw_only=True, eq=False)
class SessionHooks:
    transform_context: TransformContext | None = None
    convert_to_llm: Callable[[list[AgentMessage]], list[Any]] | None = None
    prepare_request: PrepareRequest | None = None
    before_tool_call: BeforeToolCall | None = None
    after_tool_call: AfterToolCall | None = None
    session_started: list[Callable[[str], Awaitable[None]]] = field(default_factory=list)
    before_prompt: list[Callable[[str], Awaitable[None]]] = field(default_factory=list)
    turn_ended: list[Callable[[TurnEnded], Awaitable[None]]] = field(default_factory=list)
    before_leaf_change: list[Callable[[str], Awaitable[None]]] = field(default_factory=list)
    pipeline_summarized: list[Callable[[str], Awaitable[None]]] = field(default_factory=list)
    tool_gates: list[ToolGate] = field(default_factory=list)


async def run_hooks(hooks: list[Callable[[Any], Awaitable[None]]], value: Any, notify: Notify, what: str) -> None:
    """Await each hook in order; a failure is reported (``notify(message, level)``) and skipped."""
    for hook in list(hooks):
        try:
            await hook(value)
        except Exception as err:
            notify(f"{what} failed: {err}", "error")


async def gate_tool_call(gates: list[ToolGate], info: ToolCallInfo) -> BeforeToolCallResult | None:
    """The first gate's block, or None when every gate lets the call through."""
    for gate in list(gates):
        try:
            verdict = await gate(info)
        except Exception as err:
            return BeforeToolCallResult(block=True, reason=f"Tool call blocked: its permission check failed ({err})")
        if verdict is not None and verdict.block:
            return verdict
    return None
