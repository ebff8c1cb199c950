"""The conversation log: every block of the chat, newest at the bottom, rendered lazily.

Opening a long session must show its end at once, so history is mounted from the end in batches:
only the last ``HISTORY_BATCH`` messages become widgets; scrolling to the top (or clicking the
"earlier messages" line) mounts the batch before them. Tool results are paired with their calls in
one cheap pass over the plain dicts first, so a batch boundary never separates a call from its
result.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.containers import VerticalScroll
from textual.content import Content
from textual.widget import Widget
from textual.widgets import Static

# The block widgets (markdown, tool views) are imported where they are first built, not here:
# the empty conversation is part of the first frame, and their imports would delay it.
if TYPE_CHECKING:
    from pi_tui.modes.interactive.widgets.assistant_message import AssistantMessageView
    from pi_tui.modes.interactive.widgets.chat_items import Notice
    from pi_tui.modes.interactive.widgets.tool_call import ToolCallPanel

HISTORY_BATCH = 16
"""Messages mounted per batch: enough to fill a tall screen, cheap to lay out (tool-heavy
messages become many widgets)."""


class EarlierMessages(Static):
    """The top line while older messages are not mounted yet."""

    DEFAULT_CSS = "EarlierMessages { height: 1; }"

    def on_click(self) -> None:
        conversation = self.parent
        if isinstance(conversation, Conversation):
            self.run_worker(conversation.load_earlier(), exclusive=True, group="history")


class Conversation(VerticalScroll):
    DEFAULT_CSS = "Conversation { height: 1fr; }"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.show_thinking = False
        self.expanded = False
        self.tool_panels: dict[str, ToolCallPanel] = {}
        self.live: AssistantMessageView | None = None
        self._pending: list[dict[str, Any]] = []
        self._results: dict[str, dict[str, Any]] = {}
        self._earlier: EarlierMessages | None = None

    follow = True
    """Stay at the bottom as content grows, until the user scrolls up (and again once back down).

    Textual's ``anchor()`` is not used: in 8.2 it left the log unpainted after a burst of mounts
    in a real terminal (seen in tmux), so the conversation follows the end itself.
    """

    def watch_virtual_size(self) -> None:
        if self.follow:
            self.call_after_refresh(self.scroll_end, animate=False, immediate=True)

    # ------------------------------------------------------------------ adding blocks

    async def add(self, widget: Widget) -> Widget:
        await self.mount(widget)
        return widget

    async def add_notice(self, text: str, *, severity: str = "info") -> Notice:
        from pi_tui.modes.interactive.widgets.chat_items import Notice
        notice = Notice(text, severity=severity)
        await self.mount(notice)
        return notice

    async def start_assistant(self) -> AssistantMessageView:
        from pi_tui.modes.interactive.widgets.assistant_message import AssistantMessageView
        view = AssistantMessageView(show_thinking=self.show_thinking, expanded=self.expanded)
        self.live = view
        await self.mount(view)
        return view

    async def stream_event(self, event: dict[str, Any]) -> None:
        if self.live is None:
            await self.start_assistant()
        assert self.live is not None
        panel = await self.live.apply_stream_event(event)
        if panel is not None:
            self.tool_panels[panel.call_id] = panel

    async def finish_assistant(self, message: dict[str, Any], *, retries: int = 0) -> None:
        if self.live is None:
            await self.start_assistant()
        assert self.live is not None
        view = self.live
        self.live = None
        await view.finish(message, retries=retries)
        self.tool_panels.update(view.panels)

    async def tool_panel(self, call_id: str, name: str, args: dict[str, Any]) -> ToolCallPanel:
        """The panel for a call, created standalone if the stream never announced it."""
        panel = self.tool_panels.get(call_id)
        if panel is None:
            from pi_tui.modes.interactive.widgets.tool_call import ToolCallPanel

            panel = ToolCallPanel(call_id, name, args, expanded=self.expanded)
            self.tool_panels[call_id] = panel
            await self.mount(panel)
        return panel

    def repaint_images(self) -> None:
        """Tool panels with images draw them again (``terminal.showImages`` changed)."""
        from pi_tui.modes.interactive.widgets.tool_call import ToolCallPanel

        for panel in self.query(ToolCallPanel):
            if panel.has_images:
                panel.repaint()

    # ------------------------------------------------------------------ history

    async def clear_all(self) -> None:
        self.live = None
        self.tool_panels.clear()
        self._pending = []
        self._results = {}
        self._earlier = None
        await self.remove_children()

    async def load_history(self, messages: list[dict[str, Any]]) -> None:
        """Replace the log with ``messages``; only the last batch becomes widgets now."""
        await self.clear_all()
        self._results = {
            m["toolCallId"]: m for m in messages if m.get("role") == "toolResult" and m.get("toolCallId")
        }
        self._pending = [m for m in messages if m.get("role") != "toolResult"]
        await self._mount_batch(at_top=False)
        self.scroll_end(animate=False)

    async def load_earlier(self) -> None:
        if self._pending:
            await self._mount_batch(at_top=True)

    @property
    def unrendered_count(self) -> int:
        return len(self._pending)

    async def _mount_batch(self, *, at_top: bool) -> None:
        from pi_tui.modes.interactive.widgets.assistant_message import AssistantMessageView
        batch = self._pending[-HISTORY_BATCH:]
        del self._pending[-HISTORY_BATCH:]
        widgets = [w for m in batch if (w := self.widget_for(m)) is not None]
        for widget in widgets:
            if isinstance(widget, AssistantMessageView):
                self.tool_panels.update(widget.panels)
        if at_top and self.children:
            index = self.children.index(self._earlier) + 1 if self._earlier is not None else 0
            first = self.children[index] if index < len(self.children) else None
            if first is not None:
                await self.mount_all(widgets, before=first)
            else:
                await self.mount_all(widgets)
        else:
            await self.mount_all(widgets)
        if self._pending:
            label = Content.styled(
                f"▲ {len(self._pending):,} earlier messages — scroll up or click to show", "$text-muted"
            )
            if self._earlier is None:
                self._earlier = EarlierMessages(label)
                await self.mount(self._earlier, before=self.children[0] if self.children else None)
            else:
                self._earlier.update(label)
        elif self._earlier is not None:
            await self._earlier.remove()
            self._earlier = None
        for widget in widgets:
            if isinstance(widget, AssistantMessageView):
                self.tool_panels.update(widget.panels)

    def widget_for(self, message: dict[str, Any]) -> Widget | None:
        """The block for one stored message (None for roles the chat does not show)."""
        from pi_tui.core.messages import text_of
        from pi_tui.modes.interactive.widgets.assistant_message import AssistantMessageView
        from pi_tui.modes.interactive.widgets.chat_items import (
            BashOutputBlock,
            Notice,
            SummaryBlock,
            UserMessageView,
        )

        role = message.get("role")
        if role == "user":
            content = message.get("content", "")
            images = sum(1 for b in content if isinstance(b, dict) and b.get("type") == "image") \
                if isinstance(content, list) else 0
            return UserMessageView(text_of(content), images=images)
        if role == "assistant":
            return AssistantMessageView(message, show_thinking=self.show_thinking, expanded=self.expanded,
                                        tool_results=self._results)
        if role == "compactionSummary":
            return SummaryBlock("compaction", message.get("summary", ""),
                                tokens_before=message.get("tokensBefore"), expanded=self.expanded)
        if role == "branchSummary":
            return SummaryBlock("branch", message.get("summary", ""), expanded=self.expanded)
        if role == "bashExecution":
            return BashOutputBlock(message.get("command", ""), message.get("output", ""),
                                   exit_code=message.get("exitCode"),
                                   excluded=bool(message.get("excludeFromContext")), expanded=self.expanded)
        if role == "custom":
            if not message.get("display"):
                return None
            return Notice(f"[{message.get('customType', 'custom')}] {text_of(message.get('content', ''))}")
        if role == "toolResult":
            return None
        return None

    def on_mouse_scroll_up(self) -> None:
        self._maybe_load_earlier()

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        self.follow = new_value >= self.max_scroll_y - 1
        if new_value <= 0 < old_value:
            self._maybe_load_earlier()

    def _maybe_load_earlier(self) -> None:
        if self._pending and self.scroll_y <= 1:
            self.run_worker(self.load_earlier(), exclusive=True, group="history")

    # ------------------------------------------------------------------ toggles

    def set_show_thinking(self, shown: bool) -> None:
        from pi_tui.modes.interactive.widgets.assistant_message import AssistantMessageView
        from pi_tui.modes.interactive.widgets.chat_items import ThinkingBlock

        self.show_thinking = shown
        for view in self.query(AssistantMessageView):
            view.set_show_thinking(shown)
        for block in self.query(ThinkingBlock):
            block.set_shown(shown)

    def set_expanded(self, expanded: bool) -> None:
        from pi_tui.modes.interactive.widgets.chat_items import BashOutputBlock, SummaryBlock
        from pi_tui.modes.interactive.widgets.tool_call import ToolCallPanel

        self.expanded = expanded
        for panel in self.query(ToolCallPanel):
            panel.set_expanded(expanded)
        for block in self.query(SummaryBlock):
            block.set_expanded(expanded)
        for bash in self.query(BashOutputBlock):
            bash.set_expanded(expanded)
