"""The request pi 0.73.1 sends to the OpenAI Responses API (pi-behaviour.md §15.14).

``POST <baseUrl>/responses`` with keys in pi's order: ``model, input, stream, prompt_cache_key,
prompt_cache_retention, store, max_output_tokens, tools, reasoning, include``. ``store`` is
always false, so a reasoning model keeps its reasoning across turns only by getting its own
items back: each stored thinking block's ``thinkingSignature`` is the whole ``reasoning`` item
(with ``encrypted_content``) as JSON, and it is replayed verbatim before the message and
function-call items it preceded. Text blocks carry their message item id in ``textSignature``
(``{"v":1,"id":…,"phase"?}``); tool calls keep ``<call_id>|<item id>`` as their id.

Pure data in, pure data out; ``responses_http`` posts it.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from typing import Any

from pi_tui.core.provider import CompletionRequest, ModelInfo
from pi_tui.providers.openai_encode import (
    NO_TEXT_TOOL_RESULT,
    cache_retention,
    clamp_level,
    js_json,
    max_output_tokens,
    model_compat,
    sanitize,
)
from pi_tui.providers.replay_transform import transform_for_replay

OPENAI_BASE_URL = "https://api.openai.com/v1"
_MAX_ID = 64


def base_url(model: ModelInfo) -> str:
    """The model's ``baseUrl``, else ``OPENAI_BASE_URL`` / ``OPENAI_API_BASE`` (what the OpenAI SDK
    and litellm read, so a proxy set there keeps working), else OpenAI's own."""
    env = os.environ.get("OPENAI_BASE_URL") or os.environ.get("OPENAI_API_BASE")
    return (model.base_url or env or OPENAI_BASE_URL).rstrip("/")


def _image_url(block: dict[str, Any]) -> str:
    return f"data:{block.get('mimeType', '')};base64,{block.get('data', '')}"


def _user(message: dict[str, Any]) -> dict[str, Any] | None:
    content = message.get("content")
    if isinstance(content, str):
        return {"role": "user", "content": [{"type": "input_text", "text": sanitize(content)}]}
    parts = [{"type": "input_text", "text": sanitize(b.get("text", ""))} if b.get("type") == "text"
             else {"type": "input_image", "detail": "auto", "image_url": _image_url(b)} for b in content or []]
    return {"role": "user", "content": parts} if parts else None


def _text_signature(signature: Any) -> tuple[str | None, str | None]:
    """(message id, phase) from a ``textSignature`` (pi's v1 JSON, or a bare legacy id)."""
    if not isinstance(signature, str) or not signature:
        return None, None
    if signature.startswith("{"):
        try:
            parsed = json.loads(signature)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict) and parsed.get("v") == 1 and isinstance(parsed.get("id"), str):
            phase = parsed.get("phase")
            return parsed["id"], phase if phase in ("commentary", "final_answer") else None
    return signature, None


def _short_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _assistant_items(message: dict[str, Any], index: int) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for block in message.get("content", []):
        kind = block.get("type")
        if kind == "thinking":
            signature = block.get("thinkingSignature")
            if signature:
                try:
                    items.append(json.loads(signature))
                except ValueError:
                    continue  # not an item of this API: nothing to replay
        elif kind == "text":
            item_id, phase = _text_signature(block.get("textSignature"))
            if not item_id:
                item_id = f"msg_{index}"
            elif len(item_id) > _MAX_ID:
                item_id = f"msg_{_short_hash(item_id)}"
            item: dict[str, Any] = {
                "type": "message", "role": "assistant",
                "content": [{"type": "output_text", "text": sanitize(block.get("text", "")), "annotations": []}],
                "status": "completed", "id": item_id,
            }
            if phase:
                item["phase"] = phase
            items.append(item)
        elif kind == "toolCall":
            call_id, _, item_id = str(block.get("id", "")).partition("|")
            call: dict[str, Any] = {"type": "function_call"}
            if item_id:
                call["id"] = item_id
            call.update({"call_id": call_id, "name": block.get("name", ""), "arguments": js_json(block.get("arguments") or {})})
            items.append(call)
    return items


def _tool_output(message: dict[str, Any], model: ModelInfo) -> dict[str, Any]:
    blocks = message.get("content", [])
    text = "\n".join(b.get("text", "") for b in blocks if b.get("type") == "text")
    images = [b for b in blocks if b.get("type") == "image"]
    output: Any
    if images and model.supports_images:
        output = ([{"type": "input_text", "text": sanitize(text)}] if text else []) + [
            {"type": "input_image", "detail": "auto", "image_url": _image_url(b)} for b in images]
    else:
        output = sanitize(text or NO_TEXT_TOOL_RESULT)
    call_id = str(message.get("toolCallId", "")).partition("|")[0]
    return {"type": "function_call_output", "call_id": call_id, "output": output}


def encode_input(request: CompletionRequest) -> list[dict[str, Any]]:
    """The ``input`` items: system prompt, then the replay-transformed history (§14.6)."""
    model = request.model
    items: list[dict[str, Any]] = []
    if request.system_prompt:
        items.append({"role": "developer" if model.reasoning else "system", "content": sanitize(request.system_prompt)})
    index = 0  # pi's msgIndex: messages that produced items (it names id-less text items)
    for message in transform_for_replay(request.messages, model):
        role = message.get("role")
        produced: list[dict[str, Any]] = []
        if role == "user":
            user = _user(message)
            produced = [user] if user is not None else []
        elif role == "assistant":
            produced = _assistant_items(message, index)
        elif role == "toolResult":
            produced = [_tool_output(message, model)]
        if role in ("user", "assistant") and not produced:
            continue
        items.extend(produced)
        index += 1
    return items


_O_SERIES = re.compile(r"^o\d")
O_SERIES_FLOOR = "low"


def _effort(model: ModelInfo, effort: str) -> str:
    """One deliberate difference from pi 0.73.1: the o-series (o1, o3, o4-mini, ...) takes only
    ``low``/``medium``/``high`` (``Unsupported value: 'minimal' is not supported with the
    'o4-mini' model``; nothing before gpt-5.1 takes ``none``), so its ``off`` and ``minimal`` go
    out as its floor, ``low``, where pi's request fails."""
    if effort in ("none", "minimal") and _O_SERIES.match(model.id):
        return O_SERIES_FLOOR
    return effort


def reasoning_keys(model: ModelInfo, level: str | None) -> dict[str, Any]:
    """``reasoning`` and ``include`` (§15.14)."""
    if not model.reasoning:
        return {}
    level = clamp_level(level, model.thinking_level_map)
    level_map = model.thinking_level_map
    if level:
        mapped = level_map.get(level)
        return {"reasoning": {"effort": _effort(model, mapped if isinstance(mapped, str) else level), "summary": "auto"},
                "include": ["reasoning.encrypted_content"]}
    if "off" in level_map and level_map["off"] is None:
        return {}
    off = level_map.get("off")
    return {"reasoning": {"effort": _effort(model, off if isinstance(off, str) else "none")}}


def build_body(request: CompletionRequest) -> dict[str, Any]:
    """pi's Responses body for this request, in pi's key order."""
    model = request.model
    retention = cache_retention()
    body: dict[str, Any] = {"model": model.id, "input": encode_input(request), "stream": True}
    if request.session_id and retention != "none":
        body["prompt_cache_key"] = request.session_id
    if retention == "long" and model_compat(model).supports_long_cache_retention:
        body["prompt_cache_retention"] = "24h"
    body["store"] = False
    budget = max_output_tokens(request)
    if budget:
        body["max_output_tokens"] = budget
    if request.tools:
        body["tools"] = [{"type": "function", "name": t.name, "description": t.description, "parameters": t.parameters,
                          "strict": False} for t in request.tools]
    body.update(reasoning_keys(model, request.reasoning))
    return body


def request_headers(request: CompletionRequest) -> dict[str, str]:
    """The model's headers, then the session-affinity ones (unless retention is ``none``)."""
    headers = dict(request.model.headers)
    if request.session_id and cache_retention() != "none":
        if request.model.compat.get("sendSessionIdHeader", True) is not False:
            headers["session_id"] = request.session_id
        headers["x-client-request-id"] = request.session_id
    return headers
