"""Replacing the session (``/new``, ``/resume``, ``/fork``) and moving in its tree (``/tree``).

Replacing aborts the run, shuts the current session down for extensions, swaps the file under
the lock, rebuilds the agent's state from the new file and applies the start-up restore rules
again (§13.1, §13.8 ``session_shutdown`` / ``session_start``). Extensions may veto first
(``session_before_switch`` / ``session_before_fork``). The ``before_leaf_change`` hooks run
before the leaf moves (``hooks.py``: a snapshot before a restore).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pi_tui.core.errors import PiError
from pi_tui.core.messages import AgentMessage
from pi_tui.core.provider import ModelInfo
from pi_tui.core.session.manager import SessionManager
from pi_tui.session.hooks import SessionHooks, run_hooks
from pi_tui.session.lifecycle import Lifecycle
from pi_tui.session.live_state import LiveState
from pi_tui.session.restore import restore_model_and_thinking

if TYPE_CHECKING:  # not imported at run time: a session without extensions never loads them (start-up)
    from pi_tui.extensions.runner import ExtensionRunner

FreshStart = Callable[[], tuple[ModelInfo | None, str | None]]
TreeNavigator = Callable[..., Awaitable[Any]]


class SessionReplacer:
    def __init__(
        self, state: LiveState, lifecycle: Lifecycle, hooks: SessionHooks, *, extensions: ExtensionRunner | None,
        resolve_model: Callable[[str, str], ModelInfo | None], abort: Callable[[], Awaitable[None]],
        flush_pending_bash: Callable[[], None], clear_queues: Callable[[], object],
        replace_messages: Callable[[list[AgentMessage]], None], navigate: TreeNavigator,
        notify: Callable[[str, str], None],
    ) -> None:
        self._state = state
        self._lifecycle = lifecycle
        self._hooks = hooks
        self._extensions = extensions
        self._resolve_model = resolve_model
        self._abort = abort
        self._flush_pending_bash = flush_pending_bash
        self._clear_queues = clear_queues
        self._replace_messages = replace_messages
        self._navigate = navigate
        """The compaction runner's ``navigate_tree`` (it may summarize the branch left behind)."""
        self._notify = notify
        self.fresh_start: FreshStart | None = None
        """The model (None = keep the current) and CLI thinking level for an empty replacement
        session (§13.1); the SDK sets it from the CLI choices and the settings."""
        self.cancelled = False
        """Whether the last new/resume/fork was cancelled by an extension."""

    async def new_session(self, *, parent_session: str | None = None) -> bool:
        if await self._cancelled_by_extension("session_before_switch", {"reason": "new"}):
            return False
        state = self._state

        def make() -> tuple[None, SessionManager]:
            previous = state.session_manager.session_file
            parent = parent_session if parent_session is not None else (str(previous) if previous else None)
            state.session_manager.new_session(parent_session=parent)
            return None, state.session_manager

        await self._replace("new", make)
        return True

    async def switch_session(self, path: Path) -> bool:
        target = Path(path)
        payload = {"reason": "resume", "targetSessionFile": str(target)}
        if await self._cancelled_by_extension("session_before_switch", payload):
            return False
        await self._replace("resume", lambda: (None, self._open_replacing_current(target)))
        return True

    async def fork(self, entry_id: str, position: str = "before") -> str | None:
        if await self._cancelled_by_extension("session_before_fork", {"entryId": entry_id, "position": position}):
            return None
        await self._before_leaf_change(entry_id)
        state = self._state

        def make() -> tuple[str | None, SessionManager]:
            result = state.session_manager.fork(entry_id, position)  # type: ignore[arg-type]
            return result.selected_text, state.session_manager

        selected: str | None = await self._replace("fork", make)
        return selected

    async def navigate_tree(self, target_id: str, **options: Any) -> Any:
        await self._before_leaf_change(target_id)
        return await self._navigate(target_id, **options)

    async def _before_leaf_change(self, target_id: str) -> None:
        await run_hooks(self._hooks.before_leaf_change, target_id, self._notify, "A before-leaf-change hook")

    async def _replace(self, reason: str, make: Any) -> Any:
        await self._abort()
        state = self._state
        previous = state.session_manager.session_file
        async with state.lock:
            self._flush_pending_bash()  # a !cmd held back during the aborted run belongs to this session
            outcome, manager = make()
            target = str(manager.session_file) if manager.session_file is not None else None
            await self._lifecycle.emit("session_shutdown", {"reason": reason, "targetSessionFile": target})
            self._adopt(manager)
        await self._lifecycle.replaced(reason, previous)
        return outcome

    def _adopt(self, manager: SessionManager, *, explicit_model: bool = False) -> None:
        state = self._state
        if manager is not state.session_manager:
            state.session_manager.close()
        state.session_manager = manager
        default_level = getattr(state.settings, "default_thinking_level", "medium")
        model, level = state.model, None
        if self.fresh_start is not None and not manager.build_session_context().messages:
            # §13.1: an empty replacement (``/new``, a root fork) starts as at startup.
            fresh_model, level = self.fresh_start()
            model = fresh_model or state.model
        restored = restore_model_and_thinking(
            manager, model=model, model_explicit=explicit_model, thinking_level=level,
            default_thinking_level=default_level, resolve=self._resolve_model,
        )
        state.model = restored.model
        state.thinking_level = restored.thinking_level
        self._clear_queues()
        self._replace_messages(manager.build_session_context().messages)

    async def _cancelled_by_extension(self, event: str, payload: dict[str, Any]) -> bool:
        cancelled = False
        if self._extensions is not None and self._extensions.has_handlers(event):
            cancelled = await self._extensions.emit_cancellable(event, payload)
        self.cancelled = cancelled
        return cancelled

    def _open_replacing_current(self, path: Path) -> SessionManager:
        """Release the current file's lock before opening ``path``: resuming the session that is
        already open must not find it locked by ourselves. If the open fails, the current
        session takes its lock back and stays."""
        state = self._state
        current = state.session_manager
        if current.session_file is None:  # in memory: no lock, and closing drops its artifacts
            return SessionManager.open(path, cwd=state.cwd)
        current.close()
        try:
            return SessionManager.open(path, cwd=state.cwd)
        except BaseException:
            try:
                current.relock()
            except PiError:  # taken meanwhile: its next write reports it; the open error matters now
                pass
            raise
