"""``AgentSession`` state changes and session replacement (mixed into the class).

Model and thinking changes are persisted (§1.7: ``thinking_level_change`` only when the level
really changes); replacing the session (new, switch, fork) rebuilds the agent's state from the
new file and applies the start-up restore rules again (§13.1).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from pi_tui.core.errors import PiError
from pi_tui.core.messages import THINKING_LEVELS, AgentMessage, ThinkingLevel, empty_usage, now_ms
from pi_tui.core.provider import ModelInfo, ToolSpec
from pi_tui.core.session.manager import SessionManager
from pi_tui.core.tokens import calculate_context_tokens, estimate_context_tokens
from pi_tui.resources.loader import LoadedResources
from pi_tui.session.restore import (
    DEFAULT_THINKING_LEVEL,
    clamp_thinking_level,
    restore_model_and_thinking,
)
from pi_tui.session.session_base import SessionBase
from pi_tui.session.state import ContextUsage, RequestPreview, SessionState, usage_totals

if TYPE_CHECKING:
    from pi_tui.core.tool import Tool
    from pi_tui.extensions.ui import ExtensionUI


class SessionControlMixin(SessionBase):
    # ------------------------------------------------------------------ system prompt

    def rebuild_system_prompt(self, *, reload: bool = True) -> str:
        """Reload resources from disk (AGENTS.md, SYSTEM.md, skills …) and rebuild the base prompt;
        called before each run and after compaction."""
        if reload and self._resource_loader is not None:
            try:
                self.resources = self._load_resources()
            except Exception as err:
                self.emit({"type": "notify", "message": f"Reloading resources failed: {err}", "level": "warning"})
        if isinstance(self.resources, LoadedResources):  # context files: the model's share of its window
            self.resources.apply_context_budget(self._model.context_window if self._model is not None else None)
        if self._system_prompt_builder is not None:
            self.base_system_prompt = self._system_prompt_builder(self.resources, self.active_tools)
        elif self.resources is not None and hasattr(self.resources, "build_system_prompt"):
            self.base_system_prompt = self.resources.build_system_prompt(self.active_tools)
        return self.base_system_prompt

    def get_system_prompt(self) -> str:
        return self._run_system_prompt or self.base_system_prompt

    # ------------------------------------------------------------------ model and thinking

    def set_model(self, model: ModelInfo, *, source: str = "set", thinking_level: str | None = None) -> None:
        """Switch the model as pi's ``setModel``/``cycleModel`` do: ``model_change`` is recorded,
        the model becomes the settings default, then the thinking level is set (and recorded,
        with ``thinking_level_changed``, only when it changes). That level is ``thinking_level``
        when given (a ``--models`` entry's ``:level``); else the current one, or, coming from a
        model without thinking (whose level is only ever ``off``), the settings default
        (``medium``); either way clamped to what the new model supports (§13.1). So switching
        to a reasoning model turns thinking on, as in pi. ``model_changed`` is pi-tui's own
        event (the TUI's footer); RPC does not send it, as pi has none."""
        previous = self._model
        level = thinking_level if thinking_level is not None else self._thinking_level_for_switch()
        self._model = model
        self.session_manager.append_model_change(model.provider, model.id)
        self.emit({"type": "model_changed", "provider": model.provider, "modelId": model.id})
        setter = getattr(self.settings, "set_global", None)
        if callable(setter):
            setter("defaultProvider", model.provider)
            setter("defaultModel", model.id)
        self.set_thinking_level(level)
        self._tell_extensions("model_select", {
            "model": model.ref, "previousModel": previous.ref if previous else None, "source": source,
        })

    def _thinking_level_for_switch(self) -> str:
        if self._model is not None and self._model.reasoning:
            return self._thinking_level
        return getattr(self.settings, "default_thinking_level", None) or DEFAULT_THINKING_LEVEL

    def set_thinking_level(self, level: str) -> None:
        """Clamp ``level`` to the model (§13.1); when that changes the level, record a
        ``thinking_level_change``, emit ``thinking_level_changed`` and (as pi does) make it the
        settings' ``defaultThinkingLevel`` unless it is the ``off`` of a model without thinking."""
        clamped = clamp_thinking_level(level, self._model)
        if clamped == self._thinking_level:
            return
        previous = self._thinking_level
        self._thinking_level = clamped
        self.session_manager.append_thinking_level_change(clamped)
        setter = getattr(self.settings, "set_global", None)
        if callable(setter) and ((self._model is not None and self._model.reasoning) or clamped != "off"):
            setter("defaultThinkingLevel", clamped)
        self.emit({"type": "thinking_level_changed", "level": clamped})
        self._tell_extensions("thinking_level_select", {"level": clamped, "previousLevel": previous})

    def _tell_extensions(self, event: str, payload: dict[str, Any]) -> None:
        """A notification for extensions that nobody waits for (pi does not await these)."""
        if self.extensions is not None and self.extensions.has_handlers(event):
            self._schedule(self.extensions.emit(event, payload))

    def cycle_thinking_level(self) -> ThinkingLevel:
        levels = [lvl for lvl in THINKING_LEVELS if clamp_thinking_level(lvl, self._model) == lvl]
        if len(levels) <= 1:
            return self._thinking_level
        index = levels.index(self._thinking_level) if self._thinking_level in levels else -1
        self.set_thinking_level(levels[(index + 1) % len(levels)])
        return self._thinking_level

    def set_session_name(self, name: str) -> None:
        self.session_manager.append_session_info(name)
        self.emit({"type": "session_info_changed", "name": self.session_manager.session_name})

    def get_session_name(self) -> str | None:
        return self.session_manager.session_name

    # ------------------------------------------------------------------ tools

    def get_active_tools(self) -> list[str]:
        return [t.name for t in self.active_tools]

    def get_all_tools(self) -> list[str]:
        return list(self._all_tools)

    def set_active_tools(self, names: list[str]) -> None:
        self._active_tool_names = [n for n in names if n in self._all_tools]
        self.agent.context.tools = self.active_tools
        self.rebuild_system_prompt()

    def replace_tool(self, tool: Tool) -> None:
        """Put ``tool`` in place of the tool of the same name, keeping whether it is active (ACP
        mode: ``bash`` run in the editor's terminal)."""
        self._all_tools[tool.name] = tool
        self.agent.context.tools = self.active_tools

    # ------------------------------------------------------------------ messages for extensions

    def replace_messages(self, messages: list[AgentMessage]) -> None:
        """Rebuild the agent's history (after compaction or tree navigation)."""
        self.agent.context.messages[:] = list(messages)
        self.rebuild_system_prompt()

    def append_entry(self, custom_type: str, data: Any) -> str:
        return self.session_manager.append_custom_entry(custom_type, data)

    def set_label(self, entry_id: str, label: str | None) -> None:
        self.session_manager.append_label_change(entry_id, label)

    def notify(self, message: str, level: str = "info") -> None:
        self.emit({"type": "notify", "message": message, "level": level})

    # ------------------------------------------------------------------ extension UI

    extension_ui: ExtensionUI | None = None
    """The mode's dialogs behind ``ctx.ui`` (TUI screens, RPC requests); None in print and JSON
    mode and in an SDK session nobody gave one, where dialogs answer "cancelled" at once."""

    @property
    def has_ui(self) -> bool:
        return self.extension_ui is not None

    def set_extension_ui(self, ui: ExtensionUI | None) -> None:
        """Install (or with None remove) the mode's implementation of ``ExtensionUI``."""
        self.extension_ui = ui

    def send_message(self, message: dict[str, Any], *, trigger_turn: bool = False) -> None:
        fields: dict[str, Any] = {"role": "custom", "display": True, "timestamp": now_ms(), **message}
        custom = cast(AgentMessage, fields)
        if self.is_streaming:
            self.agent.steering.push(custom)
            return
        self.emit({"type": "message_start", "message": custom})
        self.agent.messages.append(custom)
        self.session_manager.append_custom_message_entry(
            fields["customType"], fields["content"], bool(fields.get("display", True)), fields.get("details")
        )
        self.emit({"type": "message_end", "message": custom})
        if trigger_turn:
            self._schedule_turn(self.continue_if_idle, what="Running the agent on an extension's message")

    def send_user_message(self, text: str) -> None:
        if self.is_streaming:
            self.follow_up(text)
        else:
            self._schedule_turn(lambda: self.prompt(text), what="Sending an extension's user message")

    def _schedule_turn(self, start: Callable[[], Awaitable[Any]], *, what: str) -> None:
        """A turn an extension asked for, run in the background. An abort between the request
        and the turn's start (ACP's session/cancel, Escape, a signal landing right after an
        extension command returned) means it never starts: the person cancelled it."""
        aborts_before = self._aborts

        async def turn() -> None:
            if self._aborts == aborts_before:
                await start()

        self._schedule(turn(), what=what)

    async def settle_background(self) -> None:
        """Until the work set going in the background has ended: an extension command's
        ``send_user_message`` turn, a ``trigger_turn`` message's turn, a compaction an extension
        asked for, extension notifications. A caller that reports a prompt's end (ACP's
        ``session/prompt`` answer, whose updates must all come before it) waits for these."""
        while self._background:
            await asyncio.wait(set(self._background))

    def _schedule(self, coro: Any, *, what: str = "A background session task") -> None:
        """Run ``coro`` in the background; outside an event loop (a plain script calling
        ``set_model`` before ``asyncio.run``) there is nothing to run it on, so it is dropped.
        No one awaits the task, so a failure becomes an error ``notify`` event naming ``what``
        (never "Task exception was never retrieved")."""
        import asyncio

        try:
            asyncio.get_running_loop()
        except RuntimeError:
            coro.close()
            return

        async def reported() -> None:
            try:
                await coro
            except Exception as err:
                self.emit({"type": "notify", "message": f"{what} failed: {err}", "level": "error"})

        task = asyncio.ensure_future(reported())
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    # ------------------------------------------------------------------ views

    @property
    def state(self) -> SessionState:
        return SessionState(
            model=self._model,
            thinking_level=self._thinking_level,
            is_streaming=self.is_streaming,
            is_compacting=self.is_compacting,
            is_retrying=self._retrying,
            steering=list(self._queue.steering),
            follow_up=list(self._queue.follow_up),
            session_file=self.session_manager.session_file,
            session_id=self.session_manager.session_id,
            session_name=self.session_manager.session_name,
            message_count=len(self.agent.messages),
            totals=usage_totals(self.agent.messages),
        )

    @property
    def messages(self) -> list[AgentMessage]:
        return self.agent.messages

    def get_context_usage(self) -> ContextUsage | None:
        """§2.2: None without a model (or a window ≤ 0). With a compaction on the branch and no
        good reply since, the tokens are unknown (``tokens``/``percent`` None): the kept
        messages would still report their pre-compaction usage."""
        if self._model is None or self._model.context_window <= 0:
            return None
        window = self._model.context_window
        if not self._usage_known_since_compaction():
            return ContextUsage(tokens=None, context_window=window, percent=None, estimated=False)
        estimate = estimate_context_tokens(self.agent.messages)
        return ContextUsage(
            tokens=estimate.tokens,
            context_window=window,
            percent=100.0 * estimate.tokens / window,
            estimated=estimate.trailing_tokens > 0 or estimate.usage_tokens == 0,
        )

    def _usage_known_since_compaction(self) -> bool:
        branch = self.session_manager.get_branch()
        compaction_at = next((i for i in range(len(branch) - 1, -1, -1) if branch[i].get("type") == "compaction"), None)
        if compaction_at is None:
            return True
        for entry in reversed(branch[compaction_at + 1:]):
            message = entry.get("message") if entry.get("type") == "message" else None
            if isinstance(message, dict) and message.get("role") == "assistant" \
                    and message.get("stopReason") not in ("error", "aborted"):
                return calculate_context_tokens(message.get("usage") or empty_usage()) > 0
        return False

    def preview_request(self) -> RequestPreview:
        self.rebuild_system_prompt()
        return RequestPreview(
            system_prompt=self.get_system_prompt(),
            messages=self._convert_for_request(list(self.agent.messages)),
            tools=[ToolSpec(name=t.name, description=t.description, parameters=t.parameters) for t in self.active_tools],
            model=self._model,
        )

    # ------------------------------------------------------------------ compaction and tree

    async def compact(self, custom_instructions: str | None = None) -> Any:
        runner = self.compaction_runner
        if runner is None:
            raise PiError("Compaction is not available in this build")
        if self.is_streaming:
            await self.abort()
        if asyncio.current_task() is self._run_task:
            # From a hook the run awaits (an extension's ``await ctx.compact()``): the run holds the
            # lock, so compact once it has ended, as pi's fire-and-forget ``ctx.compact()`` does.
            self._schedule(_compact_quietly(runner, custom_instructions))
            return None
        return await runner.compact(custom_instructions)

    async def navigate_tree(
        self, target_id: str, *, summarize: bool = False, custom_instructions: str | None = None,
        replace_instructions: bool = False, label: str | None = None, restore_files: bool = False,
    ) -> Any:
        """Move the leaf (§3); with ``restore_files`` the files follow (docs/checkpoints.md) and the
        result's ``files`` says what changed."""
        if restore_files:
            from pi_tui.session.checkpoint_hooks import navigate_restoring

            return await navigate_restoring(
                self, self.navigate_tree, target_id, summarize=summarize, custom_instructions=custom_instructions,
                replace_instructions=replace_instructions, label=label)
        runner = self.compaction_runner
        if runner is not None and hasattr(runner, "navigate_tree"):
            return await runner.navigate_tree(
                target_id, summarize=summarize, custom_instructions=custom_instructions,
                replace_instructions=replace_instructions, label=label,
            )
        async with self.lock:
            self.session_manager.branch(target_id)
            self.replace_messages(self.session_manager.build_session_context().messages)
        return None

    # ------------------------------------------------------------------ replacing the session

    def _adopt(self, manager: SessionManager, *, explicit_model: bool = False) -> None:
        if manager is not self.session_manager:
            self.session_manager.close()
        self.session_manager = manager
        default_level = getattr(self.settings, "default_thinking_level", "medium")
        model, level = self._model, None
        if self.fresh_start is not None and not manager.build_session_context().messages:
            # §13.1: an empty replacement (``/new``, a root fork) starts as at startup.
            fresh_model, level = self.fresh_start()
            model = fresh_model or self._model
        restored = restore_model_and_thinking(
            manager, model=model, model_explicit=explicit_model, thinking_level=level,
            default_thinking_level=default_level, resolve=self._resolve_model,
        )
        self._model = restored.model
        self._thinking_level = restored.thinking_level
        self.clear_queues()
        self.replace_messages(manager.build_session_context().messages)

    def _resolve_model(self, provider: str, model_id: str) -> ModelInfo | None:
        if self._model is not None and (self._model.provider, self._model.id) == (provider, model_id):
            return self._model
        if self.model_registry is None:
            return None
        try:
            found: ModelInfo = self.model_registry.resolve(f"{provider}/{model_id}", provider)
        except PiError:
            return None
        return found

    async def _replace(self, reason: str, make: Any) -> Any:
        """Shut the current session down for extensions, swap it (under the lock), restore, and
        start the new one (§13.8 ``session_shutdown`` / ``session_start``)."""
        await self.abort()
        previous = self.session_manager.session_file
        async with self.lock:
            self.flush_pending_bash()  # a !cmd held back during the aborted run belongs to this session
            outcome, manager = make()
            await self._lifecycle("session_shutdown", {"reason": reason, "targetSessionFile": _text(manager.session_file)})
            self._adopt(manager)
        self._started = True
        if self.checkpoints is not None:
            await self.checkpoints.on_start()
        await self._lifecycle("session_start", {"reason": reason, "previousSessionFile": _text(previous)})
        return outcome

    async def _cancelled_by_extension(self, event: str, payload: dict[str, Any]) -> bool:
        """``session_before_switch`` / ``session_before_fork``: may an extension veto it?
        The answer is also kept in ``replacement_cancelled`` (``fork`` returns None either way)."""
        cancelled = False
        if self.extensions is not None and self.extensions.has_handlers(event):
            cancelled = await self.extensions.emit_cancellable(event, payload)
        self.replacement_cancelled = cancelled
        return cancelled

    async def new_session(self, *, parent_session: str | None = None) -> bool:
        """``/new``; False when an extension cancelled it (``session_before_switch``). The new
        header's ``parentSession`` is ``parent_session`` when given (RPC ``new_session``,
        pi's ``newSession({parentSession})``), else the file being replaced."""
        if await self._cancelled_by_extension("session_before_switch", {"reason": "new"}):
            return False

        def make() -> tuple[None, SessionManager]:
            previous = self.session_manager.session_file
            parent = parent_session if parent_session is not None else (str(previous) if previous else None)
            self.session_manager.new_session(parent_session=parent)
            return None, self.session_manager

        await self._replace("new", make)
        return True

    async def switch_session(self, path: Path) -> bool:
        """``/resume``; False when an extension cancelled it (``session_before_switch``)."""
        target = Path(path)
        payload = {"reason": "resume", "targetSessionFile": str(target)}
        if await self._cancelled_by_extension("session_before_switch", payload):
            return False
        await self._replace("resume", lambda: (None, self._open_replacing_current(target)))
        return True

    def _open_replacing_current(self, path: Path) -> SessionManager:
        """Release the current file's lock before opening ``path``: resuming the session that is
        already open must not find it locked by ourselves. If the open fails, the current
        session takes its lock back and stays."""
        current = self.session_manager
        if current.session_file is None:  # in memory: no lock, and closing drops its artifacts
            return SessionManager.open(path, cwd=self.cwd)
        current.close()
        try:
            return SessionManager.open(path, cwd=self.cwd)
        except BaseException:
            try:
                current.relock()
            except PiError:  # taken meanwhile: its next write reports it; the open error matters now
                pass
            raise

    async def fork(self, entry_id: str, position: str = "before", *, restore_files: bool = False) -> str | None:
        """``/fork``: the selected text, or None (also when ``session_before_fork`` cancelled it;
        then ``replacement_cancelled`` is True). Only ``cancel`` is honoured (§13.1). With
        ``restore_files`` the files follow; what changed is then ``last_restore``."""
        if restore_files:
            from pi_tui.session.checkpoint_hooks import fork_restoring

            chosen, self.last_restore = await fork_restoring(self, self.fork, entry_id, position)
            return chosen
        if await self._cancelled_by_extension("session_before_fork", {"entryId": entry_id, "position": position}):
            return None

        def make() -> tuple[str | None, SessionManager]:
            result = self.session_manager.fork(entry_id, position)  # type: ignore[arg-type]
            return result.selected_text, self.session_manager

        selected: str | None = await self._replace("fork", make)
        return selected


async def _compact_quietly(runner: Any, custom_instructions: str | None) -> None:
    """A background compaction: its failures are already reported by ``compaction_end``."""
    try:
        await runner.compact(custom_instructions)
    except PiError:
        pass


def _text(path: Path | None) -> str | None:
    return str(path) if path is not None else None
