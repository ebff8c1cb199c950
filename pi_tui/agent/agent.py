"""``Agent``: the agent loop plus the state that lives between runs.

It owns the message history, the steering/follow-up queues, the abort signal of the current
run and the listeners. It knows nothing of sessions, files or extensions: ``AgentSession``
builds the per-run ``AgentLoopConfig`` (model, hooks) through ``config_factory`` and listens to
the events. One run at a time; ``prompt()`` while running raises ``AgentBusyError``.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable, Sequence
from typing import Any

from pi_tui.agent.abort import AbortSignal
from pi_tui.agent.loop import run_agent_loop
from pi_tui.agent.queues import MessageQueue, QueueMode
from pi_tui.agent.types import AgentContext, AgentLoopConfig
from pi_tui.core.errors import AgentBusyError, PiError
from pi_tui.core.messages import AgentMessage

Listener = Callable[[dict[str, Any]], Any]


class Agent:
    def __init__(
        self,
        context: AgentContext,
        config_factory: Callable[[], AgentLoopConfig],
        *,
        steering_mode: QueueMode = "one-at-a-time",
        follow_up_mode: QueueMode = "one-at-a-time",
        on_queue_change: Callable[[], None] | None = None,
    ) -> None:
        self.context = context
        self._config_factory = config_factory
        self.steering = MessageQueue(steering_mode, on_change=on_queue_change)
        self.follow_ups = MessageQueue(follow_up_mode, on_change=on_queue_change)
        self._listeners: list[Listener] = []
        self._signal: AbortSignal | None = None
        self._idle = asyncio.Event()
        self._idle.set()
        self._streaming: AgentMessage | None = None
        """The reply being streamed (kept at the end of ``messages`` until its ``message_end``)."""

    # ------------------------------------------------------------------ state

    @property
    def messages(self) -> list[AgentMessage]:
        return self.context.messages

    @property
    def settled_messages(self) -> list[AgentMessage]:
        """``messages`` without the reply still streaming, as pi's ``state.messages`` (what RPC
        ``get_state.messageCount`` and ``get_messages`` report: a partial is not a message yet)."""
        messages = self.context.messages
        if messages and self._streaming is not None and messages[-1] is self._streaming:
            return messages[:-1]
        return messages

    @property
    def is_running(self) -> bool:
        return not self._idle.is_set()

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    # ------------------------------------------------------------------ runs

    async def prompt(self, messages: Sequence[AgentMessage]) -> list[AgentMessage]:
        return await self._run(list(messages), poll_steering_first=True)

    async def continue_(self) -> list[AgentMessage]:
        """Run again from the current history (after a retry or an overflow compaction)."""
        if not self.messages:
            raise PiError("No messages to continue from")
        if self.messages[-1]["role"] == "assistant":
            steering = self.steering.poll()
            if steering:
                return await self._run(steering, poll_steering_first=False)
            follow_ups = self.follow_ups.poll()
            if follow_ups:
                return await self._run(follow_ups, poll_steering_first=True)
            raise PiError("Cannot continue from message role: assistant")
        return await self._run([], poll_steering_first=True)

    async def _run(self, prompts: list[AgentMessage], *, poll_steering_first: bool) -> list[AgentMessage]:
        if self.is_running:
            raise AgentBusyError("Agent is already processing.")
        self._idle.clear()
        self._signal = AbortSignal()
        try:
            config = self._config_factory()
            config.get_steering_messages = self.steering.poll
            config.get_follow_up_messages = self.follow_ups.poll
            return await run_agent_loop(
                prompts, self.context, config, self._emit, self._signal, poll_steering_first=poll_steering_first
            )
        finally:
            self._signal = None
            self._idle.set()

    async def _emit(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind in ("message_start", "message_update"):
            self._streaming = event.get("message")
        elif kind in ("message_end", "agent_end"):
            self._streaming = None
        for listener in list(self._listeners):
            outcome = listener(event)
            if inspect.isawaitable(outcome):
                await outcome

    def abort(self) -> None:
        if self._signal is not None:
            self._signal.abort()

    @property
    def aborted(self) -> bool:
        return self._signal is not None and self._signal.aborted

    async def wait_for_idle(self) -> None:
        await self._idle.wait()
