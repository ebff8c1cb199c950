"""Provider failures, shared by every provider (the direct HTTP client and the litellm adapter):
the error kind, pi's error text for an HTTP error body (§14.2) and the retry delay a response
asks for. No litellm here: the HTTP client must not pay for its import."""

from __future__ import annotations

import email.utils
import json
import math
import re
import time
from typing import Any

from pi_tui.core.messages import ErrorKind
from pi_tui.core.overflow import is_overflow_error_text

CONNECTION_ERROR_MESSAGE = "Connection error."
_TITLE = re.compile(r"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)
_OVERFLOW_CODES = ("context_length_exceeded", "model_context_window_exceeded", "request_too_large")


def classify_http_error(status: int | None, message: str = "", code: str | None = None) -> ErrorKind:
    """Map an HTTP status (and the error's code/text) to an ``ErrorKind``.

    413 is a rate limit for litellm but can also mean "request too large": the code or text
    decides. Overflow by text uses pi's full pattern list (``core.overflow``).
    """
    text = message.lower()
    if code in _OVERFLOW_CODES or (status != 429 and is_overflow_error_text(message)):
        return "context_overflow"
    if status is None:
        return "transient"
    if status in (401, 403):
        return "auth"
    if status == 429:
        return "rate_limit"
    if status == 413:
        return "context_overflow" if "too large" in text or "too long" in text else "rate_limit"
    if status == 408 or status >= 500:
        return "transient"
    if 400 <= status < 500:
        return "bad_request"
    return "unknown"


def error_text(status: int, raw: str) -> tuple[str, str | None]:
    """pi's error message for an HTTP error body (§14.2) and the error's ``code``.

    One deliberate difference: an HTML page (a proxy's or a captive portal's) is not quoted
    whole, which put a page of markup into the session and on stderr; it is named by its title.
    """
    try:
        parsed = json.loads(raw)
    except ValueError:
        if looks_like_html(raw):
            title = html_title(raw)
            if title and title.split(" ", 1)[0] == str(status):
                title = title.split(" ", 1)[1] if " " in title else ""
            named = f"{title} " if title else ""
            return f"{status} {named}(an HTML page instead of the API's error)", None
        return f"{status} {raw}".rstrip(), None
    error = parsed.get("error") if isinstance(parsed, dict) else None
    if error is None:
        return f"{status} status code (no body)", None
    if not isinstance(error, dict):
        return f"{status} {json.dumps(error, separators=(',', ':'))}", None
    code = error.get("code")
    message = error.get("message")
    text = f"{status} {message}" if isinstance(message, str) else f"{status} {json.dumps(error, separators=(',', ':'))}"
    metadata = error.get("metadata")
    if isinstance(metadata, dict) and metadata.get("raw"):
        text += f"\n{metadata['raw']}"
    return text, (str(code) if code else None)


def looks_like_html(raw: str, content_type: str = "") -> bool:
    return "html" in content_type.lower() or raw.lstrip()[:15].lower().startswith(("<!doctype html", "<html"))


def html_title(raw: str) -> str | None:
    """The page's title, on one line (None without one)."""
    found = _TITLE.search(raw)
    if found is None:
        return None
    title = " ".join(found.group(1).split())
    return title[:120] or None


def retry_after_ms(headers: Any) -> int | None:
    """``retry-after-ms``, else ``retry-after`` (seconds or an HTTP date)."""
    value = headers.get("retry-after-ms")
    if value is not None:
        try:
            return math.ceil(float(value))
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return math.ceil(float(value) * 1000)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0, math.ceil((when.timestamp() - time.time()) * 1000))


def retry_info_ms(error: Any) -> int | None:
    """The delay a Google API error asks for: ``details[RetryInfo].retryDelay`` (``"7s"``,
    ``"0.5s"``) of its ``error`` object, in milliseconds (Gemini sends no ``retry-after``)."""
    details = error.get("details") if isinstance(error, dict) else None
    for detail in details if isinstance(details, list) else []:
        delay = detail.get("retryDelay") if isinstance(detail, dict) else None
        if isinstance(delay, str) and delay.endswith("s"):
            try:
                return math.ceil(float(delay[:-1]) * 1000)
            except ValueError:
                return None
    return None
