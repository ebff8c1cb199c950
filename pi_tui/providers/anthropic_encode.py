"""The request pi 0.73.1 sends to Anthropic's Messages API (pi-behaviour.md §15.2–15.8).

Pure data in, pure data out: ``build_anthropic_body(request)`` is the JSON object in pi's key
order (``model, messages, max_tokens, stream, system, tools, thinking, output_config``) and
``anthropic_headers(request, body)`` the headers. What matters most, and why:

* **Thinking continuity**: a signed thinking block of the same model is replayed as
  ``{"type": "thinking", "thinking", "signature"}`` ahead of its ``tool_use`` — without it the API
  answers 400 to the request after a tool call when thinking is on.
* **Caching**: three ``cache_control`` markers (last tool, system block, newest user block) make
  every request after the first read the previous prefix from the cache instead of paying for it
  as fresh input (§15.6).
* **Thinking budget**: ``max_tokens`` grows by the budget so the answer still has room (§15.3).
"""

from __future__ import annotations

import copy
import os
import re
from typing import Any

from pi_tui.core.provider import CompletionRequest, ModelInfo, ToolSpec
from pi_tui.providers.anthropic_models import DEFAULT_BASE_URL, is_adaptive
from pi_tui.providers.openai_encode import cache_retention, clamp_level, max_output_tokens, sanitize
from pi_tui.providers.replay_transform import transform_for_replay

API_VERSION = "2023-06-01"
FINE_GRAINED_TOOL_STREAMING_BETA = "fine-grained-tool-streaming-2025-05-14"
INTERLEAVED_THINKING_BETA = "interleaved-thinking-2025-05-14"
OAUTH_BETAS = ("claude-code-20250219", "oauth-2025-04-20")
CLAUDE_CODE_IDENTITY = "You are Claude Code, Anthropic's official CLI for Claude."
CLAUDE_CODE_USER_AGENT = "claude-cli/2.1.75"
DEFAULT_THINKING_BUDGETS = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384}
MIN_OUTPUT_TOKENS = 1024
NO_TEXT_TOOL_RESULT = "(see attached image)"
_ID_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
_CLAUDE_CODE_TOOLS = {name.lower(): name for name in (
    "Read", "Write", "Edit", "Bash", "Grep", "Glob", "AskUserQuestion", "EnterPlanMode", "ExitPlanMode",
    "KillShell", "NotebookEdit", "Skill", "Task", "TaskOutput", "TodoWrite", "WebFetch", "WebSearch",
)}


def is_oauth_token(api_key: str | None) -> bool:
    return bool(api_key) and "sk-ant-oat" in str(api_key)


def normalize_tool_call_id(call_id: str) -> str:
    """Another model's tool-call id as Anthropic accepts it (§15.8): ``[A-Za-z0-9_-]``, ≤ 64."""
    return _ID_UNSAFE.sub("_", call_id)[:64]


def base_url(model: ModelInfo, env: dict[str, str] | None = None) -> str:
    """models.json ``baseUrl``, else ``ANTHROPIC_BASE_URL`` (or litellm's ``ANTHROPIC_API_BASE``),
    else the public API. Without ``/v1``: the client appends ``/v1/messages``, as pi's SDK does."""
    environ = os.environ if env is None else env
    chosen = model.base_url or environ.get("ANTHROPIC_BASE_URL") or environ.get("ANTHROPIC_API_BASE") or DEFAULT_BASE_URL
    return chosen.rstrip("/")


def _compat_flag(model: ModelInfo, name: str) -> bool:
    value = model.compat.get(name)
    return True if value is None else bool(value)


def cache_marker(model: ModelInfo) -> dict[str, str] | None:
    """``{"type": "ephemeral"}`` (+ ``ttl: 1h`` for long retention), None without caching."""
    retention = cache_retention()
    if retention == "none":
        return None
    if retention == "long" and _compat_flag(model, "supportsLongCacheRetention"):
        return {"type": "ephemeral", "ttl": "1h"}
    return {"type": "ephemeral"}


# --------------------------------------------------------------------------- thinking (§15.3)


def thinking_fields(request: CompletionRequest) -> tuple[int, dict[str, Any]]:
    """``max_tokens`` and the ``thinking``/``output_config`` keys for the request's level."""
    model = request.model
    base = max_output_tokens(request) or (model.max_tokens // 3 if model.max_tokens > 0 else 0)
    if not model.reasoning:
        return base, {}
    level = clamp_level(request.reasoning, model.thinking_level_map)
    if level is None:
        return base, {"thinking": {"type": "disabled"}}
    if is_adaptive(model.id):
        mapped = model.thinking_level_map.get(level)
        effort = mapped if isinstance(mapped, str) else {"minimal": "low", "low": "low", "medium": "medium"}.get(level, "high")
        return base, {"thinking": {"type": "adaptive", "display": "summarized"}, "output_config": {"effort": effort}}
    budgets = {**DEFAULT_THINKING_BUDGETS, **(request.thinking_budgets or {})}  # the setting wins (§15.1)
    budget = budgets["high" if level == "xhigh" else level]
    max_tokens = min(base + budget, model.max_tokens)
    if max_tokens <= budget:
        budget = max(0, max_tokens - MIN_OUTPUT_TOKENS)
    return max_tokens, {"thinking": {"type": "enabled", "budget_tokens": budget or 1024, "display": "summarized"}}


# --------------------------------------------------------------------------- messages (§15.7)


def _image(block: dict[str, Any]) -> dict[str, Any]:
    return {"type": "image", "source": {"type": "base64", "media_type": block.get("mimeType", ""), "data": block.get("data", "")}}


def _user_blocks(content: list[Any]) -> list[dict[str, Any]]:
    blocks = []
    for block in content:
        if block.get("type") == "text":
            if block.get("text", "").strip():
                blocks.append({"type": "text", "text": sanitize(block["text"])})
        elif block.get("type") == "image":
            blocks.append(_image(block))
    return blocks


def _assistant_blocks(message: dict[str, Any], oauth: bool) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for block in message.get("content", []):
        kind = block.get("type")
        if kind == "text":
            if block.get("text", "").strip():
                blocks.append({"type": "text", "text": sanitize(block["text"])})
        elif kind == "thinking":
            if block.get("redacted"):
                blocks.append({"type": "redacted_thinking", "data": block.get("thinkingSignature", "")})
                continue
            text = block.get("thinking", "")
            if not text.strip():
                continue
            signature = block.get("thinkingSignature") or ""
            if not signature.strip():
                blocks.append({"type": "text", "text": sanitize(text)})
            else:
                blocks.append({"type": "thinking", "thinking": sanitize(text), "signature": signature})
        elif kind == "toolCall":
            name = str(block.get("name", ""))
            # input is copied: the body must share nothing with the history (the loop hands over
            # the history's own messages, and a before_provider_request handler may edit the body)
            blocks.append({"type": "tool_use", "id": block.get("id", ""),
                           "name": _CLAUDE_CODE_TOOLS.get(name.lower(), name) if oauth else name,
                           "input": copy.deepcopy(block.get("arguments") or {})})
    return blocks


def _tool_result(message: dict[str, Any]) -> dict[str, Any]:
    content = message.get("content", [])
    if any(b.get("type") == "image" for b in content):
        parts: list[dict[str, Any]] = [
            {"type": "text", "text": sanitize(b.get("text", ""))} if b.get("type") == "text" else _image(b)
            for b in content if b.get("type") in ("text", "image")
        ]
        if not any(p["type"] == "text" for p in parts):
            parts.insert(0, {"type": "text", "text": NO_TEXT_TOOL_RESULT})
        value: Any = parts
    else:
        value = sanitize("\n".join(b.get("text", "") for b in content if b.get("type") == "text"))
    return {"type": "tool_result", "tool_use_id": message.get("toolCallId", ""), "content": value,
            "is_error": bool(message.get("isError"))}


def encode_messages(request: CompletionRequest, marker: dict[str, str] | None, *, oauth: bool = False) -> list[dict[str, Any]]:
    messages = transform_for_replay(request.messages, request.model, normalize_tool_call_id)
    wire: list[dict[str, Any]] = []
    i = 0
    while i < len(messages):
        message = messages[i]
        role = message.get("role")
        if role == "toolResult":
            results = []
            while i < len(messages) and messages[i].get("role") == "toolResult":
                results.append(_tool_result(messages[i]))
                i += 1
            wire.append({"role": "user", "content": results})
            continue
        if role == "user":
            content = message.get("content")
            if isinstance(content, str):
                if content.strip():
                    wire.append({"role": "user", "content": sanitize(content)})
            elif content:
                blocks = _user_blocks(content)
                if blocks:
                    wire.append({"role": "user", "content": blocks})
        elif role == "assistant":
            blocks = _assistant_blocks(message, oauth)
            if blocks:
                wire.append({"role": "assistant", "content": blocks})
        i += 1
    if marker is not None and wire and wire[-1]["role"] == "user":
        last = wire[-1]
        if isinstance(last["content"], str):
            last["content"] = [{"type": "text", "text": last["content"], "cache_control": marker}]
        elif last["content"] and last["content"][-1].get("type") in ("text", "image", "tool_result"):
            last["content"][-1]["cache_control"] = marker
    return wire


# --------------------------------------------------------------------------- top level (§15.4, §15.5)


def encode_tools(tools: list[ToolSpec], model: ModelInfo, marker: dict[str, str] | None, *, oauth: bool = False) -> list[dict[str, Any]]:
    eager = _compat_flag(model, "supportsEagerToolInputStreaming")
    out = []
    for index, tool in enumerate(tools):
        schema = tool.parameters
        entry: dict[str, Any] = {"name": _CLAUDE_CODE_TOOLS.get(tool.name.lower(), tool.name) if oauth else tool.name,
                                 "description": tool.description}
        if eager:
            entry["eager_input_streaming"] = True
        entry["input_schema"] = {"type": "object", "properties": schema.get("properties") or {},
                                 "required": schema.get("required") or []}
        if marker is not None and index == len(tools) - 1:
            entry["cache_control"] = marker
        out.append(entry)
    return out


def build_anthropic_body(request: CompletionRequest) -> dict[str, Any]:
    """pi's Messages API body for this request, keys in pi's order (§15.4)."""
    model = request.model
    oauth = is_oauth_token(request.api_key)
    marker = cache_marker(model)
    max_tokens, thinking = thinking_fields(request)
    body: dict[str, Any] = {"model": model.id, "messages": encode_messages(request, marker, oauth=oauth),
                            "max_tokens": max_tokens, "stream": True}
    system: list[dict[str, Any]] = []
    if oauth:
        system.append({"type": "text", "text": CLAUDE_CODE_IDENTITY})
    if request.system_prompt:
        system.append({"type": "text", "text": sanitize(request.system_prompt)})
    if system:
        body["system"] = [{**block, "cache_control": marker} if marker else block for block in system]
    if request.tools:
        body["tools"] = encode_tools(request.tools, model, marker, oauth=oauth)
    body.update(thinking)
    return body


def anthropic_headers(request: CompletionRequest, body: dict[str, Any]) -> dict[str, str]:
    """Auth, version and betas (§15.2), then the model's headers (later sources win)."""
    model = request.model
    key = request.api_key or ""
    betas: list[str] = []
    if body.get("tools") and not _compat_flag(model, "supportsEagerToolInputStreaming"):
        betas.append(FINE_GRAINED_TOOL_STREAMING_BETA)
    if not is_adaptive(model.id):
        betas.append(INTERLEAVED_THINKING_BETA)
    headers = {"accept": "application/json", "anthropic-dangerous-direct-browser-access": "true",
               "anthropic-version": API_VERSION, "content-type": "application/json"}
    if is_oauth_token(key):
        headers["authorization"] = f"Bearer {key}"
        headers["anthropic-beta"] = ",".join([*OAUTH_BETAS, *betas])
        headers["user-agent"] = CLAUDE_CODE_USER_AGENT  # pi's, with the Claude Code identity (§15.2)
        headers["x-app"] = "cli"
    else:
        if key:
            headers["x-api-key"] = key
        if betas:
            headers["anthropic-beta"] = ",".join(betas)
    headers.update(model.headers)
    return headers
