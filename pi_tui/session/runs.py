"""Running the agent: ``prompt``, ``continue``, the queues, abort, and what each agent event does.

Serialization: the session's lock (``LiveState.lock``) is held while the agent runs (retries
included). The compaction runner takes the same lock for manual, threshold and overflow
compaction and for branch summaries, so none of them ever overlaps a run; the run never holds
the lock while it calls into the runner. Every finished message is recorded as it ends; a failed
write does not stop the run (the entry stays pending) and is raised once the run has settled.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, cast

from pi_tui.agent.agent import Agent
from pi_tui.core.errors import AgentBusyError, PiError, SessionWriteError
from pi_tui.core.messages import AgentMessage, ImageContent, now_ms, text_of, user_message
from pi_tui.session.background import BackgroundTasks
from pi_tui.session.compaction_runner import CompactionRunner
from pi_tui.session.hooks import SessionHooks, TurnEnded, run_hooks
from pi_tui.session.live_state import LiveState
from pi_tui.session.model_access import ModelAccess
from pi_tui.session.persistence import save_message
from pi_tui.session.prompting import expand_prompt_text
from pi_tui.session.queue_mirror import QueueMirror
from pi_tui.session.retry_runner import RetryLoop, last_assistant_of
from pi_tui.session.system_prompt import SystemPrompt

if TYPE_CHECKING:  # not imported at run time: a session without extensions never loads them (start-up)
    from pi_tui.extensions.runner import ExtensionRunner

BUSY_TEXT = "Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue the message."
_FORWARDED_TO_EXTENSIONS = frozenset({
    "agent_start", "agent_end", "turn_start", "turn_end", "message_start", "message_update",
    "tool_execution_start", "tool_execution_update", "tool_execution_end",
})


class Runs:
    def __init__(
        self, state: LiveState, agent: Agent, *, models: ModelAccess, prompt: SystemPrompt, retry: RetryLoop,
        compaction: CompactionRunner, hooks: SessionHooks, background: BackgroundTasks,
        extensions: ExtensionRunner | None, start: Callable[[], Awaitable[None]],
        flush_pending_bash: Callable[[], None], emit: Callable[[dict[str, Any]], None],
    ) -> None:
        self._state = state
        self._agent = agent
        self._models = models
        self._prompt = prompt
        self._retry = retry
        self._compaction = compaction
        self._hooks = hooks
        self._background = background
        self._extensions = extensions
        self._start = start
        self._flush_pending_bash = flush_pending_bash
        self._emit = emit
        self.queue = QueueMirror(emit)
        self._write_error: SessionWriteError | None = None

    @property
    def is_streaming(self) -> bool:
        return self._agent.is_running or self._retry.retrying

    def _notify(self, message: str, level: str) -> None:
        self._emit({"type": "notify", "message": message, "level": level})

    # ------------------------------------------------------------------ prompting

    async def prompt(
        self, text: str, *, images: Sequence[ImageContent] = (), streaming_behavior: str | None = None,
        source: str = "interactive",
    ) -> None:
        await self._start()
        extensions, state = self._extensions, self._state
        if text.startswith("/") and extensions is not None and await extensions.execute_command(text):
            return
        if self.is_streaming:
            if streaming_behavior not in ("steer", "followUp"):
                raise AgentBusyError(BUSY_TEXT)
            (self.steer if streaming_behavior == "steer" else self.follow_up)(text)
            return
        expanded = await expand_prompt_text(text, list(images), extensions=extensions, resources=state.resources,
                                            settings=state.settings, notify=self._notify, source=source)
        if expanded is None:
            return
        text, image_list = expanded
        model = self._models.require_model()
        self._models.check_credentials(model)
        await run_hooks(self._hooks.before_prompt, text, self._notify, "A before-prompt hook")
        await self._compaction.check_before_prompt()
        messages: list[AgentMessage] = [user_message(text, images=image_list)]
        self._prompt.rebuild()  # from disk, so before_agent_start sees the current one
        override = None
        if extensions is not None and extensions.has_handlers("before_agent_start"):
            options = self._system_prompt_options()
            answer = await extensions.emit_before_agent_start(text, image_list, state.base_system_prompt, options)
            messages.extend(answer.messages)
            override = answer.system_prompt
        await self._run(lambda: self._agent.prompt(messages), override, rebuild=False)

    async def continue_(self) -> None:
        self._models.require_model()
        await self._run(self._agent.continue_, None)

    async def continue_if_idle(self) -> bool:
        if self.is_streaming or not self._can_continue():
            return False
        self._models.require_model()
        return await self._run(self._agent.continue_, None, run_if=self._can_continue)

    def _system_prompt_options(self) -> dict[str, Any] | None:
        options = getattr(self._state.resources, "system_prompt_options", None)
        if not callable(options):
            return None
        try:
            value = options(self._state.active_tools())
            return dict(value.to_event_dict()) if hasattr(value, "to_event_dict") else None
        except Exception:
            return None

    async def _run(
        self, start: Callable[[], Awaitable[Any]], system_prompt_override: str | None, *, rebuild: bool = True,
        run_if: Callable[[], bool] | None = None,
    ) -> bool:
        """Run, then report a failed session-file write (the run itself went on in memory)."""
        try:
            ran = await self._run_and_compact(start, system_prompt_override, rebuild=rebuild, run_if=run_if)
        finally:
            failed, self._write_error = self._write_error, None
        if failed is not None:
            raise failed
        return ran

    async def _run_and_compact(
        self, start: Callable[[], Awaitable[Any]], system_prompt_override: str | None, *, rebuild: bool,
        run_if: Callable[[], bool] | None,
    ) -> bool:
        state, agent = self._state, self._agent
        async with state.lock:
            if run_if is not None and not run_if():
                return False
            state.run_task = asyncio.current_task()
            self._flush_pending_bash()
            state.abort_requested = False
            self._retry.arm()
            if rebuild:
                self._prompt.rebuild()
            state.run_system_prompt = system_prompt_override or None
            agent.context.system_prompt = state.run_system_prompt or state.base_system_prompt
            agent.context.tools = state.active_tools()
            try:
                await start()
                await self._retry.run_while_needed()
            finally:
                state.run_system_prompt = None
                agent.context.system_prompt = state.base_system_prompt
                state.run_task = None
        # Compaction checks after the run (never under the lock). An overflow compaction asks
        # for one continue(); the runner itself refuses a second compact-and-retry. Steering or
        # follow-ups queued while a compaction ran are sent after it (§2.8 step 5), never left
        # sitting in the queue of an idle session.
        for _ in range(2):
            last = last_assistant_of(agent.messages)
            if last is None or state.abort_requested:
                return True
            if not await self._compaction.check_after_run(last) and not self._has_queued():
                return True
            async with state.lock:
                # Checked under the lock: a prompt sent during the compaction may have run first.
                # A silent overflow (a ``stop`` reply) also leaves an assistant last; pi's
                # continue() fails quietly there.
                if state.abort_requested or not self._can_continue():
                    return True
                self._prompt.rebuild()
                agent.context.system_prompt = state.base_system_prompt
                state.run_task = asyncio.current_task()
                try:
                    await agent.continue_()
                    await self._retry.run_while_needed()
                finally:
                    state.run_task = None
        return True

    def _can_continue(self) -> bool:
        messages = self._agent.messages
        if not messages:
            return False
        return messages[-1].get("role") != "assistant" or self._has_queued()

    def _has_queued(self) -> bool:
        return bool(len(self._agent.steering) or len(self._agent.follow_ups))

    # ------------------------------------------------------------------ queues and abort

    def steer(self, text: str) -> None:
        self._refuse_command_in_queue(text)
        self.queue.add("steer", text)
        self._agent.steering.push(user_message(text))

    def follow_up(self, text: str) -> None:
        self._refuse_command_in_queue(text)
        self.queue.add("followUp", text)
        self._agent.follow_ups.push(user_message(text))

    def clear_queues(self) -> tuple[list[str], list[str]]:
        self._agent.steering.clear()
        self._agent.follow_ups.clear()
        return self.queue.clear()

    def _refuse_command_in_queue(self, text: str) -> None:
        if text.startswith("/") and self._extensions is not None:
            name = text[1:].partition(" ")[0]
            if self._extensions.get_command(name) is not None:
                raise PiError(f'Extension command "/{name}" cannot be queued. Run it when the agent is idle.')

    def request_abort(self) -> None:
        state = self._state
        state.abort_requested = True
        state.aborts += 1
        self._retry.cancel()
        self._agent.abort()
        if self._compaction.is_compacting:
            self._compaction.abort()

    async def abort(self) -> None:
        self.request_abort()
        if asyncio.current_task() is self._state.run_task:
            return  # called from a hook the run awaits (an extension's ``await ctx.abort()``): waiting would deadlock
        await self._agent.wait_for_idle()

    async def compact(self, custom_instructions: str | None = None) -> Any:
        if self.is_streaming:
            await self.abort()
        if asyncio.current_task() is self._state.run_task:
            # From a hook the run awaits (an extension's ``await ctx.compact()``): the run holds the
            # lock, so compact once it has ended, as pi's fire-and-forget ``ctx.compact()`` does.
            self._background.schedule(_compact_quietly(self._compaction, custom_instructions))
            return None
        return await self._compaction.compact(custom_instructions)

    # ------------------------------------------------------------------ messages from extensions

    def send_message(self, message: dict[str, Any], *, trigger_turn: bool = False) -> None:
        fields: dict[str, Any] = {"role": "custom", "display": True, "timestamp": now_ms(), **message}
        custom = cast(AgentMessage, fields)
        if self.is_streaming:
            self._agent.steering.push(custom)
            return
        self._emit({"type": "message_start", "message": custom})
        self._agent.messages.append(custom)
        self._state.session_manager.append_custom_message_entry(
            fields["customType"], fields["content"], bool(fields.get("display", True)), fields.get("details")
        )
        self._emit({"type": "message_end", "message": custom})
        if trigger_turn:
            self._background.schedule_turn(self.continue_if_idle, what="Running the agent on an extension's message")

    def send_user_message(self, text: str) -> None:
        if self.is_streaming:
            self.follow_up(text)
        else:
            self._background.schedule_turn(lambda: self.prompt(text), what="Sending an extension's user message")

    # ------------------------------------------------------------------ agent events

    async def on_agent_event(self, event: dict[str, Any]) -> None:
        kind = event["type"]
        extensions = self._extensions
        if extensions is not None and kind in _FORWARDED_TO_EXTENSIONS and extensions.has_handlers(kind):
            payload = {k: v for k, v in event.items() if k != "type"}
            await extensions.emit(kind, payload)
        if kind == "message_start" and event["message"].get("role") == "user":
            self.queue.delivered(text_of(event["message"].get("content", "")))
        if kind == "turn_end" and self._hooks.turn_ended:
            turn = TurnEnded(message=event["message"], tool_results=list(event.get("toolResults") or []))
            await run_hooks(self._hooks.turn_ended, turn, self._notify, "A turn-end hook")
        if kind == "message_end":
            message = event["message"]
            failed = save_message(self._state.session_manager, message)
            if failed is not None and self._write_error is None:
                self._write_error = failed  # raised by _run once the run has settled
            if message.get("role") == "assistant" and message.get("stopReason") != "error":
                success = self._retry.succeeded()
                if success is not None:
                    self._emit(event)
                    self._emit(success)
                    return
        self._emit(event)


async def _compact_quietly(runner: CompactionRunner, custom_instructions: str | None) -> None:
    """A background compaction: its failures are already reported by ``compaction_end``."""
    try:
        await runner.compact(custom_instructions)
    except PiError:
        pass
