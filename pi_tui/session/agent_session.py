"""``AgentSession``: the one stateful object the modes and the SDK talk to — a composition root.

It creates one ``LiveState`` (what the session *is*: file, model, thinking level, tools,
resources, system prompt, the run's abort bookkeeping) and the collaborators that act on it,
each given what it needs and nothing more; then it delegates. Who does what:

* ``ModelAccess`` (model_access.py) — providers, keys, "is a model usable";
* ``SystemPrompt`` (system_prompt.py) — resources reloaded, the base prompt rebuilt;
* ``Lifecycle`` (lifecycle.py) — ``start``/``reload`` for extensions, diagnostics;
* ``RunConfig`` (run_config.py) — the agent loop's configuration and hook chain per run;
* ``Runs`` (runs.py) — prompt, continue, queues, abort, what each agent event does;
* ``RetryLoop`` (retry_runner.py) — automatic retries inside a run;
* ``CompactionRunner`` behind a ``CompactionPort`` — compaction, branch summaries, pipeline;
* ``SessionControl`` (session_control.py) — model, thinking, name, tools, history changes;
* ``SessionReplacer`` (replacement.py) — new, resume, fork, tree navigation;
* ``UserBash`` (user_bash.py) — ``!cmd``; ``BackgroundTasks`` — work nobody awaits;
* ``SessionHooks`` (hooks.py) — where checkpoints, permissions, MCP and subagents plug in.

Collaborators never import this module; what one needs of another it receives as a bound
method. Construction is ``pi_tui.sdk.create_agent_session``; the API is the table in
docs/internals.md.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pi_tui.agent.agent import Agent
from pi_tui.agent.queues import queue_modes
from pi_tui.agent.types import (
    AfterToolCall,
    AgentContext,
    AgentLoopConfig,
    BeforeToolCall,
    PrepareRequest,
    TransformContext,
)
from pi_tui.core.messages import AgentMessage, BashExecutionMessage, ImageContent, ThinkingLevel
from pi_tui.core.provider import CompletionRequest, ModelInfo, Provider, ToolSpec
from pi_tui.core.redact import Redactor
from pi_tui.core.session.manager import SessionManager
from pi_tui.core.tool import Tool
from pi_tui.extensions.ui import ExtensionUIContext
from pi_tui.session.background import BackgroundTasks
from pi_tui.session.compaction_port import CompactionPort
from pi_tui.session.compaction_runner import CompactionRunner
from pi_tui.session.event_hub import EventHub, Listener
from pi_tui.session.forwarded import Forwarded
from pi_tui.session.hooks import SessionHooks
from pi_tui.session.lifecycle import DiscoveredPaths, Lifecycle
from pi_tui.session.live_state import LiveState
from pi_tui.session.model_access import ModelAccess
from pi_tui.session.redaction import known_secrets
from pi_tui.session.replacement import FreshStart, SessionReplacer
from pi_tui.session.retry import Clock, SystemClock
from pi_tui.session.retry_runner import RetryLoop
from pi_tui.session.run_config import RunConfig
from pi_tui.session.runs import BUSY_TEXT, Runs
from pi_tui.session.session_control import SessionControl
from pi_tui.session.state import ContextUsage, RequestPreview, SessionState, usage_totals
from pi_tui.session.system_prompt import PromptBuilder, SystemPrompt
from pi_tui.session.user_bash import UserBash
from pi_tui.session.views import context_usage

if TYPE_CHECKING:  # not imported at run time: a session without extensions never loads them (start-up)
    from pi_tui.extensions.runner import ExtensionRunner
    from pi_tui.extensions.ui import ExtensionUI

__all__ = ["BUSY_TEXT", "AgentSession", "Listener"]


class AgentSession:
    # Attributes kept by a part; reading or assigning them here reaches that part.
    cwd: Forwarded[Path] = Forwarded("_state")
    session_manager: Forwarded[SessionManager] = Forwarded("_state")
    settings: Forwarded[Any] = Forwarded("_state")
    resources: Forwarded[Any] = Forwarded("_state")
    redactor: Forwarded[Redactor] = Forwarded("_state")
    lock: Forwarded[asyncio.Lock] = Forwarded("_state")
    base_system_prompt: Forwarded[str] = Forwarded("_state")
    last_request: Forwarded[CompletionRequest | None] = Forwarded("_state")
    file_access: Forwarded[Any] = Forwarded("_state")
    one_shot: Forwarded[bool] = Forwarded("_state")
    sandbox: Forwarded[Any] = Forwarded("_state")  # what bash and !cmd run inside (the permission gate)
    all_tools: Forwarded[dict[str, Tool]] = Forwarded("_state")  # every tool by name, active or not
    model_registry: Forwarded[Any] = Forwarded("_models")
    project_trust: Forwarded[Any] = Forwarded("_lifecycle")
    fresh_start: Forwarded[FreshStart | None] = Forwarded("_replacer")
    replacement_cancelled: Forwarded[bool] = Forwarded("_replacer", "cancelled")
    transform_context: Forwarded[TransformContext | None] = Forwarded("hooks")
    convert_to_llm: Forwarded[Callable[[list[AgentMessage]], list[Any]] | None] = Forwarded("hooks")
    prepare_request: Forwarded[PrepareRequest | None] = Forwarded("hooks")
    before_tool_call: Forwarded[BeforeToolCall | None] = Forwarded("hooks")
    after_tool_call: Forwarded[AfterToolCall | None] = Forwarded("hooks")
    # Tests and benchmarks reach these by their old private names.
    _model: Forwarded[ModelInfo | None] = Forwarded("_state", "model")
    _system_prompt_builder: Forwarded[PromptBuilder | None] = Forwarded("_system_prompt", "builder")
    _listeners: Forwarded[list[Listener]] = Forwarded("_events", "listeners")
    mcp: Any = None
    """The MCP servers' manager (``pi_tui.mcp.manager.McpManager``) the SDK attached, or None."""
    checkpoints: Any = None
    """``pi_tui.checkpoints.Checkpoints`` (files follow the session tree) the SDK attached, or None."""
    last_restore: dict[str, Any] | None = None
    """What the last ``fork(restore_files=True)`` did to the files (None: cancelled)."""

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
        system_prompt_builder: PromptBuilder | None = None,
        check_credentials: bool = True,
    ) -> None:
        all_tools = {t.name: t for t in tools}
        self._state = state = LiveState(
            cwd=cwd, session_manager=session_manager, settings=settings, resources=resources, model=model,
            thinking_level=thinking_level, redactor=Redactor(known_secrets(model_registry, api_key, os.environ)),
            all_tools=all_tools, active_tool_names=list(active_tools) if active_tools is not None else list(all_tools),
        )
        self.clock: Clock = clock or SystemClock()
        self.extensions = extensions
        self.hooks = SessionHooks()
        """Extension points for the collaborators ``sdk.py`` attaches (``hooks.py``)."""
        self.permissions: Any = None
        """The permission gate (``permissions.gate.PermissionGate``) the SDK attached, or None (as pi)."""
        self.todos: Any = None
        """The ``todo`` tool's tracker (``subagents.todo_tracker.TodoTracker``) when the tool exists."""
        self.extension_ui: ExtensionUI | None = None
        """The mode's dialogs behind ``ctx.ui`` (TUI screens, RPC requests); None in print and JSON
        mode and in an SDK session nobody gave one, where dialogs answer "cancelled" at once."""
        self._events = events = EventHub()
        self._models = models = ModelAccess(state, provider_factory=provider_factory, model_registry=model_registry,
                                            api_key=api_key, check_credentials=check_credentials)
        paths = DiscoveredPaths(resource_loader)
        self._system_prompt = prompt = SystemPrompt(state, load=paths.load if resource_loader is not None else None,
                                                    builder=system_prompt_builder, notify=self.notify)
        self._lifecycle = lifecycle = Lifecycle(state, paths, self.hooks, extensions=extensions,
                                                model_registry=model_registry, rebuild_system_prompt=prompt.rebuild,
                                                notify=self.notify)
        self.background = background = BackgroundTasks(state, extensions=extensions, notify=self.notify)
        context = AgentContext(system_prompt="", messages=list(session_manager.build_session_context().messages))
        steering, follow_up = queue_modes(settings)
        self.agent = agent = Agent(context, self._loop_config, steering_mode=steering, follow_up_mode=follow_up)
        self._control = control = SessionControl(state, agent, emit=events.emit, rebuild_system_prompt=prompt.rebuild,
                                                 tell_extensions=background.tell_extensions)
        port = CompactionPort(state, agent, models, extensions=extensions, emit=events.emit, subscribe=events.subscribe,
                              replace_messages=control.replace_messages,
                              pipeline_summarized=self.hooks.pipeline_summarized)
        self.compaction_runner = runner = CompactionRunner(port)
        extension_hooks = None
        if extensions is not None:  # imported only when there are extensions (start-up time)
            from pi_tui.extensions.agent_hooks import AgentHooks

            extension_hooks = AgentHooks(extensions)
        self._run_config = RunConfig(state, models, self.hooks, extensions=extensions, extension_hooks=extension_hooks,
                                     reducer=runner.prepare_request_messages, emit=events.emit,
                                     before_request=runner.compact_before_request)
        self._user_bash = user_bash = UserBash(state, extensions=extensions, emit=events.emit,
                                               is_streaming=lambda: self.is_streaming, record=self._record)
        self._retry = retry = RetryLoop(state, agent, clock=self.clock, emit=events.emit)
        self._runs = runs = Runs(state, agent, models=models, prompt=prompt, retry=retry, compaction=runner,
                                 hooks=self.hooks, background=background, extensions=extensions,
                                 start=lifecycle.start, flush_pending_bash=user_bash.flush_pending, emit=events.emit)
        self._replacer = SessionReplacer(state, lifecycle, self.hooks, extensions=extensions,
                                         resolve_model=models.resolve, abort=runs.abort,
                                         flush_pending_bash=user_bash.flush_pending, clear_queues=runs.clear_queues,
                                         replace_messages=control.replace_messages, navigate=runner.navigate_tree,
                                         notify=self.notify)
        agent.subscribe(runs.on_agent_event)
        prompt.rebuild(reload=False)  # the resources were just loaded

    def _loop_config(self) -> AgentLoopConfig:
        return self._run_config.loop_config()

    def _record(self, message: AgentMessage) -> None:
        self.agent.messages.append(message)
        self._state.session_manager.append_message(message)

    def _context_strategy(self) -> str:  # tests compare it with what the runner did
        return self._run_config.context_strategy()

    # ------------------------------------------------------------------ model and tools

    def provider_for(self, model: ModelInfo) -> Provider:
        return self._models.provider_for(model)

    def api_key_for(self, model: ModelInfo) -> str | None:
        return self._models.api_key_for(model)

    def current_model(self) -> ModelInfo | None:
        return self._state.model

    @property
    def model(self) -> ModelInfo | None:
        return self._state.model

    @property
    def thinking_level(self) -> ThinkingLevel:
        return self._state.thinking_level

    @property
    def active_tools(self) -> list[Tool]:
        """The active tools, each behind the session's redaction (``redaction.py``)."""
        return self._state.active_tools()

    def set_model(self, model: ModelInfo, *, source: str = "set", thinking_level: str | None = None) -> None:
        """Switch the model as pi's ``setModel``/``cycleModel`` do: ``model_change`` is recorded,
        the model becomes the settings default, then the thinking level is set (and recorded,
        with ``thinking_level_changed``, only when it changes). That level is ``thinking_level``
        when given (a ``--models`` entry's ``:level``); else the current one, or, coming from a
        model without thinking (whose level is only ever ``off``), the settings default
        (``medium``); either way clamped to what the new model supports (§13.1). So switching
        to a reasoning model turns thinking on, as in pi. ``model_changed`` is pi-tui's own
        event (the TUI's footer); RPC does not send it, as pi has none."""
        self._control.set_model(model, source=source, thinking_level=thinking_level)

    def set_thinking_level(self, level: str) -> None:
        """Clamp ``level`` to the model (§13.1); when that changes the level, record a
        ``thinking_level_change``, emit ``thinking_level_changed`` and (as pi does) make it the
        settings' ``defaultThinkingLevel`` unless it is the ``off`` of a model without thinking."""
        self._control.set_thinking_level(level)

    def cycle_thinking_level(self) -> ThinkingLevel:
        return self._control.cycle_thinking_level()

    def set_session_name(self, name: str) -> None:
        self._control.set_session_name(name)

    def get_session_name(self) -> str | None:
        return self._state.session_manager.session_name

    def get_active_tools(self) -> list[str]:
        return [t.name for t in self.active_tools]

    def get_all_tools(self) -> list[str]:
        return list(self._state.all_tools)

    def set_active_tools(self, names: list[str]) -> None:
        self._control.set_active_tools(names)

    def replace_tool(self, tool: Tool) -> None:
        """Put ``tool`` in place of the tool of the same name, keeping whether it is active (ACP
        mode: ``bash`` run in the editor's terminal)."""
        self._control.replace_tool(tool)

    def add_tools(self, tools: Sequence[Tool], *, active: bool = True) -> list[str]:
        """Register tools that arrive late (MCP): appended after the others; see ``SessionControl``."""
        return self._control.add_tools(tools, active=active)

    # ------------------------------------------------------------------ events

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        return self._events.subscribe(listener)

    def emit(self, event: dict[str, Any]) -> None:
        """For the compaction runner and extensions: publish a session event."""
        self._events.emit(event)

    def notify(self, message: str, level: str = "info") -> None:
        self._events.emit({"type": "notify", "message": message, "level": level})

    # ------------------------------------------------------------------ runs

    @property
    def is_streaming(self) -> bool:
        return self._runs.is_streaming

    @property
    def is_compacting(self) -> bool:
        return self.compaction_runner.is_compacting

    def is_idle(self) -> bool:
        return not self.is_streaming and not self.is_compacting

    async def prompt(
        self, text: str, *, images: Sequence[ImageContent] = (), streaming_behavior: str | None = None,
        source: str = "interactive",
    ) -> None:
        """Expand and run ``text``; returns when the run (and its retries) has settled. ``source``
        is what the extension ``input`` event reports (``"interactive"``, ``"rpc"``,
        ``"extension"``; §10.2)."""
        await self._runs.prompt(text, images=images, streaming_behavior=streaming_behavior, source=source)

    async def continue_(self) -> None:
        """Run again from the current history (``continue()``)."""
        await self._runs.continue_()

    async def continue_if_idle(self) -> bool:
        """The continuation ``send_message(trigger_turn=True)`` schedules: checked when it runs,
        under the lock, so a prompt that ran first (and already answered) makes it a no-op
        instead of ``Cannot continue from message role: assistant``. True when it ran."""
        return await self._runs.continue_if_idle()

    def steer(self, text: str) -> None:
        self._runs.steer(text)

    def follow_up(self, text: str) -> None:
        self._runs.follow_up(text)

    def clear_queues(self) -> tuple[list[str], list[str]]:
        return self._runs.clear_queues()

    def request_abort(self) -> None:
        """Request the abort now without waiting (an extension's synchronous ``ctx.abort()``)."""
        self._runs.request_abort()

    async def abort(self) -> None:
        await self._runs.abort()

    async def compact(self, custom_instructions: str | None = None) -> Any:
        return await self._runs.compact(custom_instructions)

    async def navigate_tree(
        self, target_id: str, *, summarize: bool = False, custom_instructions: str | None = None,
        replace_instructions: bool = False, label: str | None = None, restore_files: bool = False,
    ) -> Any:
        """Move the leaf (§3); with ``restore_files`` the files follow (docs/checkpoints.md) and the
        result's ``files`` says what changed."""
        if restore_files:
            from pi_tui.session.checkpoint_hooks import navigate_restoring

            return await navigate_restoring(self, self.navigate_tree, target_id, summarize=summarize,
                                            custom_instructions=custom_instructions,
                                            replace_instructions=replace_instructions, label=label)
        return await self._replacer.navigate_tree(target_id, summarize=summarize, custom_instructions=custom_instructions,
                                                  replace_instructions=replace_instructions, label=label)

    # ------------------------------------------------------------------ lifecycle and system prompt

    async def start(self) -> None:
        """Tell extensions the session is up, once: ``session_start{reason:"startup"}`` then
        ``resources_discover{reason:"startup"}`` (whose paths are loaded at once)."""
        await self._lifecycle.start()

    async def reload(self) -> None:
        """``/reload``: settings, extension-contributed resource paths, skills, prompt templates
        and context files are read again."""
        await self._lifecycle.reload()

    def diagnostics(self) -> list[tuple[str, str]]:
        """Every problem found while setting up, as ``(source, message)``; each message names its
        file. Sources: ``settings``, ``resources`` (context files, skills, templates; current as
        of the last reload), ``models`` (models.json), ``session`` (the session file's load
        warnings), ``extensions`` (load failures) and whatever was added with
        ``add_diagnostic`` (the SDK adds ``model`` restore notes). Modes show them at startup
        and after ``/reload``."""
        return self._lifecycle.diagnostics()

    def startup_info(self) -> list[str]:
        """What was loaded that the user should know about, though nothing is wrong: a trusted
        project's code (what runs, and why it may) and a project SYSTEM.md that replaced the
        system prompt. Modes show it at startup (print/RPC: stderr; JSON: an info ``notify``)."""
        return self._lifecycle.startup_info()

    def add_diagnostic(self, source: str, message: str) -> None:
        """Record a start-up problem for ``diagnostics()`` (shown by every mode)."""
        self._lifecycle.add_diagnostic(source, message)

    def extension_of_resource(self, path: Path) -> Path | None:
        """The extension whose ``resources_discover`` returned ``path`` (a skill or prompt file),
        or a folder above it; None when no extension did."""
        return self._lifecycle.extension_of_resource(path)

    def rebuild_system_prompt(self, *, reload: bool = True) -> str:
        """Reload resources from disk (AGENTS.md, SYSTEM.md, skills …) and rebuild the base prompt;
        called before each run and after compaction."""
        return self._system_prompt.rebuild(reload=reload)

    def get_system_prompt(self) -> str:
        return self._system_prompt.current()

    # ------------------------------------------------------------------ replacing the session

    async def new_session(self, *, parent_session: str | None = None) -> bool:
        """``/new``; False when an extension cancelled it (``session_before_switch``). The new
        header's ``parentSession`` is ``parent_session`` when given (RPC ``new_session``,
        pi's ``newSession({parentSession})``), else the file being replaced."""
        return await self._replacer.new_session(parent_session=parent_session)

    async def switch_session(self, path: Path) -> bool:
        """``/resume``; False when an extension cancelled it (``session_before_switch``)."""
        return await self._replacer.switch_session(path)

    async def fork(self, entry_id: str, position: str = "before", *, restore_files: bool = False) -> str | None:
        """``/fork``: the selected text, or None (also when ``session_before_fork`` cancelled it;
        then ``replacement_cancelled`` is True). Only ``cancel`` is honoured (§13.1). With
        ``restore_files`` the files follow; what changed is then ``last_restore``."""
        if restore_files:
            from pi_tui.session.checkpoint_hooks import fork_restoring

            chosen, self.last_restore = await fork_restoring(self, self.fork, entry_id, position)
            return chosen
        return await self._replacer.fork(entry_id, position)

    # ------------------------------------------------------------------ for extensions

    def replace_messages(self, messages: list[AgentMessage]) -> None:
        """Rebuild the agent's history (after compaction or tree navigation)."""
        self._control.replace_messages(messages)

    def append_entry(self, custom_type: str, data: Any) -> str:
        return self._state.session_manager.append_custom_entry(custom_type, data)

    def set_label(self, entry_id: str, label: str | None) -> None:
        self._state.session_manager.append_label_change(entry_id, label)

    def send_message(self, message: dict[str, Any], *, trigger_turn: bool = False) -> None:
        self._runs.send_message(message, trigger_turn=trigger_turn)

    def send_user_message(self, text: str) -> None:
        self._runs.send_user_message(text)

    async def settle_background(self) -> None:
        """Until the work set going in the background has ended: an extension command's
        ``send_user_message`` turn, a ``trigger_turn`` message's turn, a compaction an extension
        asked for, extension notifications. A caller that reports a prompt's end (ACP's
        ``session/prompt`` answer, whose updates must all come before it) waits for these."""
        await self.background.settle()

    @property
    def has_ui(self) -> bool:
        return self.extension_ui is not None

    def set_extension_ui(self, ui: ExtensionUI | None) -> None:
        """Install (or with None remove) the mode's implementation of ``ExtensionUI``."""
        self.extension_ui = ui

    async def ask_user(self, title: str, options: Sequence[str], *, timeout_s: float | None = None) -> str | None:
        """One of ``options`` chosen by the person through the mode's dialogs; None when there is
        no UI, they cancelled or the time ran out. For collaborators that need a decision (a
        permission prompt): they receive this bound method, never the mode."""
        return await ExtensionUIContext(self.extension_ui, self.notify).select(title, options, timeout_s=timeout_s)

    # ------------------------------------------------------------------ user bash

    async def run_user_bash(self, command: str, *, exclude_from_context: bool = False) -> BashExecutionMessage:
        if self.checkpoints is None:
            return await self._user_bash.run(command, exclude_from_context=exclude_from_context)
        await self.checkpoints.before_change()  # a !cmd can change files
        message = await self._user_bash.run(command, exclude_from_context=exclude_from_context)
        if not self.is_streaming:  # recorded now: the snapshot is bound to its entry (in a run: at the turn's end)
            await self.checkpoints.after_change("bash")
        return message

    def abort_user_bash(self) -> None:
        self._user_bash.abort()

    def flush_pending_bash(self) -> None:
        """Record the ``!cmd`` results held back during a run (called before a prompt)."""
        self._user_bash.flush_pending()

    # ------------------------------------------------------------------ views

    @property
    def state(self) -> SessionState:
        manager, messages, queue = self._state.session_manager, self.agent.messages, self._runs.queue
        return SessionState(
            model=self._state.model, thinking_level=self._state.thinking_level, is_streaming=self.is_streaming,
            is_compacting=self.is_compacting, is_retrying=self._retry.retrying, steering=list(queue.steering),
            follow_up=list(queue.follow_up), session_file=manager.session_file, session_id=manager.session_id,
            session_name=manager.session_name, message_count=len(self.agent.settled_messages), totals=usage_totals(messages),
        )

    @property
    def messages(self) -> list[AgentMessage]:
        return self.agent.messages

    def get_context_usage(self) -> ContextUsage | None:
        """§2.2; see ``views.context_usage``."""
        return context_usage(self._state.model, self.agent.messages, self._state.session_manager.get_branch())

    def preview_request(self) -> RequestPreview:
        self.rebuild_system_prompt()
        return RequestPreview(
            system_prompt=self.get_system_prompt(),
            messages=self._run_config.convert_for_request(list(self.agent.messages)),
            tools=[ToolSpec(name=t.name, description=t.description, parameters=t.parameters) for t in self.active_tools],
            model=self._state.model,
        )

