"""What the fake Anthropic Messages API rejects, with the real API's error shapes and texts.

The fake must be as strict as the real API, or a client bug that the real API answers with a 400
(a thinking block dropped before a ``tool_use``, a made-up signature, a fifth cache marker) would
pass every test. ``check_request(headers, body, config)`` returns the first problem as an
``ApiError`` (HTTP status, error ``type``, message), or None when the request is acceptable.

Error texts are the real API's where they are known (pi-behaviour.md §15, captures of the real
API quoted in the issue tracker); the envelope is always the real one::

    {"type": "error", "error": {"type": "invalid_request_error", "message": "..."}, "request_id": "req_..."}

Signatures: the fake signs every thinking block it streams with an HMAC of the thinking text
(``sign_thinking``) and every redacted block's data with an HMAC of its payload, so a replayed
block whose text was changed, or whose signature was invented (``"reasoning_content"``), is
rejected exactly like the real API rejects it.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
from dataclasses import dataclass
from typing import Any

SIGNING_KEY = b"pi-tui fake anthropic signing key"
KNOWN_BETAS = frozenset({
    "interleaved-thinking-2025-05-14",
    "fine-grained-tool-streaming-2025-05-14",
    "claude-code-20250219",
    "oauth-2025-04-20",
    "context-1m-2025-08-07",
    "prompt-caching-2024-07-31",
    "token-efficient-tools-2025-02-19",
    "output-128k-2025-02-19",
})
TOP_LEVEL_KEYS = frozenset({
    "model", "messages", "max_tokens", "stream", "system", "temperature", "top_p", "top_k", "tools",
    "tool_choice", "thinking", "output_config", "metadata", "stop_sequences", "service_tier", "container",
    "mcp_servers", "context_management",
})
MAX_CACHE_MARKERS = 4
MIN_THINKING_BUDGET = 1024
THINKING_DOCS = "Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking"
STATUS_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


@dataclass(frozen=True, slots=True)
class ApiError:
    status: int
    type: str
    message: str

    def body(self, request_id: str) -> dict[str, Any]:
        return {"type": "error", "error": {"type": self.type, "message": self.message}, "request_id": request_id}


def _invalid(message: str) -> ApiError:
    return ApiError(400, "invalid_request_error", message)


# --------------------------------------------------------------------------- signatures


def _mac(kind: str, text: str) -> str:
    digest = hmac.new(SIGNING_KEY, f"{kind}\0{text}".encode(), hashlib.sha256).digest()
    return base64.b64encode(digest).decode("ascii")


def sign_thinking(thinking: str) -> str:
    """The signature the fake streams for a thinking block (base64, like the real ``Eq...``)."""
    return "EqQB" + _mac("thinking", thinking)


def redacted_data(payload: str) -> str:
    """An opaque redacted-thinking ``data`` string the fake can later verify."""
    raw = base64.b64encode(payload.encode()).decode("ascii")
    return f"EmwK{raw}.{_mac('redacted', raw)}"


def _valid_redacted(data: Any) -> bool:
    if not isinstance(data, str) or not data.startswith("EmwK") or "." not in data:
        return False
    raw, _, mac = data[4:].rpartition(".")
    return hmac.compare_digest(mac, _mac("redacted", raw))


# --------------------------------------------------------------------------- headers


def check_headers(headers: dict[str, str], api_key: str | None) -> ApiError | None:
    """``x-api-key`` (or an OAuth bearer token), ``anthropic-version``, ``anthropic-beta``."""
    key = headers.get("x-api-key")
    bearer = headers.get("authorization", "")
    if not key and bearer.lower().startswith("bearer "):
        key = bearer[7:].strip()  # OAuth tokens, and API keys from newer SDKs
    if not key:
        return ApiError(401, "authentication_error", "x-api-key header is required")
    if api_key is not None and key != api_key:
        return ApiError(401, "authentication_error", "invalid x-api-key")
    version = headers.get("anthropic-version")
    if not version:
        return _invalid("anthropic-version: header is required")
    if not re.fullmatch(r"20\d\d-\d\d-\d\d", version) or version < "2023-01-01":
        return _invalid(f"anthropic-version: invalid version {version!r}")
    betas = [b.strip() for b in headers.get("anthropic-beta", "").split(",") if b.strip()]
    unknown = [b for b in betas if b not in KNOWN_BETAS]
    if unknown:
        return _invalid(f"Unexpected value(s) `{', '.join(unknown)}` for the `anthropic-beta` header. Please consult "
                        "our documentation at docs.anthropic.com or try again without the header.")
    if "json" not in headers.get("content-type", ""):
        return _invalid("Content-Type must be application/json")
    return None


# --------------------------------------------------------------------------- body


def check_body(body: Any, *, models: list[str] | None = None) -> ApiError | None:
    """The body rules, in the order the real API reports them (first problem wins)."""
    if not isinstance(body, dict):
        return _invalid("There was an error parsing the body")
    for key in body:
        if key not in TOP_LEVEL_KEYS:
            return _invalid(f"{key}: Extra inputs are not permitted")
    for key in ("model", "messages", "max_tokens"):
        if key not in body:
            return _invalid(f"{key}: Field required")
    if not isinstance(body["model"], str) or (models and body["model"] not in models):
        return ApiError(404, "not_found_error", f"model: {body['model']}")
    max_tokens = body["max_tokens"]
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
        return _invalid("max_tokens: Input should be greater than or equal to 1")
    return (
        _check_thinking(body)
        or _check_system(body.get("system"))
        or _check_tools(body.get("tools"))
        or _check_messages(body["messages"], thinking_on=_thinking_on(body))
        or _check_cache_markers(body)
    )


def _thinking_on(body: dict[str, Any]) -> bool:
    thinking = body.get("thinking")
    return isinstance(thinking, dict) and thinking.get("type") in ("enabled", "adaptive")


def _check_thinking(body: dict[str, Any]) -> ApiError | None:
    thinking = body.get("thinking")
    if thinking is None:
        return None
    if not isinstance(thinking, dict) or thinking.get("type") not in ("enabled", "disabled", "adaptive"):
        return _invalid("thinking: Input tag does not match any of the expected tags: 'enabled', 'disabled', 'adaptive'")
    if thinking["type"] == "enabled":
        budget = thinking.get("budget_tokens")
        if not isinstance(budget, int):
            return _invalid("thinking.enabled.budget_tokens: Field required")
        if budget < MIN_THINKING_BUDGET:
            return _invalid(f"thinking.enabled.budget_tokens: Input should be greater than or equal to {MIN_THINKING_BUDGET}")
        if budget >= body["max_tokens"]:
            return _invalid("`max_tokens` must be greater than `thinking.budget_tokens`. "
                            f"{THINKING_DOCS}#max-tokens-and-context-window-size")
    if thinking.get("display") not in (None, "summarized", "omitted"):
        return _invalid(f"thinking.{thinking['type']}.display: Input should be 'summarized' or 'omitted'")
    if thinking["type"] != "disabled" and body.get("temperature") not in (None, 1):
        return _invalid("`temperature` may only be set to 1 when thinking is enabled. " + THINKING_DOCS)
    return None


def _check_system(system: Any) -> ApiError | None:
    if system is None or isinstance(system, str):
        return None
    if not isinstance(system, list):
        return _invalid("system: Input should be a valid list")
    for i, block in enumerate(system):
        if not isinstance(block, dict) or block.get("type") != "text" or not isinstance(block.get("text"), str):
            return _invalid(f"system.{i}: Input should be a text block")
        if not block["text"].strip():
            return _invalid(f"system.{i}.text: text content blocks must contain non-whitespace text")
    return None


def _check_tools(tools: Any) -> ApiError | None:
    if tools is None:
        return None
    if not isinstance(tools, list):
        return _invalid("tools: Input should be a valid list")
    names: set[str] = set()
    for i, tool in enumerate(tools):
        if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
            return _invalid(f"tools.{i}.custom.name: Field required")
        allowed = {"name", "description", "input_schema", "cache_control", "eager_input_streaming", "type", "strict"}
        for key in tool:
            if key not in allowed:
                return _invalid(f"tools.{i}.custom.{key}: Extra inputs are not permitted")
        schema = tool.get("input_schema")
        if not isinstance(schema, dict):
            return _invalid(f"tools.{i}.custom.input_schema: Field required")
        if schema.get("type") != "object":
            return _invalid(f"tools.{i}.custom.input_schema.type: Input should be 'object'")
        if tool["name"] in names:
            return _invalid("tools: Tool names must be unique.")
        names.add(tool["name"])
    return None


_USER_BLOCKS = ("text", "image", "tool_result", "document")
_ASSISTANT_BLOCKS = ("text", "thinking", "redacted_thinking", "tool_use")
_BLOCK_KEYS = {
    "text": {"type", "text", "cache_control", "citations"},
    "image": {"type", "source", "cache_control"},
    "document": {"type", "source", "cache_control", "title", "context", "citations"},
    "tool_result": {"type", "tool_use_id", "content", "is_error", "cache_control"},
    "tool_use": {"type", "id", "name", "input", "cache_control"},
    "thinking": {"type", "thinking", "signature"},  # no cache_control: thinking blocks cannot be marked
    "redacted_thinking": {"type", "data"},
}
"""The keys each content block takes; anything else (a client's own ``thinkingSignature``,
``textSignature``, ``partialJson``...) is ``Extra inputs are not permitted``, as from the API."""
_TOOL_RESULT_BLOCKS = ("text", "image", "document", "search_result")


def _check_messages(messages: Any, *, thinking_on: bool) -> ApiError | None:
    if not isinstance(messages, list) or not messages:
        return _invalid("messages: at least one message is required")
    for i, message in enumerate(messages):
        problem = _check_message_shape(i, message, last=i == len(messages) - 1)
        if problem:
            return problem
    return _check_tool_pairing(messages) or (_check_thinking_continuity(messages) if thinking_on else None)


def _check_message_shape(i: int, message: Any, *, last: bool) -> ApiError | None:
    if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
        return _invalid(f"messages.{i}.role: Input should be 'user' or 'assistant'")
    for key in message:
        if key not in ("role", "content"):
            return _invalid(f"messages.{i}.{key}: Extra inputs are not permitted")
    content = message.get("content")
    if isinstance(content, str):
        if not content and not (last and message["role"] == "assistant"):
            return _invalid(f"messages.{i}: all messages must have non-empty content except for the optional final "
                            "assistant message")
        return None
    if not isinstance(content, list):
        return _invalid(f"messages.{i}.content: Input should be a valid string or list")
    if not content and not (last and message["role"] == "assistant"):
        return _invalid(f"messages.{i}: all messages must have non-empty content except for the optional final "
                        "assistant message")
    allowed = _USER_BLOCKS if message["role"] == "user" else _ASSISTANT_BLOCKS
    seen_other = False
    for j, block in enumerate(content):
        kind = block.get("type") if isinstance(block, dict) else None
        if kind not in allowed:
            return _invalid(f"messages.{i}.content.{j}.type: Input tag '{kind}' found using 'type' does not match "
                            f"any of the expected tags: {', '.join(repr(a) for a in allowed)}")
        problem = _check_block(i, j, block)
        if problem:
            return problem
        if kind == "tool_result" and seen_other:
            return _invalid(f"messages.{i}.content.{j}: `tool_result` blocks must come before any other content "
                            "in a user message")
        seen_other = seen_other or kind != "tool_result"
    return None


def _extra_key(where: str, block: dict[str, Any]) -> ApiError | None:
    kind = block["type"]
    for key in block:
        if key not in _BLOCK_KEYS.get(kind, {key}):
            return _invalid(f"{where}.{kind}.{key}: Extra inputs are not permitted")
    return None


def _check_block(i: int, j: int, block: dict[str, Any]) -> ApiError | None:
    kind = block["type"]
    where = f"messages.{i}.content.{j}"
    problem = _extra_key(where, block)
    if problem is not None:
        return problem
    if kind == "text":
        if not isinstance(block.get("text"), str) or not block["text"]:
            return _invalid("messages: text content blocks must be non-empty")
        if not block["text"].strip():
            return _invalid(f"{where}.text: text content blocks must contain non-whitespace text")
    elif kind == "thinking":
        if not isinstance(block.get("signature"), str):
            return _invalid(f"{where}.thinking.signature: Field required")
        if not hmac.compare_digest(block["signature"], sign_thinking(str(block.get("thinking", "")))):
            return _invalid(f"{where}: Invalid `signature` in `thinking` block")
    elif kind == "redacted_thinking":
        if not _valid_redacted(block.get("data")):
            return _invalid(f"{where}: Invalid `data` in `redacted_thinking` block")
    elif kind == "tool_use":
        if not isinstance(block.get("input"), dict):
            return _invalid(f"{where}.tool_use.input: Input should be a valid dictionary")
        if not isinstance(block.get("id"), str) or not _valid_tool_id(block["id"]):
            return _invalid(f"{where}.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'")
    elif kind == "tool_result":
        if not isinstance(block.get("tool_use_id"), str) or not _valid_tool_id(block["tool_use_id"]):
            return _invalid(f"{where}.tool_result.tool_use_id: String should match pattern '^[a-zA-Z0-9_-]+$'")
        if "is_error" in block and not isinstance(block["is_error"], bool):
            return _invalid(f"{where}.tool_result.is_error: Input should be a valid boolean")
        content = block.get("content", "")
        if not isinstance(content, (str, list)):
            return _invalid(f"{where}.tool_result.content: Input should be a valid string or list")
        for k, part in enumerate(content if isinstance(content, list) else []):
            kind_k = part.get("type") if isinstance(part, dict) else None
            if kind_k not in _TOOL_RESULT_BLOCKS:
                return _invalid(f"{where}.tool_result.content.{k}.type: Input tag '{kind_k}' found using 'type' does not "
                                f"match any of the expected tags: {', '.join(repr(t) for t in _TOOL_RESULT_BLOCKS)}")
            problem = _extra_key(f"{where}.tool_result.content.{k}", part)
            if problem is not None:
                return problem
    elif kind == "image":
        source = block.get("source")
        if not isinstance(source, dict) or source.get("type") != "base64" or not source.get("data"):
            return _invalid(f"{where}.image.source: Input should be a valid base64 image source")
    return None


def _valid_tool_id(value: str) -> bool:
    return 0 < len(value) <= 64 and all(c.isascii() and (c.isalnum() or c in "_-") for c in value)


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _check_tool_pairing(messages: list[dict[str, Any]]) -> ApiError | None:
    """Every ``tool_use`` is answered by a ``tool_result`` in the very next message, and every
    ``tool_result`` answers a ``tool_use`` of the message right before it."""
    for i, message in enumerate(messages):
        if message["role"] == "user":
            previous = messages[i - 1] if i > 0 else None
            asked = {b.get("id") for b in _blocks(previous)} if previous and previous["role"] == "assistant" else set()
            for j, block in enumerate(_blocks(message)):
                if block["type"] == "tool_result" and block.get("tool_use_id") not in asked:
                    return _invalid(f"messages.{i}.content.{j}: unexpected `tool_use_id` found in `tool_result` blocks: "
                                    f"{block.get('tool_use_id')}. Each `tool_result` block must have a corresponding "
                                    "`tool_use` block in the previous message.")
            continue
        uses = [b.get("id") for b in _blocks(message) if b["type"] == "tool_use"]
        if not uses:
            continue
        following = messages[i + 1] if i + 1 < len(messages) else None
        answered = {b.get("tool_use_id") for b in _blocks(following) if b["type"] == "tool_result"} if following else set()
        missing = [u for u in uses if u not in answered]
        if following is None:
            continue  # a final assistant message (prefill) may end with tool_use
        if missing:
            return _invalid(f"messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately after: "
                            f"{', '.join(str(m) for m in missing)}. Each `tool_use` block must have a corresponding "
                            "`tool_result` block in the next message.")
    return None


def _check_thinking_continuity(messages: list[dict[str, Any]]) -> ApiError | None:
    """With thinking on, an assistant turn still in progress must start with its thinking block:
    the real API's most common rejection of agents. A turn runs from the last user message that
    is not only tool results; its assistant → tool_result → assistant steps are one turn, and
    only its first assistant message must open with ``thinking``/``redacted_thinking`` (later
    steps think only with interleaved thinking)."""
    human = max((i for i, m in enumerate(messages)
                 if m["role"] == "user" and any(b["type"] != "tool_result" for b in _blocks(m) or [{"type": "text"}])),
                default=-1)
    first = next((i for i in range(human + 1, len(messages)) if messages[i]["role"] == "assistant"), None)
    if first is None:
        return None
    if not any(b["type"] == "tool_result" for m in messages[first + 1 :] for b in _blocks(m)):
        return None
    blocks = _blocks(messages[first])
    kind = blocks[0]["type"] if blocks else "text"
    if kind in ("thinking", "redacted_thinking"):
        return None
    return _invalid(
        f"messages.{first}.content.0.type: Expected `thinking` or `redacted_thinking`, but found `{kind}`. "
        "When `thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the "
        "lastmost set of `tool_use` and `tool_result` blocks). We recommend you include thinking blocks from previous "
        "turns. To avoid this requirement, disable `thinking`. " + THINKING_DOCS
    )


def _check_cache_markers(body: dict[str, Any]) -> ApiError | None:
    count = 0
    for tool in body.get("tools") or []:
        count += "cache_control" in tool
    system = body.get("system")
    if isinstance(system, list):
        count += sum("cache_control" in b for b in system if isinstance(b, dict))
    for message in body["messages"]:
        count += sum("cache_control" in b for b in _blocks(message))
    if count > MAX_CACHE_MARKERS:
        return _invalid(f"A maximum of {MAX_CACHE_MARKERS} blocks with cache_control may be provided. Found {count}.")
    seen_short = False
    for where, marker in _markers(body):
        if not isinstance(marker, dict) or marker.get("type") != "ephemeral" or marker.get("ttl") not in (None, "5m", "1h"):
            return _invalid(f"{where}.cache_control: Input should be {{'type': 'ephemeral', 'ttl'?: '5m' | '1h'}}")
        if marker.get("ttl") == "1h" and seen_short:  # longer TTLs must come first (Anthropic's caching docs)
            return _invalid("A ttl='1h' cache_control block must not come after a ttl='5m' cache_control block. Note that "
                            "blocks are processed in the following order: `tools`, `system`, `messages`.")
        seen_short = seen_short or marker.get("ttl") in (None, "5m")
    return None


def _markers(body: dict[str, Any]) -> list[tuple[str, Any]]:
    found = [(f"tools.{i}", t["cache_control"]) for i, t in enumerate(body.get("tools") or []) if "cache_control" in t]
    system = body.get("system")
    if isinstance(system, list):
        found += [(f"system.{i}", b["cache_control"]) for i, b in enumerate(system) if isinstance(b, dict) and "cache_control" in b]
    for i, message in enumerate(body["messages"]):
        found += [(f"messages.{i}.content.{j}", b["cache_control"]) for j, b in enumerate(_blocks(message)) if "cache_control" in b]
    return found
