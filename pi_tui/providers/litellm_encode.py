"""pi's messages as litellm's OpenAI-format arguments, for the routes litellm translates itself.

For an ``openai/...`` model litellm forwards pi's own body (``litellm_convert``). For the rest
litellm converts OpenAI-format messages to the provider's API, and what survives that
conversion is decided here, per family:

**Gemini** (``gemini/...``, ``vertex_ai/gemini-...``; pi-behaviour.md §15.15):

* a tool call's ``thoughtSignature`` travels as ``provider_specific_fields.thought_signature``
  (litellm puts it on the ``functionCall`` part; Gemini 3 rejects a function-call turn of the
  current turn without it, and litellm would otherwise send Google's "skip validation"
  placeholder, which Google says degrades the model);
* a text block's ``textSignature`` travels as the message's ``thought_signatures`` (the text part);
* thinking of the same model is ``reasoning_content`` (a ``thought: true`` part). litellm has no
  slot for a thinking block's own signature: it is not sent (pi sends it; Gemini validates only
  function-call signatures);
* tool results are ``{"output": T}`` or, when ``isError``, ``{"error": T}`` (litellm sends a JSON
  object content as the ``functionResponse.response`` verbatim);
* ``thinkingConfig`` is the native client's (``gemini_models``: levels for Gemini 3, budgets
  for 2.5 with the ``thinkingBudgets`` setting), ``max_tokens`` pi's base.

**Anthropic family** (``anthropic/...``, and Claude on ``bedrock/``, ``vertex_ai/``, ``azure_ai/``;
§15.3–15.8): signed thinking and redacted thinking travel as litellm's ``thinking_blocks``; the
three cache markers (last tool, system block, last user block) as OpenAI-format
``cache_control``; the level as ``thinking`` + ``max_tokens`` (+ ``output_config`` on adaptive
models) and the ``interleaved-thinking`` beta. litellm's tool messages have no error flag, so
``is_error`` cannot reach the API on this route (the native ``anthropic-messages`` client sends it).

Everything else (``ollama/``, ``groq/``, ...) gets plain OpenAI-format messages.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pi_tui.core.provider import CompletionRequest, ModelInfo
from pi_tui.providers.gemini_models import looks_like_base64, thinking_config
from pi_tui.providers.openai_encode import (
    NO_TEXT_TOOL_RESULT,
    cache_retention,
    clamp_level,
    max_output_tokens,
    model_compat,
    sanitize,
)
from pi_tui.providers.replay_transform import transform_for_replay

Family = Literal["openai", "anthropic", "gemini", "other"]
_ADAPTIVE = ("opus-4-6", "opus-4.6", "opus-4-7", "opus-4.7", "sonnet-4-6", "sonnet-4.6")
_BUDGETS = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384}
INTERLEAVED_THINKING_BETA = "interleaved-thinking-2025-05-14"


def litellm_name(model: ModelInfo) -> str:
    """The model name handed to litellm (``gemini/gemini-2.5-flash``)."""
    return model.litellm_model or f"{model.provider}/{model.id}"


def family_of(litellm_model: str) -> Family:
    """Which translation litellm applies to this model name."""
    provider, _, rest = litellm_model.partition("/")
    name = rest.lower()
    if provider == "openai":
        return "openai"
    if provider == "anthropic" or (provider in ("bedrock", "vertex_ai", "azure_ai") and "claude" in name):
        return "anthropic"
    if provider == "gemini" or (provider == "vertex_ai" and "gemini" in name):
        return "gemini"
    return "other"


# --------------------------------------------------------------------------- messages


def _user_content(content: Any, marker: dict[str, Any] | None) -> Any:
    if isinstance(content, str):
        text = sanitize(content)
        return [{"type": "text", "text": text, "cache_control": marker}] if marker else text
    parts: list[dict[str, Any]] = []
    for block in content:
        if block.get("type") == "text":
            parts.append({"type": "text", "text": sanitize(block.get("text", ""))})
        elif block.get("type") == "image":
            parts.append({"type": "image_url", "image_url": {"url": f"data:{block.get('mimeType', '')};base64,{block.get('data', '')}"}})
    if marker and parts:
        parts[-1]["cache_control"] = marker
    return parts


def _tool_text(message: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
    blocks = message.get("content", [])
    texts = [sanitize(b.get("text", "")) for b in blocks if b.get("type") == "text"]
    images = [{"type": "image_url", "image_url": {"url": f"data:{b.get('mimeType', '')};base64,{b.get('data', '')}"}}
              for b in blocks if b.get("type") == "image"]
    text = "\n".join(texts)
    if not texts and images:
        text = NO_TEXT_TOOL_RESULT
    return text, images


def _tool_message(message: dict[str, Any], family: Family, marker: dict[str, Any] | None) -> dict[str, Any]:
    text, images = _tool_text(message)
    if family == "gemini":
        text = json.dumps({"error" if message.get("isError") else "output": text}, ensure_ascii=False)
    content: Any = [{"type": "text", "text": text}, *images] if images else text
    out: dict[str, Any] = {"role": "tool", "tool_call_id": message.get("toolCallId", ""), "content": content}
    if marker:
        out["cache_control"] = marker
    return out


def _assistant(message: dict[str, Any], family: Family) -> dict[str, Any] | None:
    texts: list[dict[str, Any]] = []
    thinking_blocks: list[dict[str, Any]] = []
    reasoning: list[str] = []
    calls: list[dict[str, Any]] = []
    for block in message.get("content", []):
        kind = block.get("type")
        if kind == "text" and block.get("text", "").strip():
            texts.append(block)
        elif kind == "thinking":
            signature = block.get("thinkingSignature") or ""
            if family == "anthropic" and block.get("redacted"):
                thinking_blocks.append({"type": "redacted_thinking", "data": signature})
            elif not block.get("thinking", "").strip():
                continue
            elif family == "anthropic" and signature.strip():
                thinking_blocks.append({"type": "thinking", "thinking": sanitize(block["thinking"]), "signature": signature})
            elif family == "anthropic":  # unsigned thinking cannot be replayed as thinking (§15.7)
                texts.append({"type": "text", "text": block["thinking"]})
            else:
                reasoning.append(sanitize(block["thinking"]))
        elif kind == "toolCall":
            call: dict[str, Any] = {
                "id": block.get("id", ""), "type": "function",
                "function": {"name": block.get("name", ""), "arguments": json.dumps(block.get("arguments") or {}, ensure_ascii=False)},
            }
            if family == "gemini" and looks_like_base64(block.get("thoughtSignature")):
                call["provider_specific_fields"] = {"thought_signature": block["thoughtSignature"]}
            calls.append(call)
    out: dict[str, Any] = {"role": "assistant"}
    if family == "anthropic":
        out["content"] = [{"type": "text", "text": sanitize(b["text"])} for b in texts] or None
        if thinking_blocks:
            out["thinking_blocks"] = thinking_blocks
    else:
        signatures = [b["textSignature"] for b in texts if looks_like_base64(b.get("textSignature"))]
        if family == "gemini" and signatures:  # litellm signs a text part only for string content
            out["content"] = "".join(sanitize(b["text"]) for b in texts)
            out["provider_specific_fields"] = {"thought_signatures": [signatures[-1]]}
        elif family == "gemini" and len(texts) > 1:  # one part per block, as pi sends them
            out["content"] = [{"type": "text", "text": sanitize(b["text"])} for b in texts]
        else:
            out["content"] = "".join(sanitize(b["text"]) for b in texts) or None
        if reasoning:
            out["reasoning_content"] = "\n".join(reasoning)
    if calls:
        out["tool_calls"] = calls
    if not (out["content"] or calls or thinking_blocks or reasoning):
        return None
    return out


def cache_marker(model: ModelInfo) -> dict[str, Any]:
    """``{"type":"ephemeral"}``, with ``ttl: 1h`` under ``PI_CACHE_RETENTION=long`` (§15.6)."""
    long = cache_retention() == "long" and model_compat(model).supports_long_cache_retention
    return {"type": "ephemeral", "ttl": "1h"} if long else {"type": "ephemeral"}


def encode_messages(request: CompletionRequest, family: Family) -> list[dict[str, Any]]:
    """The ``messages`` argument for litellm (system first)."""
    marker = cache_marker(request.model) if family == "anthropic" else None
    wire: list[dict[str, Any]] = []
    if request.system_prompt:
        system = sanitize(request.system_prompt)
        wire.append({"role": "system", "content": [{"type": "text", "text": system, "cache_control": marker}] if marker else system})
    messages = transform_for_replay(request.messages, request.model)
    last = len(messages) - 1
    for index, message in enumerate(messages):
        role = message.get("role")
        # the marker goes on the last block of the last message, when that is a user-side turn
        mark = marker if index == last else None
        if role == "user":
            content = message.get("content")
            if content:
                wire.append({"role": "user", "content": _user_content(content, mark)})
        elif role == "toolResult":
            wire.append(_tool_message(message, family, mark))
        elif role == "assistant":
            encoded = _assistant(message, family)
            if encoded is not None:
                wire.append(encoded)
    return wire


# --------------------------------------------------------------------------- thinking


def is_adaptive(model: ModelInfo) -> bool:
    return any(name in model.id for name in _ADAPTIVE)


def _anthropic_thinking(request: CompletionRequest, level: str | None) -> dict[str, Any]:
    """``thinking``/``max_tokens``/``output_config`` as pi computes them (§15.3)."""
    model = request.model
    base = max_output_tokens(request)
    if not model.reasoning:
        return {"max_tokens": base}
    if level is None:
        return {"max_tokens": base, "thinking": {"type": "disabled"}}
    if is_adaptive(model):
        mapped = model.thinking_level_map.get(level)
        effort = mapped if isinstance(mapped, str) else {"minimal": "low", "low": "low", "medium": "medium"}.get(level, "high")
        return {"max_tokens": base, "thinking": {"type": "adaptive", "display": "summarized"}, "output_config": {"effort": effort}}
    budget = {**_BUDGETS, **(request.thinking_budgets or {})}.get(level, _BUDGETS["high"])
    limit = min(base + budget, model.max_tokens) if model.max_tokens > 0 else base
    if limit <= budget:
        budget = max(0, limit - 1024)
    return {"max_tokens": limit, "thinking": {"type": "enabled", "budget_tokens": budget or 1024, "display": "summarized"}}


def family_arguments(request: CompletionRequest, family: Family) -> dict[str, Any]:
    """The litellm keyword arguments beyond ``model``/``messages`` for one family."""
    model = request.model
    level = clamp_level(request.reasoning, model.thinking_level_map) if model.reasoning else None
    tools = [{"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}
             for t in request.tools]
    args: dict[str, Any] = {}
    if family == "anthropic":
        if tools:
            tools[-1]["cache_control"] = cache_marker(model)
        args.update(_anthropic_thinking(request, level))
        if not is_adaptive(model):
            args["extra_headers"] = {"anthropic-beta": INTERLEAVED_THINKING_BETA}
    elif family == "gemini":
        budget = max_output_tokens(request)
        if budget:
            args["max_tokens"] = budget
        thinking = thinking_config(model, level, request.thinking_budgets)
        if thinking is not None:
            args["thinkingConfig"] = thinking
        # signatures stay in provider_specific_fields; the id stays what the session stored
        args["thought_signature_in_tool_call_id"] = False
    else:
        budget = max_output_tokens(request)
        if budget:
            args["max_tokens"] = budget
        if level is not None:
            args["reasoning_effort"] = level
    if tools:
        args["tools"] = tools
    return args
