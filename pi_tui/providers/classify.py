"""Classifying provider failures into pi-tui's error kinds (shared by every provider)."""

from __future__ import annotations

from pi_tui.core.messages import ErrorKind
from pi_tui.core.overflow import is_overflow_error_text

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
