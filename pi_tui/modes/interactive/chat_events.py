"""Session events → widget changes. The only place where the chat reacts to the agent.

``ChatEventRenderer.handle`` runs on the UI loop for each ``AgentEventReceived`` posted by the
bridge, in order. It touches only the widgets it is given (attributes down) and reports back to the
screen through two callbacks: refresh the footer, and the run's busy state.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pi_tui.core.messages import text_of
from pi_tui.core.terminal_text import printable
from pi_tui.modes.interactive.event_lines import EventLine, Severity, describe_event
from pi_tui.modes.interactive.widgets.chat_items import BashOutputBlock, ErrorBlock, SummaryBlock
from pi_tui.modes.interactive.widgets.conversation import Conversation
from pi_tui.modes.interactive.widgets.events_pane import EventsPane, EventsTicker
from pi_tui.modes.interactive.widgets.status import QueueView, WorkingStatus

WORKING = "Working..."
COMPACTING = {
    "manual": "Compacting context... (esc to cancel)",
    "threshold": "Auto-compacting... (esc to cancel)",
    "overflow": "Context overflow detected, Auto-compacting... (esc to cancel)",
}
RETRYING = "Retrying ({attempt}/{max}) in {{s}}s... (esc to cancel)"
MCP_WAITING = "Waiting for MCP servers: {names}… (Esc: go on without them)"
FOOTER_EVENTS = frozenset({
    "message_end", "agent_end", "compaction_end", "model_changed", "thinking_level_changed",
    "session_info_changed", "context_reduced", "turn_end", "mcp_server",
})


@dataclass(slots=True)
class ChatWidgets:
    conversation: Conversation
    events: EventsPane
    ticker: EventsTicker
    status: WorkingStatus
    queue: QueueView


class ChatEventRenderer:
    def __init__(self, widgets: ChatWidgets, *, on_footer: Callable[[], None],
                 held_messages: Callable[[], list[str]]) -> None:
        self.w = widgets
        self.on_footer = on_footer
        self.held_messages = held_messages
        self.running = False
        self.retry_attempts = 0
        self.steering: list[str] = []
        self.follow_up: list[str] = []
        self._compaction_tokens_before: int | None = None
        self.context_unknown = False
        """True after a compaction until the next answer reports real usage (footer shows "unknown")."""
        self.last_compaction_error: str | None = None
        """Shown once: the worker that called ``compact`` skips an error the event already showed."""

    async def handle(self, event: dict[str, Any]) -> None:
        kind = event.get("type", "")
        handler = getattr(self, f"_on_{kind}", None)
        if handler is not None:
            await handler(event)
        line = describe_event(event)
        if line is not None:
            stamp = self.w.events.record(line)
            self.w.ticker.show_line(line, stamp)
        if kind in FOOTER_EVENTS:
            self.on_footer()

    def note(self, title: str, detail: str = "", *, severity: Severity = "info") -> None:
        """A line in the events pane for something the app did itself (tree move, new session,
        a setup problem)."""
        line = EventLine(title, detail, severity)
        stamp = self.w.events.record(line)
        self.w.ticker.show_line(line, stamp)

    # ------------------------------------------------------------------ run lifecycle

    async def _on_agent_start(self, event: dict[str, Any]) -> None:
        self.running = True
        self.retry_attempts = 0
        self.w.status.show(WORKING)

    async def _on_agent_end(self, event: dict[str, Any]) -> None:
        self.running = False
        if self.w.conversation.live is not None:
            # A run that ended without message_end (cancelled mid-stream): settle the widget.
            await self.w.conversation.finish_assistant({"role": "assistant", "content": [], "stopReason": "aborted"})
        for panel in self.w.conversation.tool_panels.values():
            panel.mark_aborted()
        self.w.status.hide()

    async def _on_mcp_waiting(self, event: dict[str, Any]) -> None:
        """The first prompt waits for servers still starting (``McpManager.wait_started``)."""
        names = [printable(str(n)) for n in event.get("servers") or []]
        if names:
            self.w.status.show(MCP_WAITING.format(names=", ".join(names)))
        elif not self.running:
            self.w.status.hide()

    # ------------------------------------------------------------------ messages

    async def _on_message_start(self, event: dict[str, Any]) -> None:
        message = event.get("message") or {}
        role = message.get("role")
        if role == "assistant":
            await self.w.conversation.start_assistant()
        elif role in ("user", "custom", "branchSummary", "compactionSummary"):
            widget = self.w.conversation.widget_for(message)
            if widget is not None:
                await self.w.conversation.add(widget)
        elif role == "bashExecution":
            await self._bash_message(message)

    async def _on_message_update(self, event: dict[str, Any]) -> None:
        stream_event = event.get("assistantMessageEvent") or {}
        await self.w.conversation.stream_event(stream_event)

    async def _on_message_end(self, event: dict[str, Any]) -> None:
        message = event.get("message") or {}
        if message.get("role") == "assistant":
            await self.w.conversation.finish_assistant(message, retries=self.retry_attempts)
            if message.get("stopReason") not in ("error", "aborted"):
                self.context_unknown = False

    async def _bash_message(self, message: dict[str, Any]) -> None:
        block = BashOutputBlock(message.get("command", ""), message.get("output", ""),
                                exit_code=message.get("exitCode"), excluded=bool(message.get("excludeFromContext")),
                                expanded=self.w.conversation.expanded)
        await self.w.conversation.add(block)

    # ------------------------------------------------------------------ tools

    async def _on_tool_execution_start(self, event: dict[str, Any]) -> None:
        panel = await self.w.conversation.tool_panel(event.get("toolCallId", ""), event.get("toolName", "?"),
                                                     event.get("args") or {})
        panel.start(event.get("args") or None)

    async def _on_tool_execution_update(self, event: dict[str, Any]) -> None:
        panel = self.w.conversation.tool_panels.get(event.get("toolCallId", ""))
        if panel is not None:
            panel.update_partial(event.get("partialResult"))

    async def _on_tool_execution_end(self, event: dict[str, Any]) -> None:
        panel = await self.w.conversation.tool_panel(event.get("toolCallId", ""), event.get("toolName", "?"), {})
        result = event.get("result")
        aborted = isinstance(result, dict) and "aborted" in text_of(result.get("content") or "").lower()[-40:]
        panel.finish(result, is_error=bool(event.get("isError")), aborted=aborted and bool(event.get("isError")))

    # ------------------------------------------------------------------ context events

    async def _on_compaction_start(self, event: dict[str, Any]) -> None:
        self.w.status.show(COMPACTING.get(str(event.get("reason")), COMPACTING["manual"]))

    async def _on_compaction_end(self, event: dict[str, Any]) -> None:
        if self.running:
            self.w.status.show(WORKING)
        else:
            self.w.status.hide()
        result = event.get("result")
        if event.get("aborted"):
            self.last_compaction_error = "Compaction cancelled"
            await self.w.conversation.add_notice("Compaction cancelled", severity="warning")
            return
        if event.get("errorMessage"):
            self.last_compaction_error = str(event["errorMessage"])
            error = self.last_compaction_error.removeprefix("Compaction failed: ")
            await self.w.conversation.add(ErrorBlock(f"Compaction failed: {error}",
                                                     advice="The conversation is unchanged. /compact retries; "
                                                            "/model can pick a model with a larger window."))
            return
        if not isinstance(result, dict):
            # Nothing was cut (all summarized already, or too recent to drop): say so where the
            # user asked for it; automatic ones only get their events-pane line.
            if event.get("reason") == "manual":
                await self.w.conversation.add_notice("Compaction skipped: nothing to compact", severity="warning")
            return
        if isinstance(result, dict):
            self.context_unknown = True
            await self.w.conversation.add(SummaryBlock(
                "compaction", str(result.get("summary", "")), tokens_before=result.get("tokensBefore"),
                tokens_after=event.get("tokensAfter"), reason=str(event.get("reason", "")),
                expanded=self.w.conversation.expanded,
            ))

    async def _on_auto_retry_start(self, event: dict[str, Any]) -> None:
        self.retry_attempts = int(event.get("attempt", 1))
        template = RETRYING.format(attempt=event.get("attempt"), max=event.get("maxAttempts"))
        self.w.status.countdown(template, int(event.get("delayMs", 0)) / 1000)

    async def _on_auto_retry_end(self, event: dict[str, Any]) -> None:
        self.w.status.show(WORKING) if self.running else self.w.status.hide()
        if not event.get("success"):
            await self.w.conversation.add(ErrorBlock(
                f"Retry failed after {event.get('attempt')} attempts: {event.get('finalError', '')}",
                advice="Press ↑ and Enter to resend when the provider is back.",
            ))

    async def _on_queue_update(self, event: dict[str, Any]) -> None:
        self.steering = list(event.get("steering") or [])
        self.follow_up = list(event.get("followUp") or [])
        self.refresh_queue()

    def refresh_queue(self) -> None:
        self.w.queue.set_queue(self.steering, self.follow_up, held=self.held_messages())

    async def _on_extension_error(self, event: dict[str, Any]) -> None:
        await self.w.conversation.add_notice(
            f"Extension error in {event.get('extensionPath')} ({event.get('event')}): {event.get('error')}",
            severity="error",
        )

    async def _on_notify(self, event: dict[str, Any]) -> None:
        await self.w.conversation.add_notice(str(event.get("message", "")), severity=str(event.get("level", "info")))
