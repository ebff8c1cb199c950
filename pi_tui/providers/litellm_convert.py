"""Between pi's shapes and litellm's: call arguments, chunks, and failures.

Together with ``litellm_provider.py`` the only code that touches litellm objects. litellm itself is
never imported at module level here: the functions receive litellm objects (chunks, exceptions)
from the provider, which imported litellm lazily.

**What reaches the wire** for an OpenAI-compatible model (``litellm_model`` ``openai/...``): the
body of ``openai_encode.build_request_body`` — pi's body — sent through litellm's OpenAI client.
litellm rebuilds ``messages`` on its own (it drops ``"content": null`` from assistant tool-call
messages, for instance), so the encoded keys go in ``extra_body``, which the OpenAI SDK merges
over litellm's body: pi's ``messages`` replace litellm's copy, and ``store``,
``max_completion_tokens``, ``tools`` and the reasoning keys arrive verbatim. Measured on the fake
server: the body equals pi's key for key, in pi's key order
(``model, messages, stream, stream_options, store, max_completion_tokens, tools, ...``).
Compact JSON with raw UTF-8, as pi. The unavoidable difference: the HTTP headers are the Python
SDK's (``User-Agent: AsyncOpenAI/Python``, ``X-Stainless-Lang: python``, ...), not the JS SDK's.

For every other litellm provider (``anthropic/...``, ``gemini/...``, ``ollama/...``) the same
encoded messages and tools go in as litellm's standard arguments and litellm translates them to
that provider's API; unknown OpenAI-only keys (``store``) are not sent.
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any

from pi_tui.core.messages import ErrorKind
from pi_tui.core.provider import CompletionRequest
from pi_tui.providers.classify import (
    CONNECTION_ERROR_MESSAGE,
    classify_http_error,
    error_text,
    retry_after_ms,
    retry_info_ms,
)
from pi_tui.providers.litellm_encode import (
    Family,
    encode_messages,
    family_arguments,
    family_of,
    litellm_name,
)
from pi_tui.providers.openai_encode import build_request_body, model_compat, request_headers
from pi_tui.providers.stream_failures import CONNECTION_CUT_MESSAGE, TIMEOUT_MESSAGE

_TOP_LEVEL_KEYS = ("model", "stream", "stream_options")


def encoded_body(request: CompletionRequest) -> dict[str, Any]:
    """pi's OpenAI body for this request, after the ``on_payload`` hook (which may replace it)."""
    body = build_request_body(request, model_compat(request.model))
    if request.on_payload is not None:
        replaced = request.on_payload(body)
        if isinstance(replaced, dict):
            body = replaced
    return body


def is_openai_wire(litellm_model: str) -> bool:
    """Whether litellm talks to this model with its OpenAI client (our body goes through as is)."""
    return litellm_model.startswith("openai/")


def completion_kwargs(request: CompletionRequest, body: dict[str, Any], *, timeout: float) -> dict[str, Any]:
    """The keyword arguments for ``litellm.acompletion`` that send ``body``.

    ``body`` is pi's OpenAI body for ``openai/...`` models (``encoded_body``), else the
    family's arguments (``family_body``)."""
    model = request.model
    litellm_model = litellm_name(model)
    kwargs: dict[str, Any] = {
        "model": litellm_model,
        "messages": body.get("messages", []),
        "stream": True,
        "timeout": timeout,
        "max_retries": 0,  # retries belong to the session, where they are visible events
    }
    if model.base_url:
        kwargs["api_base"] = model.base_url
    if request.api_key:
        kwargs["api_key"] = request.api_key
    headers = request_headers(request)
    if is_openai_wire(litellm_model):
        if "stream_options" in body:
            kwargs["stream_options"] = body["stream_options"]
        if headers:
            kwargs["extra_headers"] = headers
        kwargs["extra_body"] = {k: v for k, v in body.items() if k not in _TOP_LEVEL_KEYS}
        return kwargs
    # Other providers: litellm's arguments, translated by litellm (``litellm_encode``).
    kwargs["stream_options"] = {"include_usage": True}
    extra = {k: v for k, v in body.items() if k not in ("model", "messages")}
    merged_headers = {**extra.pop("extra_headers", {}), **headers}
    if merged_headers:
        kwargs["extra_headers"] = merged_headers
    kwargs.update(extra)
    kwargs["drop_params"] = True
    return kwargs


def family_body(request: CompletionRequest) -> dict[str, Any]:
    """The litellm arguments for a model litellm translates itself, after the ``on_payload``
    hook (which sees, and may replace, exactly these arguments)."""
    family = family_of(litellm_name(request.model))
    body: dict[str, Any] = {"model": request.model.id, "messages": encode_messages(request, family)}
    body.update(family_arguments(request, family))
    if request.on_payload is not None:
        replaced = request.on_payload(body)
        if isinstance(replaced, dict):
            body = replaced
    return body


# --------------------------------------------------------------------------- chunks


def chunk_to_dict(chunk: Any, family: Family = "openai") -> dict[str, Any]:
    """A litellm ``ModelResponseStream`` as the plain chunk dict ``StreamAssembler`` reads, plus
    the provider fields ``litellm_continuity`` keeps (``thinking_blocks``,
    ``provider_specific_fields``).

    Attribute reads rather than ``model_dump()``: it runs once per streamed token.
    """
    out: dict[str, Any] = {"id": getattr(chunk, "id", None), "model": getattr(chunk, "model", None)}
    usage = getattr(chunk, "usage", None)
    if usage is not None:
        out["usage"] = _usage_dict(usage, family)
    choices = []
    for choice in getattr(chunk, "choices", None) or []:
        delta = getattr(choice, "delta", None)
        delta_dict: dict[str, Any] = {}
        if delta is not None:
            for name in ("content", "reasoning_content", "reasoning", "reasoning_text", "reasoning_details",
                         "thinking_blocks", "provider_specific_fields"):
                value = getattr(delta, name, None)
                if value:
                    delta_dict[name] = value
            calls = getattr(delta, "tool_calls", None)
            if calls:
                delta_dict["tool_calls"] = [_tool_call_dict(c) for c in calls]
        choices.append({"index": getattr(choice, "index", 0), "delta": delta_dict, "finish_reason": getattr(choice, "finish_reason", None)})
        break  # only choices[0] is read (§14.14)
    out["choices"] = choices
    return out


def _tool_call_dict(call: Any) -> dict[str, Any]:
    function = getattr(call, "function", None)
    out = {
        "index": getattr(call, "index", None),
        "id": getattr(call, "id", None),
        "function": {
            "name": getattr(function, "name", None) if function is not None else None,
            "arguments": getattr(function, "arguments", None) if function is not None else None,
        },
    }
    fields = getattr(call, "provider_specific_fields", None)
    if fields:
        out["provider_specific_fields"] = fields
    return out


def _usage_dict(usage: Any, family: Family = "openai") -> dict[str, Any]:
    """litellm's usage in the shape ``usage_from_openai`` reads (pi's §14.14 arithmetic).

    That arithmetic reads ``cached_tokens`` as cache reads *plus* writes (OpenRouter's meaning).
    For the Anthropic family litellm reports reads alone in ``cached_tokens``, so the writes are
    added here: the stored usage is then Anthropic's own (``input`` = uncached input only,
    ``cacheRead``/``cacheWrite`` apart, §15.10). Gemini reports no writes.
    """
    if family == "anthropic":
        details = getattr(usage, "prompt_tokens_details", None)
        read = int(getattr(usage, "cache_read_input_tokens", 0) or getattr(details, "cached_tokens", 0) or 0)
        written = int(getattr(usage, "cache_creation_input_tokens", 0) or 0)
        shaped: dict[str, Any] = {
            "prompt_tokens": getattr(usage, "prompt_tokens", 0) or 0,
            "completion_tokens": getattr(usage, "completion_tokens", 0) or 0,
        }
        if read or written:
            shaped["prompt_tokens_details"] = {"cached_tokens": read + written, "cache_write_tokens": written}
        return shaped
    details = getattr(usage, "prompt_tokens_details", None)
    out: dict[str, Any] = {
        "prompt_tokens": getattr(usage, "prompt_tokens", 0) or 0,
        "completion_tokens": getattr(usage, "completion_tokens", 0) or 0,
    }
    detail_dict: dict[str, int] = {}
    if details is not None:
        cached = getattr(details, "cached_tokens", None)
        write = getattr(details, "cache_write_tokens", None) or getattr(details, "cache_creation_tokens", None)
        if cached:
            detail_dict["cached_tokens"] = int(cached)
        if write:
            detail_dict["cache_write_tokens"] = int(write)
    # Anthropic through litellm reports cache writes here instead
    creation = getattr(usage, "cache_creation_input_tokens", None)
    if creation and "cache_write_tokens" not in detail_dict:
        detail_dict["cache_write_tokens"] = int(creation)
    if detail_dict:
        out["prompt_tokens_details"] = detail_dict
    return out


# --------------------------------------------------------------------------- failures


def _response_of(exc: BaseException) -> Any:
    response = getattr(exc, "response", None)
    if response is None or getattr(response, "request", None) is None:
        return None
    return response


def _raw_body(response: Any, exc: BaseException) -> str | None:
    """The HTTP error body as text: from the response when litellm kept it, else from the
    exception text (litellm's non-OpenAI handlers embed the body there, sometimes as ``b'...'``)."""
    try:
        raw = response.text if response is not None else None
    except Exception:  # a streamed response whose body was not read
        raw = None
    if raw:
        return str(raw)
    tail = _strip_litellm_prefix(str(exc)).strip()
    if tail.startswith(("b'", 'b"')):
        try:
            value = ast.literal_eval(tail)
        except (ValueError, SyntaxError):
            return tail
        return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
    return tail if tail.startswith("{") else None


def _error_text(status: int, raw: str | None, exc: BaseException) -> tuple[str, str | None]:
    """pi's error text (§14.2) from the HTTP body, and the error ``code`` when there is one."""
    if raw is not None:
        return error_text(status, raw)
    body = getattr(exc, "body", None)
    if isinstance(body, dict):  # litellm kept only the parsed ``error`` object
        return error_text(status, json.dumps({"error": body}))
    return f"{status} {_strip_litellm_prefix(str(exc))}", None


_LITELLM_PREFIX = re.compile(r"^litellm\.\w+: .*?\w+(?:Exception|Error)(?: \w+Error)? - ", re.DOTALL)


def _strip_litellm_prefix(text: str) -> str:
    """``litellm.RateLimitError: RateLimitError: OpenAIException - X`` → ``X`` (also litellm's
    ``AnthropicError - X`` and ``AnthropicException BadGatewayError - X``)."""
    match = _LITELLM_PREFIX.match(text)
    if match:
        return text[match.end():]
    marker = "Exception - "
    return text.split(marker, 1)[1] if marker in text else text


def _headers_of(exc: BaseException) -> Any:
    for source in (getattr(exc, "litellm_response_headers", None), getattr(_response_of(exc), "headers", None)):
        if source is not None:
            return source
    return None


def _retry_after(exc: BaseException) -> int | None:
    headers = _headers_of(exc)
    return retry_after_ms(headers) if headers is not None else None


_CONNECTION_ERRORS = ("APIConnectionError", "ConnectError", "RemoteProtocolError", "ReadError", "ConnectionError")


def _is_connection_failure(exc: BaseException) -> bool:
    """Whether no HTTP answer arrived at all (refused, reset, DNS...)."""
    seen: BaseException | None = exc
    for _ in range(6):
        if seen is None:
            break
        if type(seen).__name__ in _CONNECTION_ERRORS or isinstance(seen, ConnectionError):
            return True
        seen = seen.__cause__ or seen.__context__
    return _strip_litellm_prefix(str(exc)).strip() == CONNECTION_ERROR_MESSAGE


def classify_exception(exc: BaseException) -> tuple[str, ErrorKind, int | None]:
    """(errorMessage, errorKind, retryAfterMs) for anything litellm raised."""
    name = type(exc).__name__
    if name == "MidStreamFallbackError":
        original = getattr(exc, "original_exception", None)
        if original is not None and type(original).__name__ not in ("APIConnectionError", "MidStreamFallbackError"):
            return classify_exception(original)
        return CONNECTION_CUT_MESSAGE, "transient", None
    if name in ("Timeout", "APITimeoutError") or isinstance(exc, TimeoutError):
        return TIMEOUT_MESSAGE, "transient", None
    if _is_connection_failure(exc):  # litellm dresses these up as a 500 with a synthetic response
        return CONNECTION_ERROR_MESSAGE, "transient", None
    status = getattr(exc, "status_code", None)
    if not isinstance(status, int):
        return f"{name}: {_strip_litellm_prefix(str(exc))}", "unknown", None
    raw = _raw_body(_response_of(exc), exc)
    google = _google_error(raw)
    # litellm reports Gemini's 503 and Anthropic's 529 as a 500; the body says what it was
    code_in_body = google.get("code") if google else None
    if isinstance(code_in_body, int) and 400 <= code_in_body < 600:
        status = code_in_body
    elif status == 500 and raw and '"overloaded_error"' in raw:
        status = 529
    if raw and raw.lstrip()[:15].lower().startswith(("<!doctype html", "<html")):
        title = _HTML_TITLE.search(raw)
        named = f" (titled {title.group(1).strip()!r})" if title else ""
        text = f"{status} The provider answered with an HTML page{named} instead of an API response; is the model's baseUrl right?"
        return text, classify_http_error(status, text, None), None
    text, code = _error_text(status, raw, exc)
    if code is None or code.isdigit():
        raw_code = getattr(exc, "code", None)
        code = str(raw_code) if raw_code and not str(raw_code).isdigit() else None
    kind = "context_overflow" if name == "ContextWindowExceededError" else classify_http_error(status, text, code)
    if kind not in ("rate_limit", "transient"):
        return text, kind, None
    return text, kind, _retry_after(exc) or retry_info_ms(google)


_HTML_TITLE = re.compile(r"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)


def _google_error(raw: str | None) -> dict[str, Any] | None:
    """The ``error`` object of a Google API error body (``{"error": {"code", "status", ...}}``)."""
    if not raw:
        return None
    try:
        parsed = json.loads(raw)
    except ValueError:
        return None
    error = parsed.get("error") if isinstance(parsed, dict) else None
    return error if isinstance(error, dict) and isinstance(error.get("status"), str) else None


