"""The request pi 0.73.1 sends to the Gemini API (``api: google-generative-ai``, pi-behaviour.md
§15.15), as its Google SDK serializes it.

``build_gemini_body(request)`` is the JSON object in the SDK's key order (``contents,
systemInstruction, tools, generationConfig``; parts as ``functionCall``, ``functionResponse``,
``inlineData``, ``text``, ``thought``, ``thoughtSignature``), ``gemini_url`` and
``gemini_headers`` the rest of the POST. What matters most, and why:

* **Thought signatures**: a same-model thinking, text or function-call part goes back with the
  ``thoughtSignature`` it streamed with (when it looks like base64) — Gemini 3 refuses a
  function-call turn of the current turn without it, and the model reasons worse without the
  others. Another model's parts lose every signature and its thinking becomes plain text.
* **Thinking**: ``thinkingConfig`` by model family and level (``gemini_models``), with the
  ``thinkingBudgets`` setting on main calls; ``maxOutputTokens`` is never raised for thinking.
* **Tool results** are ``functionResponse`` parts (``{"output": T}`` or ``{"error": T}``), one
  user turn for a run of them; images inside it on Gemini 3, in an extra user turn before.
"""

from __future__ import annotations

import copy
import os
import platform
import re
from typing import Any

from pi_tui import __version__
from pi_tui.core.provider import CompletionRequest, ModelInfo
from pi_tui.providers.gemini_models import (
    DEFAULT_BASE_URL,
    looks_like_base64,
    requires_tool_call_id,
    takes_images_in_function_responses,
    thinking_config,
)
from pi_tui.providers.openai_encode import (
    NO_TEXT_TOOL_RESULT,
    clamp_level,
    max_output_tokens,
    sanitize,
)
from pi_tui.providers.replay_transform import transform_for_replay

TOOL_RESULT_IMAGE_TEXT = "Tool result image:"
_ID_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def base_url(model: ModelInfo) -> str:
    """models.json ``baseUrl`` (ends in ``/v1beta``, as pi's), else ``GEMINI_API_BASE`` (litellm's
    variable, same convention), else ``GOOGLE_GEMINI_BASE_URL`` (the Google SDK's, without the
    version), else Google's API."""
    if model.base_url:
        return model.base_url.rstrip("/")
    if os.environ.get("GEMINI_API_BASE"):
        return os.environ["GEMINI_API_BASE"].rstrip("/")
    if os.environ.get("GOOGLE_GEMINI_BASE_URL"):
        return os.environ["GOOGLE_GEMINI_BASE_URL"].rstrip("/") + "/v1beta"
    return DEFAULT_BASE_URL


def gemini_url(model: ModelInfo) -> str:
    return f"{base_url(model)}/models/{model.id}:streamGenerateContent?alt=sse"


def gemini_headers(request: CompletionRequest) -> dict[str, str]:
    """The key in ``x-goog-api-key`` (never in the URL, where logs would keep it), then the
    model's headers (a later source wins). ``x-goog-api-client`` follows Google's convention
    for it, ``<client>/<version> gl-<language>/<version>`` (pi's SDK sends
    ``google-genai-sdk/1.52.0 gl-node/v20...``, §15.15): Google attributes traffic by it."""
    headers = {"content-type": "application/json", "user-agent": f"pi-tui/{__version__}",
               "x-goog-api-client": f"pi-tui/{__version__} gl-python/{platform.python_version()}"}
    if request.api_key:
        headers["x-goog-api-key"] = request.api_key
    headers.update(request.model.headers)
    return headers


def _tool_call_id_normalizer(model: ModelInfo) -> Any:
    """Ids go on the wire only for ``claude-``/``gpt-oss-`` models, which need them sanitized."""
    if requires_tool_call_id(model.id):
        return lambda call_id: _ID_UNSAFE.sub("_", call_id)[:64]
    return lambda call_id: call_id


def _inline(block: dict[str, Any]) -> dict[str, Any]:
    return {"inlineData": {"data": block.get("data", ""), "mimeType": block.get("mimeType", "")}}


def _signed(part: dict[str, Any], signature: Any, same: bool) -> dict[str, Any]:
    if same and looks_like_base64(signature):
        part["thoughtSignature"] = signature
    return part


def _model_parts(message: dict[str, Any], model: ModelInfo) -> list[dict[str, Any]]:
    same = message.get("provider") == model.provider and message.get("model") == model.id
    parts: list[dict[str, Any]] = []
    for block in message.get("content", []):
        kind = block.get("type")
        if kind == "text":
            if block.get("text", "").strip():
                parts.append(_signed({"text": sanitize(block["text"])}, block.get("textSignature"), same))
        elif kind == "thinking":
            if not block.get("thinking", "").strip():
                continue
            if same:
                parts.append(_signed({"text": sanitize(block["thinking"]), "thought": True}, block.get("thinkingSignature"), same))
            else:
                parts.append({"text": sanitize(block["thinking"])})
        elif kind == "toolCall":
            call: dict[str, Any] = {}
            if requires_tool_call_id(model.id):
                call["id"] = block.get("id", "")
            # copied: the body must share nothing with the history (the loop hands over the
            # history's own messages, and a before_provider_request handler may edit the body)
            call["args"] = copy.deepcopy(block.get("arguments") or {})
            call["name"] = block.get("name", "")
            parts.append(_signed({"functionCall": call}, block.get("thoughtSignature"), same))
    return parts


def _function_response(message: dict[str, Any], model: ModelInfo) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The ``functionResponse`` part and the images it carries."""
    content = message.get("content", [])
    text = "\n".join(b.get("text", "") for b in content if b.get("type") == "text")
    images = [b for b in content if b.get("type") == "image"] if model.supports_images else []
    value = sanitize(text) if text else (NO_TEXT_TOOL_RESULT if images else "")
    response: dict[str, Any] = {"name": message.get("toolName", ""),
                                "response": {"error": value} if message.get("isError") else {"output": value}}
    image_parts = [{"inlineData": {"mimeType": b.get("mimeType", ""), "data": b.get("data", "")}} for b in images]
    if image_parts and takes_images_in_function_responses(model.id):
        response["parts"] = image_parts
    if requires_tool_call_id(model.id):
        response["id"] = message.get("toolCallId", "")
    return {"functionResponse": response}, image_parts


def encode_contents(request: CompletionRequest) -> list[dict[str, Any]]:
    """``contents``: pi's messages after the replay transform (§14.6), as Gemini turns."""
    model = request.model
    contents: list[dict[str, Any]] = []
    for message in transform_for_replay(request.messages, model, _tool_call_id_normalizer(model)):
        role = message.get("role")
        if role == "user":
            content = message.get("content")
            if isinstance(content, str):
                contents.append({"parts": [{"text": sanitize(content)}], "role": "user"})
                continue
            parts = [{"text": sanitize(b.get("text", ""))} if b.get("type") == "text" else _inline(b) for b in content or []
                     if b.get("type") in ("text", "image")]
            if parts:
                contents.append({"parts": parts, "role": "user"})
        elif role == "assistant":
            parts = _model_parts(message, model)
            if parts:
                contents.append({"parts": parts, "role": "model"})
        elif role == "toolResult":
            part, images = _function_response(message, model)
            last = contents[-1] if contents else None
            if last is not None and last["role"] == "user" and any("functionResponse" in p for p in last["parts"]):
                last["parts"].append(part)
            else:
                contents.append({"parts": [part], "role": "user"})
            if images and not takes_images_in_function_responses(model.id):
                contents.append({"parts": [{"text": TOOL_RESULT_IMAGE_TEXT}, *[_inline(i["inlineData"]) for i in images]],
                                 "role": "user"})
    return contents


def build_gemini_body(request: CompletionRequest) -> dict[str, Any]:
    """pi's ``streamGenerateContent`` body for this request, keys in the SDK's order."""
    model = request.model
    body: dict[str, Any] = {"contents": encode_contents(request)}
    if request.system_prompt:
        body["systemInstruction"] = {"parts": [{"text": sanitize(request.system_prompt)}], "role": "user"}
    if request.tools:
        body["tools"] = [{"functionDeclarations": [
            {"name": t.name, "description": t.description, "parametersJsonSchema": t.parameters} for t in request.tools]}]
    generation: dict[str, Any] = {}
    limit = max_output_tokens(request)
    if limit:
        generation["maxOutputTokens"] = limit
    level = clamp_level(request.reasoning, model.thinking_level_map) if model.reasoning else None
    thinking = thinking_config(model, level, request.thinking_budgets)
    if thinking is not None:
        generation["thinkingConfig"] = thinking
    body["generationConfig"] = generation
    return body
