"""Session events → ACP ``session/update`` notifications, as they happen.

* ``message_update`` text and thinking deltas → ``agent_message_chunk`` / ``agent_thought_chunk``;
* ``tool_execution_start`` → ``tool_call`` (pending: it may still need permission, see
  ``permissions.py``, which sends the ``in_progress`` update), ``tool_execution_update`` → the
  output so far (``bash``, unless it runs in the client's terminal), ``tool_execution_end`` →
  the final ``tool_call_update`` (``tool_calls.py`` builds the shapes);
* what happens around the model — compaction (manual, threshold, overflow recovery), automatic
  retries, notices (``/template``'s list, extensions' ``ctx.ui.notify``), extension errors,
  extension messages shown to the user — becomes a quoted agent message (``notice``), so
  nothing the TUI would show is lost in an editor;
* a new session name → ``session_info_update``.

The listener is synchronous and never raises (``AgentSession`` listener rules): it only writes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pi_tui.core.messages import text_of
from pi_tui.modes.acp.tool_calls import text_content, tool_call_end, tool_call_start

SendUpdate = Callable[[dict[str, Any]], None]


def notice(text: str) -> dict[str, Any]:
    """A pi-tui notice as its own quoted paragraph of the agent's message."""
    lines = text.strip("\n").splitlines() or [""]
    quoted = "\n".join(f"> {line}" if line else ">" for line in lines)
    return {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": f"\n\n{quoted}\n\n"}}


def _tokens(value: Any) -> str:
    return f"{value:,}" if isinstance(value, int) else "?"


def notice_text(event: dict[str, Any]) -> str | None:
    """The words for an event the user should see beside the conversation (None: not one)."""
    kind = event.get("type")
    if kind == "notify":
        level = event.get("level")
        prefix = {"warning": "Warning: ", "error": "Error: "}.get(str(level), "")
        return prefix + str(event.get("message", ""))
    if kind == "compaction_start":
        reason = event.get("reason")
        why = {"manual": "", "threshold": " (the context is nearly full)",
               "overflow": " (the model said the context is too long)"}.get(str(reason), "")
        return f"Compacting the context{why}…"
    if kind == "compaction_end":
        return _compaction_end(event)
    if kind == "auto_retry_start":
        delay = float(event.get("delayMs") or 0) / 1000
        return (f"Retrying in {delay:g} s (attempt {event.get('attempt')} of {event.get('maxAttempts')}) after: "
                f"{event.get('errorMessage') or 'an error'}")
    if kind == "auto_retry_end" and not event.get("success"):
        return f"Retries exhausted: {event.get('finalError') or 'the request failed'}"
    if kind == "extension_error":
        return f"Extension error ({event.get('extensionPath')}, {event.get('event')}): {event.get('error')}"
    return None


def _compaction_end(event: dict[str, Any]) -> str:
    if event.get("aborted"):
        return "Compaction cancelled."
    error = event.get("errorMessage")
    if error:
        return str(error) if str(error).startswith("Compaction failed") else f"Compaction failed: {error}"
    raw = event.get("result")
    result: dict[str, Any] = raw if isinstance(raw, dict) else {}
    text = f"Context compacted: {_tokens(result.get('tokensBefore'))} tokens before"
    if isinstance(event.get("tokensAfter"), int):
        text += f", about {_tokens(event['tokensAfter'])} after"
    text += "."
    if event.get("willRetry"):
        text += " Retrying the request."
    return text


@dataclass(slots=True)
class ToolCallState:
    name: str
    args: dict[str, Any]
    diffs: list[dict[str, Any]] | None = None
    """The whole-file diff shown before the call ran (edit/write), kept by the client."""
    in_terminal: bool = False
    """The output lives in a client terminal (embedded in the call's content)."""


@dataclass(slots=True)
class EventMapper:
    send: SendUpdate
    cwd: Path
    calls: dict[str, ToolCallState] = field(default_factory=dict)

    def __call__(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "message_update":
            self._stream(event.get("assistantMessageEvent"))
        elif kind == "tool_execution_start":
            self._tool_start(event)
        elif kind == "tool_execution_update":
            self._tool_progress(event)
        elif kind == "tool_execution_end":
            self._tool_end(event)
        elif kind == "message_end":
            self._custom_message(event.get("message") or {})
        elif kind == "session_info_changed":
            self.send({"sessionUpdate": "session_info_update", "title": event.get("name")})
        else:
            text = notice_text(event)
            if text:
                self.send(notice(text))

    def _stream(self, delta: Any) -> None:
        if not isinstance(delta, dict):
            return
        kind = delta.get("type")
        if kind == "text_delta" and delta.get("delta"):
            self.send({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": delta["delta"]}})
        elif kind == "thinking_delta" and delta.get("delta"):
            self.send({"sessionUpdate": "agent_thought_chunk", "content": {"type": "text", "text": delta["delta"]}})

    def _tool_start(self, event: dict[str, Any]) -> None:
        raw = event.get("args")
        args: dict[str, Any] = raw if isinstance(raw, dict) else {}
        call_id, name = str(event.get("toolCallId")), str(event.get("toolName"))
        self.calls[call_id] = ToolCallState(name, dict(args))
        self.send(tool_call_start(call_id, name, args, self.cwd, status="pending"))

    def _tool_progress(self, event: dict[str, Any]) -> None:
        state = self.calls.get(str(event.get("toolCallId")))
        if state is None or state.in_terminal or state.name not in ("bash", "task"):
            return  # a task's partial result is its subagent's progress: one tool call, updated
        partial = event.get("partialResult")
        text = "".join(str(b.get("text", "")) for b in (partial or {}).get("content") or [] if isinstance(b, dict))
        if text:
            self.send({"sessionUpdate": "tool_call_update", "toolCallId": str(event.get("toolCallId")),
                       "content": [text_content(text)]})

    def _tool_end(self, event: dict[str, Any]) -> None:
        call_id = str(event.get("toolCallId"))
        state = self.calls.pop(call_id, None) or ToolCallState(str(event.get("toolName")), {})
        self.send(tool_call_end(call_id, state.name, state.args, event.get("result"), bool(event.get("isError")),
                                self.cwd, diffs=state.diffs, keep_content=state.in_terminal))

    def _custom_message(self, message: dict[str, Any]) -> None:
        """An extension's message for the user (``display``) shown as a notice."""
        if message.get("role") == "custom" and message.get("display"):
            text = text_of(message.get("content", ""))
            if text:
                self.send(notice(text))
