"""One assistant message: its thinking, text and tool calls, in content order.

Built either live from ``message_update`` deltas (``apply_stream_event``) or at once from a stored
message (history). Tool calls become ``ToolCallPanel`` children; the conversation keeps an index by
call id so ``tool_execution_*`` events find them.
"""

from __future__ import annotations

from typing import Any

from textual.containers import Vertical
from textual.widget import Widget

from pi_tui.modes.interactive.widgets.chat_items import ErrorBlock, ThinkingBlock
from pi_tui.modes.interactive.widgets.markdown_stream import StreamedMarkdown
from pi_tui.modes.interactive.widgets.tool_call import ToolCallPanel


def error_text(message: dict[str, Any], retries: int = 0) -> tuple[str, str | None] | None:
    """What pi shows under a failed message: ``Error: <msg>`` or ``Operation aborted``."""
    reason = message.get("stopReason")
    if reason == "aborted":
        if retries:
            return f"Aborted after {retries} retry attempt{'s' if retries > 1 else ''}", None
        return "Operation aborted", None
    if reason == "error":
        return f"Error: {message.get('errorMessage') or 'the provider returned an error'}", message.get("errorKind")
    return None


class AssistantMessageView(Vertical):
    DEFAULT_CSS = "AssistantMessageView { height: auto; }"

    def __init__(self, message: dict[str, Any] | None = None, *, show_thinking: bool = False,
                 expanded: bool = False, tool_results: dict[str, dict[str, Any]] | None = None) -> None:
        super().__init__(classes="assistant-message")
        self.show_thinking = show_thinking
        self.expanded = expanded
        self.blocks: dict[int, Widget] = {}
        self.panels: dict[str, ToolCallPanel] = {}
        self._stored = message
        self._stored_results = tool_results or {}
        self.finished = message is not None

    # ------------------------------------------------------------------ history

    def compose(self):  # type: ignore[no-untyped-def]
        message = self._stored
        if message is None:
            return
        for index, block in enumerate(message.get("content") or []):
            kind = block.get("type")
            if kind == "text" and block.get("text", "").strip():
                widget: Widget = StreamedMarkdown(block["text"])
            elif kind == "thinking" and block.get("thinking", "").strip():
                widget = ThinkingBlock(block["thinking"], shown=self.show_thinking)
            elif kind == "toolCall":
                widget = self._history_panel(block)
            else:
                continue
            self.blocks[index] = widget
            yield widget
        failure = error_text(message)
        if failure and not self.panels:
            yield ErrorBlock(failure[0], kind=failure[1])

    def _history_panel(self, call: dict[str, Any]) -> ToolCallPanel:
        panel = ToolCallPanel(call.get("id", ""), call.get("name", "?"), call.get("arguments") or {},
                              expanded=self.expanded, status="aborted")
        result = self._stored_results.get(call.get("id", ""))
        if result is not None:
            panel.finish(result, is_error=bool(result.get("isError")))
        self.panels[panel.call_id] = panel
        return panel

    # ------------------------------------------------------------------ streaming

    async def apply_stream_event(self, event: dict[str, Any]) -> ToolCallPanel | None:
        """Apply one ``assistantMessageEvent``; returns a tool panel when one was just created."""
        kind = event.get("type", "")
        index = int(event.get("contentIndex", -1))
        if kind == "text_delta":
            widget = self.blocks.get(index)
            if not isinstance(widget, StreamedMarkdown):
                widget = StreamedMarkdown()
                await self._add(index, widget)
            await widget.write(event.get("delta", ""))
        elif kind == "thinking_delta":
            widget = self.blocks.get(index)
            if not isinstance(widget, ThinkingBlock):
                widget = ThinkingBlock(shown=self.show_thinking)
                await self._add(index, widget)
            widget.append(event.get("delta", ""))
        elif kind in ("text_end",):
            widget = self.blocks.get(index)
            if isinstance(widget, StreamedMarkdown):
                await widget.finish()
        elif kind in ("toolcall_start", "toolcall_delta", "toolcall_end"):
            return await self._tool_event(kind, index, event)
        return None

    async def _tool_event(self, kind: str, index: int, event: dict[str, Any]) -> ToolCallPanel | None:
        call = event.get("toolCall")
        if call is None:
            content = (event.get("partial") or {}).get("content") or []
            call = content[index] if 0 <= index < len(content) else {}
        panel = self.blocks.get(index)
        created = None
        if not isinstance(panel, ToolCallPanel):
            panel = ToolCallPanel(call.get("id", f"call-{index}"), call.get("name", "?"),
                                  call.get("arguments") or {}, expanded=self.expanded)
            await self._add(index, panel)
            self.panels[panel.call_id] = panel
            created = panel
        elif isinstance(call.get("arguments"), dict):
            panel.set_args(call["arguments"])
        return created

    async def _add(self, index: int, widget: Widget) -> None:
        self.blocks[index] = widget
        later = [i for i in self.blocks if i > index and self.blocks[i].is_mounted]
        if later:
            await self.mount(widget, before=self.blocks[min(later)])
        else:
            await self.mount(widget)

    async def finish(self, message: dict[str, Any], *, retries: int = 0) -> None:
        self.finished = True
        for widget in self.blocks.values():
            if isinstance(widget, StreamedMarkdown):
                await widget.finish()
        # Fill in what the stream may not have delivered (a provider that sends no deltas).
        for index, block in enumerate(message.get("content") or []):
            if index in self.blocks:
                continue
            if block.get("type") == "text" and block.get("text", "").strip():
                await self._add(index, StreamedMarkdown(block["text"]))
            elif block.get("type") == "toolCall":
                await self._tool_event("toolcall_end", index, {"toolCall": block})
        failure = error_text(message, retries)
        if failure:
            if message.get("stopReason") == "aborted":
                for panel in self.panels.values():
                    panel.mark_aborted()
            await self.mount(ErrorBlock(failure[0], kind=failure[1]))

    # ------------------------------------------------------------------ toggles

    def set_show_thinking(self, shown: bool) -> None:
        self.show_thinking = shown
        for widget in self.blocks.values():
            if isinstance(widget, ThinkingBlock):
                widget.set_shown(shown)

    def set_expanded(self, expanded: bool) -> None:
        self.expanded = expanded
        for panel in self.panels.values():
            panel.set_expanded(expanded)
