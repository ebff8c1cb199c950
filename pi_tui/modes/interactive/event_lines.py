"""How each context event reads in the events pane: a pure function, testable without an app.

The pane is pi-tui's answer to "what is happening to my context right now": compactions with their
reason, tokens and duration, overflow recovery, retries, artifacts, pipeline reductions, extension
errors, model and thinking changes. Streaming events return None (the conversation shows them).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pi_tui.core.terminal_text import printable
from pi_tui.modes.interactive.formatting import format_bytes, format_duration, format_thousands

Severity = Literal["info", "success", "warning", "error"]


@dataclass(frozen=True, slots=True)
class EventLine:
    title: str
    detail: str = ""
    severity: Severity = "info"


SKIPPED_TITLE = "compaction skipped: nothing to compact"


def _reason_label(reason: str) -> str:
    return {"overflow": "overflow recovery", "threshold": "threshold", "manual": "manual"}.get(reason, reason)


def _compaction_end(event: dict[str, Any]) -> EventLine:
    reason = str(event.get("reason", ""))
    if event.get("aborted"):
        return EventLine("compaction cancelled", _reason_label(reason), "warning")
    if event.get("errorMessage"):
        detail = str(event["errorMessage"]).removeprefix("Compaction failed: ")
        return EventLine("compaction failed", detail, "error")
    result = event.get("result") if isinstance(event.get("result"), dict) else {}
    if not result:
        # Not aborted, no error and no result: the engine found nothing to cut (everything is
        # already summarized or too recent to drop), so nothing changed — no ✓.
        return EventLine(SKIPPED_TITLE, _reason_label(reason), "info")
    before = result.get("tokensBefore") if result else None
    after = event.get("tokensAfter")
    parts: list[str] = [_reason_label(reason)]
    if isinstance(before, int) and isinstance(after, int):
        parts.append(f"{format_thousands(before)} → {format_thousands(after)} tokens")
    elif isinstance(before, int):
        parts.append(f"from {format_thousands(before)} tokens")
    kept = result.get("firstKeptEntryId") if result else None
    if isinstance(kept, str) and kept:
        parts.append(f"kept from #{kept[:8]}")
    duration = event.get("durationMs")
    if isinstance(duration, int | float):
        parts.append(format_duration(duration / 1000))
    if event.get("willRetry"):
        parts.append("retrying the request")
    return EventLine("compaction ✓", " · ".join(parts), "success")


def _checkpoint(event: dict[str, Any]) -> EventLine:
    """A file snapshot or restore (docs/checkpoints.md)."""
    action = str(event.get("action", ""))
    ms = event.get("ms")
    took = f"{ms} ms" if isinstance(ms, int) else ""
    if action == "snapshot":
        files = event.get("files")
        what = f"{files} file{'s' if files != 1 else ''} changed" if isinstance(files, int) else "first snapshot"
        skipped = event.get("skipped") or []
        extra = f" · skipped: {', '.join(str(s) for s in skipped)}" if skipped else ""
        return EventLine("files snapshot", " · ".join(p for p in (what, took) if p) + extra, "info")
    if action == "restore":
        found = event.get("counts")
        numbers: dict[str, Any] = found if isinstance(found, dict) else {}
        counts = ", ".join(f"{numbers.get(k, 0)} {k}" for k in ("changed", "created", "deleted"))
        return EventLine("files restored", " · ".join(p for p in (counts, took) if p), "success")
    if action == "skipped":
        return EventLine("files snapshot skipped", str(event.get("message", "")), "warning")
    if action == "filled":  # a first snapshot that ran out of time, finished in the background
        return EventLine("files snapshot ready", " · ".join(p for p in (str(event.get("message", "")), took) if p),
                         "success")
    return EventLine("files snapshot failed", str(event.get("message", "")), "error")


def _subagent_end(event: dict[str, Any]) -> EventLine:
    status = str(event.get("status", ""))
    usage = event.get("usage") if isinstance(event.get("usage"), dict) else {}
    parts = [str(event.get("agent", ""))]
    if usage:
        parts.append(f"{usage.get('turns', 0)} turns · {format_thousands(int(usage.get('totalTokens', 0)))} tokens")
        if usage.get("cost"):
            parts.append(f"${float(usage['cost']):.3f}")
    severity: Severity = {"completed": "success", "aborted": "warning"}.get(status, "error")  # type: ignore[assignment]
    mark = {"completed": "✓", "aborted": "⊘"}.get(status, "✗")
    return EventLine(f"subagent {mark}", " · ".join(parts), severity)


def _mcp_server(event: dict[str, Any]) -> EventLine | None:
    """An MCP server's state change (``pi_tui/mcp``): connects, failures, restarts, /mcp toggles.
    ``starting`` and ``stopped`` (every start, the app closing) are left out."""
    server, status = event.get("server"), event.get("status")
    error = printable(str(event.get("error") or ""))
    if status == "connected":
        tools = event.get("tools")
        return EventLine(f"MCP {server} connected", f"{tools} tool{'s' if tools != 1 else ''}", "success")
    if status == "failed":
        return EventLine(f"MCP {server} failed", error, "error")
    if status == "restarting":
        return EventLine(f"MCP {server} reconnecting", error, "warning")
    if status == "disabled":
        return EventLine(f"MCP {server} disabled", "for this session")
    return None


def describe_event(event: dict[str, Any]) -> EventLine | None:
    """The events-pane line for a session event, or None when the pane ignores it."""
    kind = event.get("type")
    if kind == "compaction_start":
        reason = str(event.get("reason", ""))
        title = "overflow → compaction ▶" if reason == "overflow" else "compaction ▶"
        return EventLine(title, _reason_label(reason), "warning" if reason == "overflow" else "info")
    if kind == "compaction_end":
        return _compaction_end(event)
    if kind == "auto_retry_start":
        delay = int(event.get("delayMs", 0)) / 1000
        return EventLine(
            f"retry {event.get('attempt')}/{event.get('maxAttempts')} in {delay:g}s",
            str(event.get("errorMessage", "")),
            "warning",
        )
    if kind == "auto_retry_end":
        if event.get("success"):
            return EventLine(f"retry ✓ on attempt {event.get('attempt')}", "", "success")
        return EventLine(f"retry gave up after {event.get('attempt')}", str(event.get("finalError", "")), "error")
    if kind == "artifact_saved":
        size = format_bytes(int(event.get("originalBytes", 0)))
        return EventLine("artifact saved", f"{event.get('toolName')} → {size} → {event.get('path')}", "info")
    if kind == "context_reduced":
        saved = int(event.get("tokensBefore", 0)) - int(event.get("tokensAfter", 0))
        detail = str(event.get("detail", ""))
        numbers = (
            f"{format_thousands(event.get('tokensBefore', 0))} → "
            f"{format_thousands(event.get('tokensAfter', 0))} tokens (−{format_thousands(max(saved, 0))})"
        )
        step = str(event.get("step", ""))
        severity: Severity = "warning" if step == "summary_rejected" else "info"
        return EventLine(f"{step}: {detail}" if detail else step, numbers, severity)
    if kind == "subagent_start":
        return EventLine(f"subagent ▶ {event.get('agent')}", f"{event.get('description', '')} · {event.get('model', '')}")
    if kind == "subagent_end":
        return _subagent_end(event)
    if kind == "compaction_circuit_open":
        return EventLine("auto-compaction paused", str(event.get("message", "")), "error")
    if kind == "extension_error":
        name = Path(str(event.get("extensionPath", "extension"))).name
        return EventLine("extension error", f"{name} ({event.get('event')}): {event.get('error')}", "error")
    if kind == "model_changed":
        return EventLine(f"model → {event.get('provider')}/{event.get('modelId')}")
    if kind == "thinking_level_changed":
        return EventLine(f"thinking → {event.get('level')}")
    if kind == "session_info_changed":
        return EventLine(f"session named “{event.get('name') or ''}”")
    if kind == "checkpoint":
        return _checkpoint(event)
    if kind == "mcp_server":
        return _mcp_server(event)
    if kind == "mcp_tools_changed":
        detail = f"{event.get('tools')} tools" + (" · new ones through the mcp tool (the list is frozen)"
                                                  if event.get("frozen") else "")
        return EventLine(f"MCP {event.get('server')} tools changed", detail)
    if kind == "permission_unsandboxed":
        return EventLine("bash ran without a sandbox", f"{event.get('summary')}: {event.get('reason')}", "warning")
    if kind == "notify":
        level = event.get("level", "info")
        severity = level if level in ("info", "warning", "error") else "info"
        return EventLine(str(event.get("message", "")), "", severity)
    return None
