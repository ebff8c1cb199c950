"""``session/load``: the current branch of a pi session file replayed as ``session/update``s.

Every entry from the root to the leaf, not only what the model sees now: a compacted conversation
still shows its earlier messages, with the compaction as a notice where it happened (the model
continues from the summary, as in the TUI). User messages → ``user_message_chunk`` (text and
images), assistant messages → thought and message chunks and a ``tool_call`` per call with its
final status and content from the matching result, a ``!cmd`` the user ran → an ``execute`` call,
branch summaries, compactions and extension messages shown to the user → notices.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pi_tui.core.messages import text_of
from pi_tui.modes.acp.tool_calls import text_content, tool_call_end, tool_call_start
from pi_tui.modes.acp.updates import notice


def replay_updates(entries: list[dict[str, Any]], cwd: Path) -> Iterator[dict[str, Any]]:
    results = _tool_results(entries)
    for entry in entries:
        kind = entry.get("type")
        if kind == "message":
            yield from _message(entry.get("message") or {}, results, cwd)
        elif kind == "compaction":
            yield notice(f"Context compacted here: {_count(entry.get('tokensBefore'))} tokens summarized.")
        elif kind == "branch_summary":
            yield notice("Summary of the branch left here:\n" + str(entry.get("summary", "")))
        elif kind == "custom_message" and entry.get("display"):
            text = text_of(entry.get("content", ""))
            if text:
                yield notice(text)


def _count(value: Any) -> str:
    return f"{value:,}" if isinstance(value, int) else "?"


def _tool_results(entries: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    for entry in entries:
        message = entry.get("message") if entry.get("type") == "message" else None
        if isinstance(message, dict) and message.get("role") == "toolResult":
            found[str(message.get("toolCallId"))] = message
    return found


def _message(message: dict[str, Any], results: dict[str, dict[str, Any]], cwd: Path) -> Iterator[dict[str, Any]]:
    role = message.get("role")
    if role == "user":
        yield from _user_chunks(message.get("content", ""))
    elif role == "assistant":
        yield from _assistant(message, results, cwd)
    elif role == "bashExecution":
        yield from _user_bash(message, cwd)
    elif role == "custom" and message.get("display"):
        text = text_of(message.get("content", ""))
        if text:
            yield notice(text)


def _user_chunks(content: Any) -> Iterator[dict[str, Any]]:
    if isinstance(content, str):
        yield {"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": content}}
        return
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            yield {"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": str(block.get("text", ""))}}
        elif block.get("type") == "image":
            yield {"sessionUpdate": "user_message_chunk", "content": {
                "type": "image", "data": str(block.get("data", "")), "mimeType": str(block.get("mimeType", ""))}}


def _assistant(message: dict[str, Any], results: dict[str, dict[str, Any]], cwd: Path) -> Iterator[dict[str, Any]]:
    content = message.get("content")
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "thinking" and block.get("thinking"):
            yield {"sessionUpdate": "agent_thought_chunk", "content": {"type": "text", "text": str(block["thinking"])}}
        elif kind == "text" and block.get("text"):
            yield {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": str(block["text"])}}
        elif kind == "toolCall":
            yield from _tool_call(block, results, cwd)
    if message.get("stopReason") == "error" and message.get("errorMessage"):
        yield notice(f"Error: {message['errorMessage']}")


def _tool_call(block: dict[str, Any], results: dict[str, dict[str, Any]], cwd: Path) -> Iterator[dict[str, Any]]:
    call_id, name = str(block.get("id")), str(block.get("name"))
    raw = block.get("arguments")
    args: dict[str, Any] = raw if isinstance(raw, dict) else {}
    result = results.get(call_id)
    yield tool_call_start(call_id, name, args, cwd, status="pending")
    if result is None:  # the run stopped before the call was answered
        yield {"sessionUpdate": "tool_call_update", "toolCallId": call_id, "status": "failed",
               "content": [text_content("No result was recorded for this call.")]}
        return
    shaped = {"content": result.get("content"), "details": result.get("details")}
    yield tool_call_end(call_id, name, args, shaped, bool(result.get("isError")), cwd)


def _user_bash(message: dict[str, Any], cwd: Path) -> Iterator[dict[str, Any]]:
    call_id = f"user-bash-{message.get('timestamp')}"
    args = {"command": str(message.get("command", ""))}
    output = str(message.get("output", ""))
    failed = bool(message.get("cancelled")) or message.get("exitCode") not in (0, None)
    yield tool_call_start(call_id, "bash", args, cwd, status="pending")
    yield tool_call_end(call_id, "bash", args, {"content": [{"type": "text", "text": output or "(no output)"}]},
                        failed, cwd)
