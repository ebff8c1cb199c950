"""pi's context-overflow detection (§7.6 + §13.7)."""

from __future__ import annotations

from typing import Any

import pytest

from pi_tui.core.overflow import is_context_overflow, is_overflow_error_text


def _error(text: str, **extra: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": [], "stopReason": "error", "errorMessage": text, "usage": {}, **extra}


def _stop(reason: str, *, input: int, cache_read: int = 0, output: int = 10) -> dict[str, Any]:
    usage = {"input": input, "output": output, "cacheRead": cache_read, "cacheWrite": 0, "totalTokens": 0}
    return {"role": "assistant", "content": [], "stopReason": reason, "usage": usage}


@pytest.mark.parametrize(
    "text",
    [
        "400 prompt is too long: 210000 tokens > 200000 maximum",
        "Input is too long for requested model.",
        "Your input exceeds the context window of this model",
        "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).",
        "This model's maximum prompt length is 131072 but the request contains 140000 tokens.",
        "Please reduce the length of the messages or completion.",
        "This model's maximum context length is 8192 tokens. However, you requested 9000 tokens",
        "Requested 300000 tokens, which exceeds the limit of 262144",
        "the request exceeds the available context size, try increasing it",
        "prompt length 9000 is greater than the context length 8192",
        "context window exceeds limit",
        "Exceeded model token limit: 32768",
        "Request too large for model with 4096 maximum context length",
        "model_context_window_exceeded",
        "400 context_length_exceeded",
        "context length exceeded",
        "too many tokens in the request",
        "token limit exceeded",
        "413 request_too_large",
        "prompt too long; exceeded max context length by 1000 tokens",
        "prompt too long; exceeded context length",
        "400 status code (no body)",
        "413 (no body)",
    ],
)
def test_every_pi_pattern_is_an_overflow(text: str) -> None:
    assert is_overflow_error_text(text)
    assert is_context_overflow(_error(text), 100_000)


@pytest.mark.parametrize(
    "text",
    [
        "Throttling error: too many tokens per minute",
        "Service unavailable: prompt is too long for the current load",
        "429 rate limit: too many tokens",
        "Too many requests: token limit exceeded for this minute",
        "500 Internal server error",
        "401 Incorrect API key provided",
        "",
    ],
)
def test_rate_limits_and_other_errors_are_not_overflows(text: str) -> None:
    assert not is_context_overflow(_error(text), 100_000)


def test_classified_overflow_counts_even_with_a_generic_text() -> None:
    assert is_context_overflow(_error("400 Input too long", errorKind="context_overflow"))


def test_silent_overflow_on_a_normal_stop_uses_input_plus_cache_read() -> None:
    assert is_context_overflow(_stop("stop", input=60_000, cache_read=40_001), 100_000)
    assert not is_context_overflow(_stop("stop", input=60_000, cache_read=40_000), 100_000)


def test_length_stop_without_output_near_the_window_is_an_overflow() -> None:
    assert is_context_overflow(_stop("length", input=99_000, output=0), 100_000)
    assert not is_context_overflow(_stop("length", input=98_999, output=0), 100_000)
    assert not is_context_overflow(_stop("length", input=99_500, output=5), 100_000)


def test_unknown_window_disables_usage_checks() -> None:
    assert not is_context_overflow(_stop("stop", input=10**9), None)
    assert not is_context_overflow(_stop("stop", input=10**9), 0)


def test_tool_use_and_aborted_are_never_overflows() -> None:
    assert not is_context_overflow(_stop("toolUse", input=10**9), 1000)
    aborted = _error("prompt is too long")
    aborted["stopReason"] = "aborted"
    assert not is_context_overflow(aborted, 1000)
