"""``AgentSession``: the one stateful orchestrator the modes and the SDK talk to.

It owns the agent (loop state and queues), the session file, the model and thinking level, the
resources that make the system prompt, the extensions, and the compaction runner; it turns the
agent's events into persisted entries and into ``SessionEvent``s for its subscribers.

Serialization: one ``asyncio.Lock`` (``self.lock``) is held while the agent runs (retries
included). The compaction runner takes the same lock for manual, threshold and overflow
compaction and for branch summaries, so none of them ever overlaps a run. The session never
holds the lock while it calls into the runner.

Construction is ``pi_tui.sdk.create_agent_session``; the API is the table in docs/internals.md.
State changes and replacing the session live in ``session_control.py``; the per-run hook chain
in ``run_config.py``.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from pi_tui.agent.agent import Agent
from pi_tui.agent.queues import QueueMode
from pi_tui.agent.types import (
    AfterToolCall,
    AgentContext,
    BeforeToolCall,
    PrepareRequest,
    TransformContext,
)
from pi_tui.core.errors import AgentBusyError, PiError, ProviderSetupError, SessionWriteError
from pi_tui.core.messages import (
    AgentMessage,
    AssistantMessage,
    ImageContent,
    ThinkingLevel,
    text_of,
    user_message,
)
from pi_tui.core.provider import CompletionRequest, ModelInfo, Provider
from pi_tui.core.redact import SECRET_HEADER, Redactor
from pi_tui.core.session.manager import SessionManager
from pi_tui.core.tool import Tool
from pi_tui.session.lifecycle import LifecycleMixin
from pi_tui.session.persistence import save_message
from pi_tui.session.prompting import expand_prompt_text
from pi_tui.session.provider_timeout import ProviderWithTimeout, settings_timeout_ms
from pi_tui.session.queue_mirror import QueueMirror
from pi_tui.session.redaction import RedactingProvider, RedactingTool, known_secrets
from pi_tui.session.retry import Clock, RetryState, SystemClock
from pi_tui.session.retry_runner import RetryMixin
from pi_tui.session.run_config import RunConfigMixin
from pi_tui.session.session_control import SessionControlMixin
from pi_tui.session.user_bash import UserBashMixin

if TYPE_CHECKING:
    from pi_tui.extensions.runner import ExtensionRunner

BUSY_TEXT = "Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue the message."
Listener = Callable[[dict[str, Any]], None]
_log = logging.getLogger(__name__)
_FORWARDED_TO_EXTENSIONS = frozenset({
    "agent_start", "agent_end", "turn_start", "turn_end", "message_start", "message_update",
    "tool_execution_start", "tool_execution_update", "tool_execution_end",
})


class AgentSession(RunConfigMixin, LifecycleMixin, SessionControlMixin, UserBashMixin, RetryMixin):
    def __init__(
        self,
        *,
        cwd: Path,
        session_manager: SessionManager,
        provider_factory: Callable[[ModelInfo], Provider],
        model: ModelInfo | None,
        thinking_level: ThinkingLevel,
        tools: Sequence[Tool] = (),
        active_tools: Sequence[str] | None = None,
        settings: Any = None,
        resources: Any = None,
        resource_loader: Callable[..., Any] | None = None,
        model_registry: Any = None,
        extensions: ExtensionRunner | None = None,
        api_key: str | None = None,
        clock: Clock | None = None,
        system_prompt_builder: Callable[[Any, Sequence[Tool]], str] | None = None,
        check_credentials: bool = True,
    ) -> None:
        self.cwd = cwd
        self.session_manager = session_manager
        self.settings = settings
        self.resources = resources
        self.model_registry = model_registry
        self.clock: Clock = clock or SystemClock()
        self.lock = asyncio.Lock()
        self._provider_factory = provider_factory
        self._providers: dict[tuple[str, str, str], Provider] = {}
        self._model = model
        self._thinking_level: ThinkingLevel = thinking_level
        self._api_key_override = api_key
        self.redactor = Redactor(known_secrets(model_registry, api_key, os.environ))
        """Every key this session knows; model calls' error texts pass through it (see
        ``redaction.py``), and the shell tools' environment drops variables holding them."""
        self._check_keys = check_credentials
        self._all_tools: dict[str, Tool] = {t.name: t for t in tools}
        self._active_tool_names = list(active_tools) if active_tools is not None else list(self._all_tools)
        self._resource_loader = resource_loader
        self._system_prompt_builder = system_prompt_builder
        self._listeners: list[Listener] = []
        self.extensions = extensions
        self._hooks = None
        if extensions is not None:  # imported only when there are extensions (start-up time)
            from pi_tui.extensions.agent_hooks import AgentHooks

            self._hooks = AgentHooks(extensions)
        self._queue = QueueMirror(self._notify_listeners)
        self._retry = RetryState()
        self._retry_cancel = asyncio.Event()
        self._retrying = False
        self._abort_requested = False
        self._run_task: asyncio.Task[Any] | None = None
        self._write_error: SessionWriteError | None = None
        self._started = False
        self._extra_skill_paths: list[Path] = []
        self._extra_prompt_paths: list[Path] = []
        self._extension_resource_origins: dict[Path, Path] = {}
        self._startup_notes: list[tuple[str, str]] = []
        self.fresh_start: Callable[[], tuple[ModelInfo | None, str | None]] | None = None
        """The model (None = keep the current) and CLI thinking level for an empty replacement
        session (§13.1); the SDK sets it from the CLI choices and the settings."""
        self.project_trust: Any = None
        """The project trust decision (``resources.trust.ProjectTrust``) the SDK made, or None."""
        self.file_access: Any = None
        """``core.tool.FileAccess`` the file tools use instead of the disk (ACP mode: the editor's
        buffers); None = the disk."""
        self.permissions: Any = None
        """The permission gate and bash sandbox (``permissions.gate.PermissionGate``) the SDK set
        up, or None: every tool call runs as in pi."""
        self.replacement_cancelled = False
        """Whether the last new/resume/fork was cancelled by an extension."""
        self._background: set[asyncio.Future[Any]] = set()
        self._aborts = 0
        """How many aborts were requested; a turn scheduled before one does not start after it."""
        self._pending_bash: list[AgentMessage] = []
        self._bash_abort = asyncio.Event()
        self.base_system_prompt = ""
        self.last_request: CompletionRequest | None = None
        self._run_system_prompt: str | None = None
        # Hooks settable from the SDK (see pi_tui.agent.types for their signatures).
        self.transform_context: TransformContext | None = None
        self.convert_to_llm: Callable[[list[AgentMessage]], list[Any]] | None = None
        self.prepare_request: PrepareRequest | None = None
        self.before_tool_call: BeforeToolCall | None = None
        self.after_tool_call: AfterToolCall | None = None
        context = AgentContext(system_prompt="", messages=list(session_manager.build_session_context().messages))
        steering, follow_up = self._queue_modes()
        self.agent = Agent(context, self._loop_config, steering_mode=steering, follow_up_mode=follow_up)
        self.agent.subscribe(self._on_agent_event)
        self.compaction_runner: Any = self._make_compaction_runner()
        self.rebuild_system_prompt(reload=False)  # the resources were just loaded

    # ------------------------------------------------------------------ parts and wiring

    def _queue_modes(self) -> tuple[QueueMode, QueueMode]:
        steering = getattr(self.settings, "steering_mode", "one-at-a-time")
        follow_up = getattr(self.settings, "follow_up_mode", "one-at-a-time")
        return ("all" if steering == "all" else "one-at-a-time", "all" if follow_up == "all" else "one-at-a-time")

    def _make_compaction_runner(self) -> Any:
        try:
            from pi_tui.session.compaction_runner import CompactionRunner
        except ImportError:
            return None
        return CompactionRunner(cast(Any, self))  # it sets nothing on the host; its Protocol is stricter

    def provider_for(self, model: ModelInfo) -> Provider:
        key = (model.provider, model.id, model.api)
        if key not in self._providers:
            self.redactor.add(*(v for name, v in model.headers.items() if SECRET_HEADER.search(name)))
            timed = ProviderWithTimeout(self._provider_factory(model), lambda: settings_timeout_ms(self.settings))
            self._providers[key] = RedactingProvider(timed, self.redactor)
        return self._providers[key]

    def api_key_for(self, model: ModelInfo) -> str | None:
        if self.model_registry is None:
            return self._api_key_override
        key: str | None = self.model_registry.api_key_for(model, self._api_key_override)
        self.redactor.add(key)  # a models.json literal, env name or !command: known from now on
        return key

    def current_model(self) -> ModelInfo | None:
        return self._model

    @property
    def model(self) -> ModelInfo | None:
        return self._model

    @property
    def thinking_level(self) -> ThinkingLevel:
        return self._thinking_level

    @property
    def active_tools(self) -> list[Tool]:
        """The active tools, each behind the session's redaction (``redaction.py``)."""
        return [RedactingTool(self._all_tools[n], self.redactor) for n in self._active_tool_names if n in self._all_tools]

    def _require_model(self) -> ModelInfo:
        if self._model is None:
            raise ProviderSetupError(
                "No model selected.\n\n" + self._setup_help() + "\n\nThen use /model to select a model."
            )
        return self._model

    def _setup_help(self) -> str:
        helper = getattr(self.model_registry, "_help", None)
        return helper() if callable(helper) else "Set --model provider/id, or defaultProvider/defaultModel in settings.json."

    def _check_credentials(self, model: ModelInfo) -> None:
        require = getattr(self.model_registry, "require_api_key", None)
        if self._check_keys and callable(require):
            require(model, self._api_key_override)

    # ------------------------------------------------------------------ events

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def emit(self, event: dict[str, Any]) -> None:
        """For the compaction runner and extensions: publish a session event."""
        self._notify_listeners(event)

    def _notify_listeners(self, event: dict[str, Any]) -> None:
        for listener in list(self._listeners):
            try:
                listener(event)
            except Exception as err:  # a broken listener must not break the run
                _log.warning("event listener failed on %s: %s", event.get("type"), err)

    async def _on_agent_event(self, event: dict[str, Any]) -> None:
        kind = event["type"]
        if self.extensions is not None and kind in _FORWARDED_TO_EXTENSIONS and self.extensions.has_handlers(kind):
            payload = {k: v for k, v in event.items() if k != "type"}
            await self.extensions.emit(kind, payload)
        if kind == "message_start" and event["message"].get("role") == "user":
            self._queue.delivered(text_of(event["message"].get("content", "")))
        if kind == "message_end":
            message = event["message"]
            failed = save_message(self.session_manager, message)
            if failed is not None and self._write_error is None:
                self._write_error = failed  # raised by _run once the run has settled
            if message.get("role") == "assistant" and message.get("stopReason") != "error":
                success = self._retry.succeeded()
                if success is not None:
                    self._notify_listeners(event)
                    self._notify_listeners(success)
                    return
        self._notify_listeners(event)

    # ------------------------------------------------------------------ prompting

    @property
    def is_streaming(self) -> bool:
        return self.agent.is_running or self._retrying

    def is_idle(self) -> bool:
        return not self.is_streaming and not self.is_compacting

    @property
    def is_compacting(self) -> bool:
        return bool(getattr(self.compaction_runner, "is_compacting", False))

    async def prompt(
        self, text: str, *, images: Sequence[ImageContent] = (), streaming_behavior: str | None = None,
        source: str = "interactive",
    ) -> None:
        """Expand and run ``text``; returns when the run (and its retries) has settled. ``source``
        is what the extension ``input`` event reports (``"interactive"``, ``"rpc"``,
        ``"extension"``; §10.2)."""
        await self.start()
        if await self._run_extension_command(text):
            return
        if self.is_streaming:
            if streaming_behavior not in ("steer", "followUp"):
                raise AgentBusyError(BUSY_TEXT)
            (self.steer if streaming_behavior == "steer" else self.follow_up)(text)
            return
        expanded = await expand_prompt_text(self, text, list(images), source=source)
        if expanded is None:
            return
        text, image_list = expanded
        model = self._require_model()
        self._check_credentials(model)
        await self._compaction_before_prompt()
        messages: list[AgentMessage] = [user_message(text, images=image_list)]
        self.rebuild_system_prompt()  # from disk, so before_agent_start sees the current one
        override = None
        if self.extensions is not None and self.extensions.has_handlers("before_agent_start"):
            options = self._system_prompt_options()
            answer = await self.extensions.emit_before_agent_start(text, image_list, self.base_system_prompt, options)
            messages.extend(answer.messages)
            override = answer.system_prompt
        await self._run(lambda: self.agent.prompt(messages), override, rebuild=False)

    async def continue_(self) -> None:
        """Run again from the current history (``continue()``)."""
        self._require_model()
        await self._run(self.agent.continue_, None)

    async def _run_extension_command(self, text: str) -> bool:
        if not text.startswith("/") or self.extensions is None:
            return False
        return await self.extensions.execute_command(text)

    def _system_prompt_options(self) -> dict[str, Any] | None:
        options = getattr(self.resources, "system_prompt_options", None)
        if not callable(options):
            return None
        try:
            value = options(self.active_tools)
            return dict(value.to_event_dict()) if hasattr(value, "to_event_dict") else None
        except Exception:
            return None

    async def continue_if_idle(self) -> bool:
        """The continuation ``send_message(trigger_turn=True)`` schedules: checked when it runs,
        under the lock, so a prompt that ran first (and already answered) makes it a no-op
        instead of ``Cannot continue from message role: assistant``. True when it ran."""
        if self.is_streaming or not self._can_continue():
            return False
        self._require_model()
        return await self._run(self.agent.continue_, None, run_if=self._can_continue)

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
        async with self.lock:
            if run_if is not None and not run_if():
                return False
            self._run_task = asyncio.current_task()
            self.flush_pending_bash()
            self._abort_requested = False
            self._retry_cancel.clear()  # here, not at the retry wait: an abort while the run winds down must count
            if rebuild:
                self.rebuild_system_prompt()
            self._run_system_prompt = system_prompt_override or None
            self.agent.context.system_prompt = self._run_system_prompt or self.base_system_prompt
            self.agent.context.tools = self.active_tools
            try:
                await start()
                await self._retry_while_needed()
            finally:
                self._run_system_prompt = None
                self.agent.context.system_prompt = self.base_system_prompt
                self._run_task = None
        # Compaction checks after the run (never under the lock). An overflow compaction asks
        # for one continue(); the runner itself refuses a second compact-and-retry. Steering or
        # follow-ups queued while a compaction ran are sent after it (§2.8 step 5), never left
        # sitting in the queue of an idle session.
        for _ in range(2):
            last = self._last_assistant()
            runner = self.compaction_runner
            if runner is None or last is None or self._abort_requested:
                return True
            if not await runner.check_after_run(last) and not self._has_queued():
                return True
            async with self.lock:
                # Checked under the lock: a prompt sent during the compaction may have run first.
                # A silent overflow (a ``stop`` reply) also leaves an assistant last; pi's
                # continue() fails quietly there.
                if self._abort_requested or not self._can_continue():
                    return True
                self.rebuild_system_prompt()
                self.agent.context.system_prompt = self.base_system_prompt
                self._run_task = asyncio.current_task()
                try:
                    await self.agent.continue_()
                    await self._retry_while_needed()
                finally:
                    self._run_task = None
        return True

    def _can_continue(self) -> bool:
        messages = self.agent.messages
        if not messages:
            return False
        return messages[-1].get("role") != "assistant" or self._has_queued()

    def _has_queued(self) -> bool:
        return bool(len(self.agent.steering) or len(self.agent.follow_ups))

    def _last_assistant(self) -> AssistantMessage | None:
        for message in reversed(self.agent.messages):
            if message.get("role") == "assistant":
                return message  # type: ignore[return-value]
            if message.get("role") == "user":
                return None
        return None

    async def _compaction_before_prompt(self) -> None:
        runner = self.compaction_runner
        if runner is not None and hasattr(runner, "check_before_prompt"):
            await runner.check_before_prompt()

    # ------------------------------------------------------------------ queues and abort

    def steer(self, text: str) -> None:
        self._refuse_command_in_queue(text)
        self._queue.add("steer", text)
        self.agent.steering.push(user_message(text))

    def follow_up(self, text: str) -> None:
        self._refuse_command_in_queue(text)
        self._queue.add("followUp", text)
        self.agent.follow_ups.push(user_message(text))

    def clear_queues(self) -> tuple[list[str], list[str]]:
        self.agent.steering.clear()
        self.agent.follow_ups.clear()
        return self._queue.clear()

    def _refuse_command_in_queue(self, text: str) -> None:
        if text.startswith("/") and self.extensions is not None:
            name = text[1:].partition(" ")[0]
            if self.extensions.get_command(name) is not None:
                raise PiError(f'Extension command "/{name}" cannot be queued. Run it when the agent is idle.')

    def request_abort(self) -> None:
        """Request the abort now without waiting (an extension's synchronous ``ctx.abort()``)."""
        self._abort_requested = True
        self._aborts += 1
        self._retry_cancel.set()
        self.agent.abort()
        runner = self.compaction_runner
        if runner is not None and getattr(runner, "is_compacting", False):
            runner.abort()

    async def abort(self) -> None:
        self.request_abort()
        if asyncio.current_task() is self._run_task:
            return  # called from a hook the run awaits (an extension's ``await ctx.abort()``): waiting would deadlock
        await self.agent.wait_for_idle()
