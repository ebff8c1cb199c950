"""The request body pi 0.73.1 sends to an OpenAI-compatible endpoint (pi-behaviour.md §14.3–14.13).

Pure data in, pure data out: ``build_request_body(request)`` returns the JSON object in pi's key
order. The litellm adapter hands it to litellm (see ``litellm_convert.py`` for what litellm lets
us keep); tests compare it with what the fake server received.
"""

from __future__ import annotations

import json
import math
import os
import re
from typing import Any

from pi_tui.core.provider import CompletionRequest, ModelInfo, ToolSpec
from pi_tui.providers.openai_compat import Compat, resolve_compat
from pi_tui.providers.replay_transform import transform_for_replay

MAX_DEFAULT_OUTPUT_TOKENS = 32_000
TOOL_IMAGE_INTRO = "Attached image(s) from tool result:"
BRIDGE_TEXT = "I have processed the tool results."
NO_TEXT_TOOL_RESULT = "(see attached image)"
_SURROGATES = re.compile("[\ud800-\udfff]")
_OPENAI_URL = "https://api.openai.com/v1"


def sanitize(text: str) -> str:
    """Drop lone UTF-16 surrogates (they cannot be encoded as UTF-8) (§14.15)."""
    return _SURROGATES.sub("", text)


def _js_number(value: Any) -> Any:
    """Numbers as JavaScript's JSON.stringify writes them (5.0 → 5, NaN → null)."""
    if isinstance(value, float):
        if not math.isfinite(value):
            return None
        if value.is_integer() and abs(value) < 1e21:
            return int(value)
    if isinstance(value, dict):
        return {k: _js_number(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_js_number(v) for v in value]
    return value


def js_json(value: Any) -> str:
    """Compact JSON as ``JSON.stringify``: no spaces, raw UTF-8, lone surrogates escaped."""
    text = json.dumps(_js_number(value), separators=(",", ":"), ensure_ascii=False)
    return _SURROGATES.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def effective_base_url(model: ModelInfo) -> str:
    if model.base_url:
        return model.base_url
    return _OPENAI_URL if model.provider == "openai" else ""


def model_compat(model: ModelInfo) -> Compat:
    return resolve_compat(model.provider, effective_base_url(model), model.id, dict(model.compat))


def cache_retention() -> str:
    """pi never passes a retention: ``long`` only with ``PI_CACHE_RETENTION=long``."""
    return "long" if os.environ.get("PI_CACHE_RETENTION") == "long" else "short"


# --------------------------------------------------------------------------- messages


def _user_parts(content: list[Any]) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for block in content:
        if block.get("type") == "text":
            parts.append({"type": "text", "text": sanitize(block.get("text", ""))})
        elif block.get("type") == "image":
            url = f"data:{block.get('mimeType', '')};base64,{block.get('data', '')}"
            parts.append({"type": "image_url", "image_url": {"url": url}})
    return parts


def _encode_assistant(message: dict[str, Any], model: ModelInfo, compat: Compat) -> dict[str, Any] | None:
    blocks = message.get("content", [])
    texts = [sanitize(b.get("text", "")) for b in blocks if b.get("type") == "text" and b.get("text", "").strip()]
    thinking = [b for b in blocks if b.get("type") == "thinking" and b.get("thinking", "").strip()]
    calls = [b for b in blocks if b.get("type") == "toolCall"]
    out: dict[str, Any] = {"role": "assistant", "content": "" if compat.requires_assistant_after_tool_result else None}
    joined = "".join(texts)
    if joined:
        out["content"] = joined
    if thinking and compat.requires_thinking_as_text:
        thought = sanitize("\n\n".join(b["thinking"] for b in thinking))
        out["content"] = [{"type": "text", "text": thought}, *({"type": "text", "text": t} for t in texts)]
    elif thinking and thinking[0].get("thinkingSignature"):
        out[str(thinking[0]["thinkingSignature"])] = "\n".join(b["thinking"] for b in thinking)
    if calls:
        out["tool_calls"] = [
            {
                "id": c.get("id", ""),
                "type": "function",
                "function": {"name": c.get("name", ""), "arguments": js_json(c.get("arguments") or {})},
            }
            for c in calls
        ]
        details = []
        for c in calls:
            if c.get("thoughtSignature"):
                try:
                    details.append(json.loads(c["thoughtSignature"]))
                except ValueError:
                    continue
        if details:
            out["reasoning_details"] = details
    if compat.requires_reasoning_content_on_assistant_messages and model.reasoning and "reasoning_content" not in out:
        out["reasoning_content"] = ""
    if out["content"] in (None, "", []) and not calls:
        return None
    return out


def _tool_message(message: dict[str, Any], compat: Compat) -> dict[str, Any]:
    text = "\n".join(sanitize(b.get("text", "")) for b in message.get("content", []) if b.get("type") == "text")
    out: dict[str, Any] = {"role": "tool", "content": text or NO_TEXT_TOOL_RESULT, "tool_call_id": message.get("toolCallId", "")}
    if compat.requires_tool_result_name:
        out["name"] = message.get("toolName", "")
    return out


def encode_messages(request: CompletionRequest, compat: Compat) -> list[dict[str, Any]]:
    model = request.model
    wire: list[dict[str, Any]] = []
    if request.system_prompt:
        system_role = "developer" if model.reasoning and compat.supports_developer_role else "system"
        wire.append({"role": system_role, "content": sanitize(request.system_prompt)})
    bridge = compat.requires_assistant_after_tool_result
    messages = transform_for_replay(request.messages, model)
    after_tools = False  # "directly after a tool-result run", judged on what was emitted (§14.11)
    i = 0
    while i < len(messages):
        message = messages[i]
        role = message.get("role")
        if role == "toolResult":
            images: list[dict[str, Any]] = []
            while i < len(messages) and messages[i].get("role") == "toolResult":
                wire.append(_tool_message(messages[i], compat))
                if model.supports_images:
                    images.extend(_user_parts([b for b in messages[i].get("content", []) if b.get("type") == "image"]))
                i += 1
            after_tools = True
            if images:
                if bridge:
                    wire.append({"role": "assistant", "content": BRIDGE_TEXT})
                wire.append({"role": "user", "content": [{"type": "text", "text": TOOL_IMAGE_INTRO}, *images]})
                after_tools = False
            continue
        if role == "user":
            if bridge and after_tools:
                wire.append({"role": "assistant", "content": BRIDGE_TEXT})
            content = message.get("content")
            if isinstance(content, str):
                wire.append({"role": "user", "content": sanitize(content)})
                after_tools = False
            elif content:
                wire.append({"role": "user", "content": _user_parts(content)})
                after_tools = False
        elif role == "assistant":
            encoded = _encode_assistant(message, model, compat)
            if encoded is not None:
                wire.append(encoded)
                after_tools = False
        i += 1
    return wire


# --------------------------------------------------------------------------- top level


def encode_tools(tools: list[ToolSpec], compat: Compat) -> list[dict[str, Any]]:
    out = []
    for tool in tools:
        function: dict[str, Any] = {"name": tool.name, "description": tool.description, "parameters": tool.parameters}
        if compat.supports_strict_mode:
            function["strict"] = False
        out.append({"type": "function", "function": function})
    return out


def _mentions_tools(request: CompletionRequest) -> bool:
    for message in request.messages:
        if message["role"] == "toolResult":
            return True
        if message["role"] == "assistant" and any(b.get("type") == "toolCall" for b in message["content"]):
            return True
    return False


_LEVELS = ("minimal", "low", "medium", "high", "xhigh")


def clamp_level(level: str | None, level_map: dict[str, str | None]) -> str | None:
    """pi's ``clampThinkingLevel`` for a reasoning model (§13.1): ``xhigh`` needs a mapping, a
    level mapped to null is unsupported; an unsupported level moves up, else down."""
    if level is None or level == "off" or level not in _LEVELS:
        return None

    def supported(name: str) -> bool:
        if name == "xhigh":
            return isinstance(level_map.get("xhigh"), str)
        return not (name in level_map and level_map[name] is None)

    index = _LEVELS.index(level)
    for name in (*_LEVELS[index:], *reversed(_LEVELS[:index])):
        if supported(name):
            return name
    return None


def reasoning_fields(model: ModelInfo, compat: Compat, level: str | None) -> dict[str, Any]:
    """The keys of §14.5 for a clamped thinking level (None or "off" = no reasoning)."""
    if not model.reasoning:
        return {}
    level_map = model.thinking_level_map
    level = clamp_level(level, level_map)
    mapped = level_map.get(level) if level and isinstance(level_map.get(level), str) else level
    off = level_map.get("off")
    fmt = compat.thinking_format
    if fmt == "openrouter":
        if mapped:
            return {"reasoning": {"effort": mapped}}
        if "off" in level_map and off is None:
            return {}
        return {"reasoning": {"effort": off if isinstance(off, str) else "none"}}
    if fmt == "deepseek":
        out: dict[str, Any] = {"thinking": {"type": "enabled" if mapped else "disabled"}}
        if mapped:
            out["reasoning_effort"] = mapped
        return out
    if fmt in ("zai", "qwen"):
        return {"enable_thinking": bool(mapped)}
    if fmt == "qwen-chat-template":
        return {"chat_template_kwargs": {"enable_thinking": bool(mapped), "preserve_thinking": True}}
    if not compat.supports_reasoning_effort:
        return {}
    if mapped:
        return {"reasoning_effort": mapped}
    if isinstance(off, str):
        return {"reasoning_effort": off}
    return {}


def max_output_tokens(request: CompletionRequest) -> int:
    if request.max_tokens:
        return request.max_tokens
    return min(request.model.max_tokens, MAX_DEFAULT_OUTPUT_TOKENS) if request.model.max_tokens > 0 else 0


def build_request_body(request: CompletionRequest, compat: Compat | None = None) -> dict[str, Any]:
    """pi's chat-completions body for this request, keys in pi's order (§14.3)."""
    model = request.model
    compat = compat or model_compat(model)
    retention = cache_retention()
    url = effective_base_url(model)
    body: dict[str, Any] = {"model": model.id, "messages": encode_messages(request, compat), "stream": True}
    long_cache = retention == "long" and compat.supports_long_cache_retention
    if request.session_id and (("api.openai.com" in url and retention != "none") or long_cache):
        body["prompt_cache_key"] = request.session_id
    if long_cache:
        body["prompt_cache_retention"] = "24h"
    if compat.supports_usage_in_streaming:
        body["stream_options"] = {"include_usage": True}
    if compat.supports_store:
        body["store"] = False
    budget = max_output_tokens(request)
    if budget:
        body[compat.max_tokens_field] = budget
    if request.tools:
        body["tools"] = encode_tools(request.tools, compat)
    elif _mentions_tools(request):
        body["tools"] = []
    if compat.zai_tool_stream and body.get("tools"):
        body["tool_stream"] = True
    body.update(reasoning_fields(model, compat, request.reasoning))
    if "openrouter.ai" in url and compat.open_router_routing:
        body["provider"] = compat.open_router_routing
    gateway = {k: v for k, v in compat.vercel_gateway_routing.items() if k in ("only", "order")}
    if "ai-gateway.vercel.sh" in url and gateway:
        body["providerOptions"] = {"gateway": gateway}
    if compat.cache_control_format == "anthropic" and retention != "none":
        _add_cache_markers(body, long_cache)
    return body


def request_headers(request: CompletionRequest, compat: Compat | None = None) -> dict[str, str]:
    """The extra headers: the model's (provider then model), plus session-affinity headers."""
    compat = compat or model_compat(request.model)
    headers = dict(request.model.headers)
    if compat.send_session_affinity_headers and request.session_id and cache_retention() != "none":
        for name in ("session_id", "x-client-request-id", "x-session-affinity"):
            headers[name] = request.session_id
    return headers


def _add_cache_markers(body: dict[str, Any], long_cache: bool) -> None:
    """Anthropic-style ``cache_control`` markers (§14.13)."""
    marker: dict[str, Any] = {"type": "ephemeral", **({"ttl": "1h"} if long_cache else {})}
    messages = body["messages"]
    for message in messages:
        if message["role"] in ("system", "developer"):
            if isinstance(message["content"], str):
                message["content"] = [{"type": "text", "text": message["content"], "cache_control": marker}]
            break
    if body.get("tools"):
        body["tools"][-1]["cache_control"] = marker
    for message in reversed(messages):
        if message["role"] not in ("user", "assistant"):
            continue
        content = message.get("content")
        if isinstance(content, str) and content:
            message["content"] = [{"type": "text", "text": content, "cache_control": marker}]
            return
        if isinstance(content, list):
            texts = [p for p in content if p.get("type") == "text"]
            if texts:
                texts[-1]["cache_control"] = marker
                return
