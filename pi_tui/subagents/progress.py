"""A running task as the UIs show it: one line per tool call of the child, its answer so far.

``TaskProgress.take(event)`` folds one child event in and says whether the view changed (the
task tool then sends a ``tool_execution_update``; streaming deltas change nothing, so a child's
long answer costs no update per token). ``details(status, ms)`` is the JSON both the live
updates and the final result carry, so a resumed session draws the same panel.
"""

from __future__ import annotations

from typing import Any

from pi_tui.core.messages import JsonValue
from pi_tui.core.terminal_text import printable
from pi_tui.subagents.child import ChildHandle

MAX_LINES = 200
LINE_CHARS = 120
ANSWER_PREVIEW_CHARS = 2000
_ARG_KEYS = ("path", "pattern", "command", "query", "description", "url")


def call_line(tool: str, args: Any) -> str:
    """``read src/app.py``, ``bash pytest -q`` …: the tool and its most telling argument."""
    shown = ""
    if isinstance(args, dict):
        shown = next((str(args[k]) for k in _ARG_KEYS if isinstance(args.get(k), (str, int, float))), "")
    text = " ".join(printable(f"{tool} {shown}").split())
    return text if len(text) <= LINE_CHARS else text[: LINE_CHARS - 1] + "…"


class TaskProgress:
    def __init__(self, *, agent: str, description: str, child: ChildHandle) -> None:
        self.agent = agent
        self.description = description
        self._child = child
        self.lines: list[str] = []
        self._line_of: dict[str, int] = {}
        self.calls = 0
        self.turns = 0
        self.answer = ""

    def take(self, event: dict[str, Any]) -> bool:
        kind = event.get("type")
        if kind == "tool_execution_start":
            self.calls += 1
            self._line_of[str(event.get("toolCallId"))] = len(self.lines)
            self._add(call_line(str(event.get("toolName", "?")), event.get("args")))
            return True
        if kind == "tool_execution_end" and event.get("isError"):
            index = self._line_of.get(str(event.get("toolCallId")))
            if index is not None and index < len(self.lines):
                self.lines[index] += "  ✗"
            return True
        if kind == "message_end" and (event.get("message") or {}).get("role") == "assistant":
            self.turns += 1
            message = event["message"]
            text = "".join(b.get("text", "") for b in message.get("content") or [] if b.get("type") == "text")
            if text.strip():
                self.answer = text.strip()
            return True
        if kind == "auto_retry_start":
            self._add(f"retrying ({event.get('attempt', '?')}): {printable(str(event.get('errorMessage', '')))[:80]}")
            return True
        if kind == "compaction_start":
            self._add(f"compacting its context ({event.get('reason', '')})")
            return True
        return False

    def _add(self, line: str) -> None:
        self.lines.append(line)
        if len(self.lines) > MAX_LINES:
            del self.lines[0]
            self._line_of = {k: v - 1 for k, v in self._line_of.items() if v > 0}

    def text(self) -> str:
        head = f"{self.agent}: {self.description} — {self.calls} tool call{'s' if self.calls != 1 else ''}"
        return "\n".join([head, *self.lines[-5:]])

    def details(self, status: str, duration_ms: int) -> dict[str, JsonValue]:
        child = self._child
        return {
            "agent": self.agent,
            "description": self.description,
            "status": status,
            "childSessionId": child.session_id,
            "childSession": str(child.session_file) if child.session_file is not None else None,
            "model": child.model,
            "turns": self.turns,
            "toolCalls": self.calls,
            "lines": list(self.lines),
            "answerPreview": self.answer[:ANSWER_PREVIEW_CHARS],
            "durationMs": duration_ms,
            "notes": list(child.notes),
        }
