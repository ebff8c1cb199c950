"""The shared failure helpers: one implementation for the HTTP client and the litellm adapter."""

from __future__ import annotations

import ast
import email.utils
import time
from pathlib import Path

import pi_tui.providers.classify as classify
from pi_tui.providers import litellm_convert, openai_sse
from pi_tui.providers.classify import classify_http_error, error_text, retry_after_ms


def test_both_providers_use_the_one_implementation() -> None:
    assert openai_sse.error_text is litellm_convert.error_text is classify.error_text
    assert openai_sse.retry_after_ms is litellm_convert.retry_after_ms is classify.retry_after_ms
    tree = ast.parse(Path(litellm_convert.__file__).read_text())
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert "pi_tui.providers.openai_http" not in imported  # the adapter does not need the HTTP client
    for node in ast.walk(ast.parse(Path(classify.__file__).read_text())):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in node.names] + ([node.module] if isinstance(node, ast.ImportFrom) and node.module else [])
            assert not any(n.split(".")[0] == "litellm" for n in names)


def test_error_text_and_code() -> None:
    assert error_text(429, '{"error": {"message": "slow down", "code": "rate_limit_exceeded"}}') == (
        "429 slow down", "rate_limit_exceeded",
    )
    text, code = error_text(400, '{"error": {"message": "too long", "code": "context_length_exceeded"}}')
    assert classify_http_error(400, text, code) == "context_overflow"


def test_retry_after_forms() -> None:
    assert retry_after_ms({"retry-after-ms": "1500.2"}) == 1501
    assert retry_after_ms({"retry-after": "2"}) == 2000
    assert retry_after_ms({}) is None
    later = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25_000 <= (retry_after_ms({"retry-after": later}) or 0) <= 31_000
    assert retry_after_ms({"retry-after": "not a date"}) is None


def test_an_html_error_page_is_named_by_its_title_not_quoted_whole() -> None:
    page = "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body><h1>502 Bad Gateway</h1></body></html>\r\n"
    assert error_text(502, page) == ("502 Bad Gateway (an HTML page instead of the API's error)", None)
    assert error_text(503, "<!DOCTYPE html><html><body>down</body></html>")[0] == "503 (an HTML page instead of the API's error)"
    assert error_text(500, "plain text\nsecond line")[0] == "500 plain text\nsecond line"  # pi's rule otherwise
