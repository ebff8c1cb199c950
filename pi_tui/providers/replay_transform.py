"""pi's replay transform (pi-behaviour.md §14.6): the history as the *target* model may see it.

Runs on the LLM messages before they are encoded for the wire. It never mutates its input:
session history stays exactly as recorded; only the request changes.

* images become placeholders for models without image input;
* another model's thinking becomes plain text (its signatures mean nothing to the target);
* another model's tool-call ids are normalized (some providers reject ``|`` or long ids);
* failed (``error``/``aborted``) assistant turns are dropped, and every tool call left without a
  result gets a synthetic ``No result provided`` error result so the API accepts the history.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from typing import Any

from pi_tui.core.messages import LlmMessage
from pi_tui.core.provider import ModelInfo

USER_IMAGE_PLACEHOLDER = "(image omitted: model does not support images)"
TOOL_IMAGE_PLACEHOLDER = "(tool image omitted: model does not support images)"
NO_RESULT_TEXT = "No result provided"
_ID_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
MAX_TOOL_CALL_ID = 40


def _replace_images(content: list[Any], placeholder: str) -> list[Any]:
    """Each run of consecutive images becomes one placeholder text block."""
    out: list[Any] = []
    for block in content:
        if block.get("type") != "image":
            out.append(block)
            continue
        previous = out[-1] if out else None
        if previous is not None and previous.get("type") == "text" and previous.get("text") == placeholder:
            continue
        out.append({"type": "text", "text": placeholder})
    return out


def _normalize_id(call_id: str, target: ModelInfo) -> str:
    if "|" in call_id:
        return _ID_UNSAFE.sub("_", call_id.split("|", 1)[0])[:MAX_TOOL_CALL_ID]
    if target.provider == "openai" and len(call_id) > MAX_TOOL_CALL_ID:
        return call_id[:MAX_TOOL_CALL_ID]
    return call_id


def _is_same_model(message: dict[str, Any], target: ModelInfo) -> bool:
    return (
        message.get("provider") == target.provider
        and message.get("api") == target.api
        and message.get("model") == target.id
    )


def _assistant_blocks(message: dict[str, Any], target: ModelInfo, renamed: dict[str, str],
                      normalize_id: Callable[[str], str] | None) -> list[Any]:
    same = _is_same_model(message, target)
    blocks: list[Any] = []
    for block in message.get("content", []):
        kind = block.get("type")
        if kind == "thinking":
            text = block.get("thinking", "")
            if block.get("redacted"):
                if same:
                    blocks.append(block)
            elif same and block.get("thinkingSignature"):
                blocks.append(block)
            elif not text.strip():
                continue
            elif same:
                blocks.append(block)
            else:
                blocks.append({"type": "text", "text": text})
        elif kind == "text":
            blocks.append(block if same else {"type": "text", "text": block.get("text", "")})
        elif kind == "toolCall":
            if same:
                blocks.append(block)
                continue
            call = {k: v for k, v in block.items() if k != "thoughtSignature"}
            old_id = str(call.get("id", ""))
            new_id = normalize_id(old_id) if normalize_id is not None else _normalize_id(old_id, target)
            if new_id != call.get("id"):
                renamed[str(call.get("id", ""))] = new_id
                call["id"] = new_id
            blocks.append(call)
        else:
            blocks.append(block)
    return blocks


def transform_for_replay(messages: list[LlmMessage], target: ModelInfo,
                         normalize_id: Callable[[str], str] | None = None) -> list[dict[str, Any]]:
    """The messages to encode for ``target`` (fresh dicts; the input is left untouched).
    ``normalize_id`` is the target wire's rule for other models' tool-call ids (default: the
    chat-completions rule of §14.6 item 4; Anthropic passes its own, §15.8)."""
    vision = target.supports_images
    renamed: dict[str, str] = {}
    first_pass: list[dict[str, Any]] = []
    for original in messages:
        message: dict[str, Any] = copy.copy(dict(original))
        role = message.get("role")
        if role == "user" and isinstance(message.get("content"), list) and not vision:
            message["content"] = _replace_images(message["content"], USER_IMAGE_PLACEHOLDER)
        elif role == "toolResult":
            if not vision:
                message["content"] = _replace_images(list(message.get("content", [])), TOOL_IMAGE_PLACEHOLDER)
            call_id = message.get("toolCallId")
            if call_id in renamed:
                message["toolCallId"] = renamed[call_id]
        elif role == "assistant":
            message["content"] = _assistant_blocks(message, target, renamed, normalize_id)
        first_pass.append(message)
    return repair_for_replay(first_pass)


def is_failed_reply(message: Any) -> bool:
    """An ``error`` or ``aborted`` assistant message: stored, shown, but never sent again."""
    return bool(message.get("role") == "assistant" and message.get("stopReason") in ("error", "aborted"))


def repair_for_replay(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Drop failed assistant turns; answer every unanswered tool call (in call order). Works on
    the session's messages too (``compactionSummary``, ``bashExecution``, ``custom`` … become
    user messages on the wire, so they close a tool batch like one): ``pi-tui context`` and
    ``/context`` show with it what the next request carries."""
    out: list[dict[str, Any]] = []
    pending: list[dict[str, Any]] = []
    answered: set[str] = set()

    def flush() -> None:
        for call in pending:
            if call.get("id") not in answered:
                out.append({
                    "role": "toolResult",
                    "toolCallId": call.get("id", ""),
                    "toolName": call.get("name", ""),
                    "content": [{"type": "text", "text": NO_RESULT_TEXT}],
                    "isError": True,
                    "timestamp": 0,
                })
        pending.clear()
        answered.clear()

    for message in messages:
        role = message.get("role")
        if role == "assistant":
            flush()
            if is_failed_reply(message):
                continue
            pending.extend(b for b in message.get("content", []) if b.get("type") == "toolCall")
            out.append(message)
        elif role == "toolResult":
            answered.add(str(message.get("toolCallId")))
            out.append(message)
        else:
            flush()
            out.append(message)
    flush()
    return out
