"""The chat screen's key actions (the ``app.*`` ids of the keymap, pi-behaviour.md §8.2).

``ChatScreen`` derives from ``KeyActionsScreen``; its priority bindings, generated from the
keymap, name these ``action_*`` methods. What they use of the chat screen is declared below.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from textual.actions import SkipAction
from textual.screen import Screen

if TYPE_CHECKING:
    from pi_tui.modes.interactive.chat_events import ChatEventRenderer
    from pi_tui.modes.interactive.screen_port import AppPort, SlashPort
    from pi_tui.modes.interactive.widgets.conversation import Conversation
    from pi_tui.modes.interactive.widgets.editor import PromptEditor

DOUBLE_PRESS_SECONDS = 0.5


class KeyActionsScreen(Screen[None]):
    """The key half of ``ChatScreen``."""

    if TYPE_CHECKING:  # provided by ChatScreen
        pi: AppPort
        session: Any
        held: list[str]
        _last_escape: float
        _last_clear: float
        _events_forced: bool | None

        @property
        def editor(self) -> PromptEditor: ...
        @property
        def conversation(self) -> Conversation: ...
        @property
        def renderer(self) -> ChatEventRenderer: ...
        @property
        def slash(self) -> SlashPort: ...
        def refresh_footer(self) -> None: ...
        def _apply_width(self, width: int) -> None: ...

    def _built_renderer(self) -> ChatEventRenderer | None:
        """The event renderer, or None before it exists: it needs the events pane and status
        lines, mounted just after the first frame, and keys typed ahead can arrive before them."""
        return self.__dict__.get("renderer")

    def _busy(self) -> bool:
        state = getattr(self.session, "state", None)
        renderer = self._built_renderer()
        return bool((renderer is not None and renderer.running) or (state is not None and (
            state.is_streaming or state.is_compacting or getattr(state, "is_retrying", False))))

    def action_paste_image(self) -> None:
        from pi_tui.modes.interactive.image_paste import paste_image

        self.run_worker(paste_image(self), group="paste-image", exclusive=True, exit_on_error=False)

    async def action_interrupt(self) -> None:
        if self.editor.cancel_jump():
            return
        menu = self.editor.menu
        if menu is not None and menu.display:
            menu.hide()
            return
        mcp = getattr(self.session, "mcp", None)
        if mcp is not None and mcp.stop_waiting():  # the first prompt goes on without the late servers
            return
        if self._busy() or any(w.is_running for w in self.workers if w.group == "agent"):
            self._restore_queues()
            await self.session.abort()
            return
        now = time.monotonic()
        if not self.editor.text and now - self._last_escape < DOUBLE_PRESS_SECONDS:
            self._last_escape = 0.0
            await self.slash.run("tree", "")
            return
        self._last_escape = now

    def _restore_queues(self) -> None:
        if self.session is None:
            return
        steering, follow = self.session.clear_queues()
        queued = [*steering, *follow, *self.held]
        self.held = []
        if queued:
            current = self.editor.text
            self.editor.set_text("\n\n".join([*queued, current] if current.strip() else queued))
        renderer = self._built_renderer()
        if renderer is not None:
            renderer.steering, renderer.follow_up = [], []
            renderer.refresh_queue()

    def action_dequeue(self) -> None:
        self._restore_queues()

    def action_copy_selection(self) -> None:
        """``tui.input.copy`` (ctrl+c, as pi): the editor's selection to the clipboard. Without a
        selection the key goes on to ``app.clear`` (the next binding of ctrl+c)."""
        text = self.editor.selected_text
        if not text:
            raise SkipAction()
        self.run_worker(self.copy_to_clipboard(text, "the selection"), group="clipboard", exit_on_error=False)

    async def copy_to_clipboard(self, text: str, what: str) -> None:
        """``text`` to the clipboard as pi does (``clipboard.copy_text``), then a notice."""
        import os

        from pi_tui.modes.interactive.clipboard import copy_text

        used = await copy_text(text, self.pi.write_to_terminal, os.environ)
        if not used:
            await self.conversation.add_notice(
                f"Could not copy {what}: no clipboard tool (wl-copy, xclip, xsel, pbcopy) worked and it is too "
                "long for the terminal's OSC 52", severity="warning")
            return
        how = "the terminal (OSC 52)" if used == ["osc52"] else used[0]
        await self.conversation.add_notice(f"Copied {what} to the clipboard ({how})", severity="success")

    def action_clear(self) -> None:
        now = time.monotonic()
        if now - self._last_clear < DOUBLE_PRESS_SECONDS:
            self.pi.exit()
            return
        self._last_clear = now
        self.editor.clear()

    def action_exit_if_empty(self) -> None:
        if self.editor.text:
            # Not empty: the key goes on to the editor, where ctrl+d is deleteCharForward.
            raise SkipAction()
        self.pi.exit()

    def action_suspend(self) -> None:
        # SIGTSTP on Unix (the shell's ``fg`` resumes); Textual makes it a no-op where it cannot.
        self.app.action_suspend_process()

    def action_cycle_thinking(self) -> None:
        if self.session is not None and getattr(self.session.state, "model", None) is not None:
            self.session.cycle_thinking_level()
            self.refresh_footer()

    def action_cycle_permission_mode(self) -> None:
        gate = getattr(self.session, "permissions", None) if self.session is not None else None
        if gate is None or gate.mode == "bypassPermissions":
            return  # no gate (SDK default) or --yolo: pi's behaviour, nothing to cycle
        from pi_tui.permissions.modes import next_mode

        gate.mode = next_mode(gate.mode, trusted=gate.trusted)
        self.refresh_footer()

    async def action_cycle_model_forward(self) -> None:
        await self._cycle_model(1)

    async def action_cycle_model_backward(self) -> None:
        await self._cycle_model(-1)

    async def _cycle_model(self, step: int) -> None:
        from pi_tui.modes.interactive.model_cycle import cycle_choices, next_choice

        if self.session is None:
            return
        try:
            choices, scoped = cycle_choices(self.session)
        except Exception as err:  # a broken models.json must not break a key
            await self.conversation.add_notice(f"Cannot list models: {err}", severity="error")
            return
        choice = next_choice(choices, getattr(self.session.state, "model", None), step)
        if choice is None:
            where = "in enabledModels" if scoped else "with credentials"
            text = f"Only one model {where}" if choices else f"No models {where}"
            await self.conversation.add_notice(text, severity="warning")
            return
        try:
            self.session.set_model(choice.model, source="cycle", thinking_level=choice.thinking_level)
        except Exception as err:
            await self.conversation.add_notice(f"Cannot use {choice.model.ref}: {err}", severity="error")
            return
        self.refresh_footer()
        level = getattr(self.session.state, "thinking_level", None)
        suffix = f" (thinking: {level})" if choice.model.reasoning and level else ""
        await self.conversation.add_notice(f"Switched to {choice.model.ref}{suffix}")

    async def action_external_editor(self) -> None:
        from textual.app import SuspendNotSupported

        from pi_tui.modes.interactive.external_editor import (
            ExternalEditorError,
            edit_text,
            editor_command,
        )

        try:
            command = editor_command()
            try:
                with self.app.suspend():
                    text = edit_text(self.editor.text, command)
            except SuspendNotSupported:
                # No terminal to hand over (headless runs): the editor runs without one.
                text = edit_text(self.editor.text, command)
        except ExternalEditorError as err:
            await self.conversation.add_notice(str(err), severity="warning")
            return
        self.editor.set_text(text)
        self.editor.focus()

    def action_toggle_tools(self) -> None:
        self.conversation.set_expanded(not self.conversation.expanded)

    def action_toggle_thinking(self) -> None:
        shown = not self.conversation.show_thinking
        self.conversation.set_show_thinking(shown)
        settings = getattr(self.session, "settings", None)
        if settings is not None and hasattr(settings, "set_global"):
            try:
                settings.set_global("hideThinkingBlock", not shown)
            except Exception:  # a read-only settings file must not break a toggle
                pass

    def action_toggle_events(self) -> None:
        from pi_tui.modes.interactive.widgets.events_pane import EventsPane

        panes = self.query(EventsPane)  # none yet in the instant before it is mounted
        shown = panes.first().display if panes else not self.has_class("-narrow")
        self._events_forced = not shown
        self._apply_width(self.size.width)

    async def action_select_model(self) -> None:
        await self.slash.run("model", "")

    async def action_open_tree(self) -> None:
        await self.slash.run("tree", "")

    async def action_fork(self) -> None:
        await self.slash.run("fork", "")

    async def action_open_resume(self) -> None:
        await self.slash.run("resume", "")

    async def action_new_session(self) -> None:
        await self.slash.run("new", "")

    async def action_open_hotkeys(self) -> None:
        await self.slash.run("hotkeys", "")
