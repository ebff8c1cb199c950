"""The direct OpenAI-compatible client against the fake server: events, final message, every
error class, and pi's exact request bytes."""

from __future__ import annotations

import json
import socket
from typing import Any

import pytest

from pi_tui.core.messages import user_message
from pi_tui.core.provider import CompletionRequest, ModelInfo, ToolSpec
from pi_tui.providers.classify import error_text
from pi_tui.providers.openai_http import OpenAIHttpProvider
from pi_tui.providers.stream_failures import CONNECTION_CUT_MESSAGE
from pi_tui.testing.fake_server import FakeServer


def _model(base_url: str) -> ModelInfo:
    return ModelInfo(provider="fake", id="fake-model", base_url=base_url, max_tokens=1000)


async def _collect(base_url: str, **kwargs: Any) -> list[dict[str, Any]]:
    request = CompletionRequest(model=_model(base_url), system_prompt="sys", messages=[user_message("hi")],
                                api_key="k", **kwargs)
    return [event async for event in OpenAIHttpProvider().stream(request)]


async def test_text_and_split_tool_call_arguments() -> None:
    turns = [{"text": "hello world", "tool_calls": [{"id": "c1", "name": "bash", "arguments": {"command": "ls -la"},
                                                     "chunks": 4}], "usage": {"prompt_tokens": 100, "completion_tokens": 7,
                                                                              "cached_tokens": 40}}]
    with FakeServer(turns) as server:
        tools = [ToolSpec(name="bash", description="run", parameters={"type": "object"})]
        events = await _collect(server.base_url, tools=tools)
        raw = server.recorded[-1]
    kinds = [e["type"] for e in events]
    assert kinds[0] == "start" and kinds[-1] == "done"
    assert kinds.count("toolcall_delta") == 4
    final = events[-1]["message"]
    assert final["stopReason"] == "toolUse"
    assert final["content"][0] == {"type": "text", "text": "hello world"}
    assert final["content"][1]["arguments"] == {"command": "ls -la"}
    assert (final["usage"]["input"], final["usage"]["cacheRead"], final["usage"]["output"]) == (60, 40, 7)
    body = json.loads(raw.body_bytes) if hasattr(raw, "body_bytes") else raw.body
    assert list(body)[:3] == ["model", "messages", "stream"]


@pytest.mark.parametrize(("error", "kind", "text"), [
    ({"status": 429, "retry_after": 3}, "rate_limit", "429 Rate limit reached, please try again later"),
    ({"status": 500}, "transient", "500 Internal server error"),
    ({"status": 503}, "transient", "503 Service unavailable"),
    ({"status": 401}, "auth", "401 Incorrect API key provided"),
    ({"status": 400, "code": "context_length_exceeded"}, "context_overflow",
     "400 This model's maximum context length is 8192 tokens. Please reduce the length of the messages."),
    ({"status": 400, "message": "bad field"}, "bad_request", "400 bad field"),
])
async def test_every_error_class(error: dict[str, Any], kind: str, text: str) -> None:
    with FakeServer([{"error": error}]) as server:
        events = await _collect(server.base_url)
    assert [e["type"] for e in events] == ["error"]
    final = events[0]["error"]
    assert final["stopReason"] == "error" and final["errorKind"] == kind and final["errorMessage"] == text
    if error.get("retry_after"):
        assert final["retryAfterMs"] == 3000


async def test_connection_cut_mid_stream_keeps_the_partial_text() -> None:
    with FakeServer([{"text": "a fairly long answer that will be cut", "cut_after_chunks": 2}]) as server:
        events = await _collect(server.base_url)
    final = events[-1]["error"]
    assert final["errorMessage"] == CONNECTION_CUT_MESSAGE + ", during the text" and final["errorKind"] == "transient"
    assert final["content"][0]["text"].startswith("a fairly")


async def test_connection_refused_is_a_transient_connection_error() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    events = await _collect(f"http://127.0.0.1:{port}/v1")
    assert events[-1]["error"]["errorMessage"] == "Connection error."
    assert events[-1]["error"]["errorKind"] == "transient"


def test_error_text_rules_of_pi() -> None:
    assert error_text(500, "oops")[0] == "500 oops"
    assert error_text(400, "{}")[0] == "400 status code (no body)"
    assert error_text(400, '{"error": {"code": 7}}')[0] == '400 {"code":7}'
    assert error_text(402, '{"error": {"message": "m", "metadata": {"raw": "r"}}}')[0] == "402 m\nr"
