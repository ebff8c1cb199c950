"""The ``task`` tool: hand a search or a side task to a child session with a fresh context.

The child (``child.ChildHandle``, built by the composition root) gets the agent definition's
system prompt — or the parent's, built for the child's tools — the prompt as its first user
message and nothing of the parent's conversation. It runs with its own session file, retries,
compaction and abort; whatever happens to it ends as this call's result, never a hang:

* its final answer (truncated like other tool output, the whole answer saved beside the
  session's artifacts), with ``details``: agent, child session file and id, model, status,
  usage (turns, tokens, cost of every model call in its session file, compactions
  notwithstanding — its own subagents included), duration, its tool calls;
* an error result when it failed (its error message), gave no answer, or could not start;
* on the parent's abort: the child is aborted and given ``STOP_SECONDS`` to record it, and the
  call's result says ``Task aborted`` (``ToolAborted``).

Several calls in one assistant message run at once, at most ``max_concurrent`` (the others wait
for a slot). Every child event is forwarded as ``subagent_event`` (``toolCallId``, ``childId``,
``event``), plus ``subagent_start`` / ``subagent_end``; live progress is the call's
``tool_execution_update`` (``details.status == "running"``).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

from pi_tui.core.deadline import within
from pi_tui.core.errors import ToolError
from pi_tui.core.messages import JsonValue
from pi_tui.core.tool import ToolAborted, ToolContext, ToolResult, text_result
from pi_tui.resources.diagnostics import ResourceDiagnostic
from pi_tui.subagents.child import ChildHandle, ChildSpec, SpawnChild, final_answer, usage_of
from pi_tui.subagents.definitions import AgentDefinition, LoadedAgents, child_tool_names
from pi_tui.subagents.progress import TaskProgress
from pi_tui.tools.common import optional_str, output_dir, require_str
from pi_tui.tools.truncate import truncate_head

TASK_TOOL_NAME = "task"
STOP_SECONDS = 5.0
DEFAULT_MAX_CONCURRENT = 4
DEFAULT_MAX_DEPTH = 1
Forward = Callable[[dict[str, Any]], None]

INTRO = """\
Run a subagent: a separate agent with a fresh context that works on one task and returns only its final answer.
Use it for searches and investigations that would read many files or produce long output, and for side tasks whose \
details you do not need: what the subagent reads never enters your context.
The subagent sees nothing of this conversation: write a complete, self-contained prompt (the goal, what you already \
know, what to report back). Its answer is not shown to the user: summarize what matters.
Several task calls in one message run at the same time."""


def describe(agents: Sequence[AgentDefinition]) -> str:
    lines = [INTRO, "", "Agents (subagent_type, default general):"]
    lines += [f"- {a.name}: {' '.join(a.description.split())}" for a in agents]
    return "\n".join(lines)


def parameters(agents: Sequence[AgentDefinition]) -> dict[str, JsonValue]:
    return {
        "type": "object",
        "properties": {
            "description": {"type": "string", "description": "A short (3-5 word) name for the task"},
            "prompt": {"type": "string", "description": "The complete task for the subagent"},
            "subagent_type": {"type": "string",
                              "description": "Which agent runs it: " + ", ".join(a.name for a in agents)
                                             + " (default general)"},
        },
        "required": ["description", "prompt"],
    }


class TaskTool:
    name = TASK_TOOL_NAME
    label = "Task"
    prompt_snippet: str | None = "Delegate a search or side task to a subagent with a fresh context (only its answer comes back)"
    prompt_guidelines: tuple[str, ...] = ()
    execution_mode: Literal["parallel", "sequential"] = "parallel"

    def __init__(self, agents: LoadedAgents, *, depth: int = 0, max_depth: int = DEFAULT_MAX_DEPTH,
                 max_concurrent: int = DEFAULT_MAX_CONCURRENT) -> None:
        self._spawn: SpawnChild | None = None
        self.agents = agents
        self._parent_tools: Callable[[], Sequence[str]] = lambda: ()
        self._depth = depth
        self._max_depth = max_depth
        self._max_concurrent = max(1, max_concurrent)
        self._slots: asyncio.Semaphore | None = None
        self.forward: Forward = lambda _event: None
        self.description = describe(agents.agents)
        self.parameters = parameters(agents.agents)

    @property
    def agent_diagnostics(self) -> tuple[ResourceDiagnostic, ...]:
        return self.agents.diagnostics

    def attach(self, spawn: SpawnChild, *, parent_tools: Callable[[], Sequence[str]], forward: Forward) -> None:
        """Bind the tool to its session (the composition root, once the session exists)."""
        self._spawn = spawn
        self._parent_tools = parent_tools
        self.forward = forward

    async def execute(self, call_id: str, args: dict[str, JsonValue], ctx: ToolContext) -> ToolResult:
        description = require_str(args, "description", self.name).strip() or "task"
        prompt = require_str(args, "prompt", self.name)
        if not prompt.strip():
            raise ToolError("task: 'prompt' is empty: give the subagent the whole task")
        kind = (optional_str(args, "subagent_type", self.name) or "general").strip() or "general"
        agent = self.agents.get(kind)
        if agent is None:
            known = ", ".join(a.name for a in self.agents.agents)
            raise ToolError(f"task: unknown subagent_type '{kind}' (available: {known})")
        tools = child_tool_names(agent, self._parent_tools(), allow_task=self._depth + 1 < self._max_depth)
        if self._slots is None:
            self._slots = asyncio.Semaphore(self._max_concurrent)
        async with self._slots:
            spec = ChildSpec(agent=agent, tools=tools, depth=self._depth + 1, description=description)
            if self._spawn is None:
                raise ToolError("task: this tool is not attached to a session")
            try:
                child = self._spawn(spec)
            except Exception as err:  # a model that does not resolve, a session dir that cannot be written
                raise ToolError(f"task: could not start the '{agent.name}' subagent: {err}") from err
            return await self._run(call_id, child, spec, prompt, ctx)

    async def _run(self, call_id: str, child: ChildHandle, spec: ChildSpec, prompt: str, ctx: ToolContext) -> ToolResult:
        progress = TaskProgress(agent=spec.agent.name, description=spec.description, child=child)
        started = time.monotonic()

        def on_event(event: dict[str, Any]) -> None:
            self.forward({"type": "subagent_event", "toolCallId": call_id, "childId": child.session_id, "event": event})
            if progress.take(event):
                ctx.on_update(ToolResult(content=[{"type": "text", "text": progress.text()}],
                                         details=progress.details("running", self._elapsed(started))))

        unsubscribe = child.subscribe(on_event)
        self.forward({"type": "subagent_start", "toolCallId": call_id, "childId": child.session_id,
                      "agent": spec.agent.name, "description": spec.description, "model": child.model,
                      "sessionFile": str(child.session_file) if child.session_file else None})
        run = asyncio.ensure_future(child.prompt(prompt))
        result: ToolResult | None = None
        try:
            try:
                await asyncio.shield(run)
            except asyncio.CancelledError:
                await self._stop(child, run)
                result = self._finish(call_id, child, progress, started, ctx, failure=None, aborted=True)
                raise ToolAborted(result) from None
            except Exception as err:
                result = self._finish(call_id, child, progress, started, ctx, failure=str(err) or type(err).__name__)
                return result
            result = self._finish(call_id, child, progress, started, ctx, failure=None)
            return result
        finally:
            unsubscribe()
            with contextlib.suppress(Exception):
                child.close()
            details = result.details if result is not None and isinstance(result.details, dict) else {}
            self.forward({"type": "subagent_end", "toolCallId": call_id, "childId": child.session_id,
                          "agent": spec.agent.name, "status": details.get("status", "aborted"),
                          "usage": details.get("usage"), "durationMs": details.get("durationMs")})

    async def _stop(self, child: ChildHandle, run: asyncio.Future[Any]) -> None:
        """The parent was aborted: abort the child and let it record that, within bounds."""
        with contextlib.suppress(BaseException):
            await within(child.abort(), STOP_SECONDS)
        if not run.done():
            with contextlib.suppress(BaseException):
                await within(asyncio.shield(run), STOP_SECONDS)
        if not run.done():
            run.cancel()
            with contextlib.suppress(BaseException):
                await within(run, STOP_SECONDS)

    @staticmethod
    def _elapsed(started: float) -> int:
        return int((time.monotonic() - started) * 1000)

    def _finish(self, call_id: str, child: ChildHandle, progress: TaskProgress, started: float, ctx: ToolContext, *,
                failure: str | None, aborted: bool = False) -> ToolResult:
        messages = child.messages()
        answer, last = final_answer(messages)
        stop = last.get("stopReason") if last is not None else None
        status = "completed"
        if aborted or stop == "aborted":
            status, text = "aborted", f"Task aborted: the '{progress.agent}' subagent was stopped."
        elif failure is not None:
            status, text = "error", f"Task failed: the '{progress.agent}' subagent stopped with an error: {failure}"
        elif last is None:
            status, text = "error", f"Task failed: the '{progress.agent}' subagent gave no answer."
        elif stop == "error":
            reason = str(last.get("errorMessage") or "unknown error")
            status, text = "error", f"Task failed: the '{progress.agent}' subagent's model call failed: {reason}"
        else:
            text = answer or "(The subagent finished without a text answer.)"
        details: dict[str, JsonValue] = progress.details(status, self._elapsed(started))
        details["usage"] = usage_of(child.history()).to_json()  # compacted turns were paid for too
        if status == "completed":
            text = self._bounded(text, call_id, ctx, details)
        elif answer and status == "aborted":
            details["partialAnswer"] = answer[:2000]
        return text_result(text, details=details, is_error=status != "completed")

    @staticmethod
    def _bounded(text: str, call_id: str, ctx: ToolContext, details: dict[str, JsonValue]) -> str:
        """Truncated like other tool output; the whole answer kept in a file the model can read."""
        cut = truncate_head(text)
        if not cut.truncated:
            return text
        safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in call_id)[:64]
        path: Path = output_dir(ctx.artifact_dir) / f"task-{safe}-answer.md"
        try:
            path.write_text(text, encoding="utf-8")
        except OSError as err:
            return cut.content + f"\n\n[Answer truncated: {cut.output_lines} of {cut.total_lines} lines shown; " \
                                 f"saving the whole answer failed: {err.strerror or err}]"
        details["fullOutputPath"] = str(path)
        details["truncation"] = {k: v for k, v in cut.as_details().items() if k != "content"}
        return cut.content + f"\n\n[Answer truncated: {cut.output_lines} of {cut.total_lines} lines shown. " \
                             f"Full answer: {path}]"
