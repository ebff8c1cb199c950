"""The Anthropic provider against the strict fake: SSE decoding (§15.9), stop reasons, usage and
cost (§15.10), errors and their classes (§15.11), what the message holds (§15.12), and that no
half-received stream or tool call is ever taken for an answer."""

from __future__ import annotations

import asyncio
import dataclasses
import socket
from collections.abc import AsyncIterator
from typing import Any

import pytest

from pi_tui.core.provider import CompletionRequest, ModelInfo, ToolSpec
from pi_tui.providers.anthropic_decode import iter_sse
from pi_tui.providers.anthropic_http import AnthropicHttpProvider
from pi_tui.providers.models import ModelRegistry
from pi_tui.providers.stream_failures import CONNECTION_CUT_MESSAGE
from pi_tui.testing.fake_anthropic_rules import sign_thinking
from pi_tui.testing.fake_anthropic_server import FakeAnthropicServer

KEY = "sk-ant-api03-secret-key-0123456789"
SONNET = ModelRegistry(None, env={}).resolve("anthropic/claude-sonnet-4-5")
BASH = ToolSpec(name="bash", description="Run", parameters={"type": "object", "properties": {"command": {"type": "string"}}})


async def _run(server: FakeAnthropicServer, *, reasoning: Any = "medium", messages: list[Any] | None = None,
               model: ModelInfo = SONNET, key: str = KEY) -> list[dict[str, Any]]:
    request = CompletionRequest(model=dataclasses.replace(model, base_url=server.base_url), system_prompt="sys",
                                messages=messages or [{"role": "user", "content": "hi", "timestamp": 0}],
                                tools=[BASH], reasoning=reasoning, api_key=key)
    return [event async for event in AnthropicHttpProvider(timeout=5).stream(request)]


def _final(events: list[dict[str, Any]]) -> dict[str, Any]:
    last = events[-1]
    return last["message"] if last["type"] == "done" else last["error"]


async def test_thinking_text_and_tool_call_become_pis_message() -> None:
    turn = {"thinking": "Let me think.", "text": "Running.", "signature_parts": 2,
            "tool_calls": [{"id": "toolu_1", "name": "bash", "arguments": {"command": "echo hi"}, "chunks": 3}]}
    with FakeAnthropicServer([turn], api_key=KEY) as server:
        events = await _run(server)
    kinds = [e["type"] for e in events]
    assert kinds[0] == "start" and kinds[-1] == "done"
    assert kinds.index("thinking_end") < kinds.index("text_start") < kinds.index("toolcall_start")
    assert kinds.count("toolcall_delta") == 3
    final = _final(events)
    assert final["content"] == [
        {"type": "thinking", "thinking": "Let me think.", "thinkingSignature": sign_thinking("Let me think.")},
        {"type": "text", "text": "Running."},
        {"type": "toolCall", "id": "toolu_1", "name": "bash", "arguments": {"command": "echo hi"}},
    ]
    assert final["stopReason"] == "toolUse" and final["responseId"].startswith("msg_")
    assert list(final) == ["role", "content", "api", "provider", "model", "usage", "stopReason", "timestamp", "responseId"]
    assert (final["api"], final["provider"], final["model"]) == ("anthropic-messages", "anthropic", "claude-sonnet-4-5")


async def test_usage_is_taken_as_reported_and_priced_like_pi() -> None:
    """§15.10's captured example: input = uncached input only."""
    usage = {"input_tokens": 15, "cache_creation_input_tokens": 200, "cache_read_input_tokens": 3000, "output_tokens": 12}
    with FakeAnthropicServer([{"text": "ok", "usage": usage}]) as server:
        final = _final(await _run(server))
    assert final["usage"] == {"input": 15, "output": 12, "cacheRead": 3000, "cacheWrite": 200, "totalTokens": 3227,
                              "cost": {"input": 4.5e-05, "output": 0.00018, "cacheRead": 0.0009, "cacheWrite": 0.00075,
                                       "total": 0.001875}}


async def test_redacted_thinking_is_stored_as_pi_stores_it() -> None:
    with FakeAnthropicServer([{"redacted_thinking": True, "text": "ok"}]) as server:
        final = _final(await _run(server))
    block = final["content"][0]
    assert block["thinking"] == "[Reasoning redacted]" and block["redacted"] is True and block["thinkingSignature"].startswith("EmwK")


@pytest.mark.parametrize(("stop_reason", "expected", "error"), [
    ("end_turn", "stop", None), ("pause_turn", "stop", None), ("max_tokens", "length", None),
    ("refusal", "error", "An unknown error occurred"),
    ("model_context_window_exceeded", "error", "Unhandled stop reason: model_context_window_exceeded"),
])
async def test_stop_reasons(stop_reason: str, expected: str, error: str | None) -> None:
    with FakeAnthropicServer([{"text": "x", "stop_reason": stop_reason}]) as server:
        final = _final(await _run(server))
    assert final["stopReason"] == expected and final.get("errorMessage") == error
    if stop_reason == "model_context_window_exceeded":
        assert final["errorKind"] == "context_overflow"


async def test_a_stream_without_message_stop_is_an_error_that_keeps_the_partial_text() -> None:
    with FakeAnthropicServer([{"text": "a partial answer", "chunk_size": 4, "end_after_chunks": 5}]) as server:
        events = await _run(server)
    final = _final(events)
    assert events[-1]["type"] == "error" and final["errorMessage"] == "Anthropic stream ended before message_stop"
    assert final["content"][0]["text"] == "a partial answer"[: len(final["content"][0]["text"])] != ""
    assert final["usage"]["input"] + final["usage"]["cacheWrite"] > 0  # usage seen so far is kept


async def test_a_tool_call_cut_mid_input_never_becomes_a_tool_call() -> None:
    call = {"id": "toolu_9", "name": "bash", "arguments": {"command": "rm -rf build && make"}, "chunks": 4}
    with FakeAnthropicServer([{"text": "ok", "tool_calls": [call], "cut_in": "tool_input"}]) as server:
        events = await _run(server)
    assert "toolcall_end" not in [e["type"] for e in events] and events[-1]["type"] == "error"
    final = _final(events)
    assert final["errorMessage"] == CONNECTION_CUT_MESSAGE and final["errorKind"] == "transient"


async def test_a_tool_input_that_ends_unfinished_is_an_error_even_with_message_stop() -> None:
    call = {"id": "toolu_9", "name": "bash", "arguments": '{"command": "echo', "chunks": 2}
    with FakeAnthropicServer([{"tool_calls": [call], "stop_reason": "max_tokens"}]) as server:
        events = await _run(server)
    final = _final(events)
    assert final["stopReason"] == "error" and "did not finish streaming" in final["errorMessage"]
    assert "toolcall_end" not in [e["type"] for e in events]


async def test_mid_stream_overloaded_error_is_transient_with_the_raw_data() -> None:
    turn = {"text": "x", "stream_error": {"type": "overloaded_error", "message": "Overloaded", "after": 1}}
    with FakeAnthropicServer([turn]) as server:
        final = _final(await _run(server))
    assert final["errorMessage"] == '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'
    assert final["errorKind"] == "transient"


async def test_garbage_bodies_are_errors_never_answers() -> None:
    json_reply = {"error": {"status": 200, "body": {"id": "msg_1", "type": "message", "content": []}}}
    with FakeAnthropicServer([{"garbage": "<html>not sse</html>"}, {"text": "abc", "garbage_event": True},
                              json_reply]) as server:
        first = _final(await _run(server))
        second = _final(await _run(server))
        third = _final(await _run(server))
    assert third["stopReason"] == "error"
    assert third["errorMessage"].startswith("The provider answered 200 with 'application/json' instead of an event stream: ")
    assert first["stopReason"] == "error" and "no message_start" in first["errorMessage"]
    assert second["stopReason"] == "error"
    assert second["errorMessage"].startswith("Could not parse Anthropic SSE event content_block_delta")


async def test_crlf_framing_and_a_thinking_block_only_when_enabled() -> None:
    with FakeAnthropicServer([{"thinking": "t", "text": "hello", "crlf": True}, {"thinking": "t", "text": "off"}]) as server:
        crlf = _final(await _run(server))
        off = _final(await _run(server, reasoning=None))
    assert [b["type"] for b in crlf["content"]] == ["thinking", "text"] and crlf["stopReason"] == "stop"
    assert off["content"] == [{"type": "text", "text": "off"}]


@pytest.mark.parametrize(("error", "kind", "text", "retry_ms"), [
    ({"status": 429, "retry_after": 7}, "rate_limit", '429 {"type":"error","error":{"type":"rate_limit_error",', 7000),
    ({"status": 529, "retry_after_ms": 1500}, "transient", '529 {"type":"error","error":{"type":"overloaded_error",', 1500),
    ({"status": 500}, "transient", '500 {"type":"error","error":{"type":"api_error"', None),
    ({"status": 400, "message": "prompt is too long: 213462 tokens > 200000 maximum"}, "context_overflow",
     '400 {"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long', None),
    ({"status": 413, "type": "request_too_large"}, "context_overflow", '413 {"type":"error","error":{"type":"request_too_large"', None),
    ({"status": 401}, "auth", '401 {"type":"error","error":{"type":"authentication_error"', None),
    ({"status": 400, "body": {"message": "plain"}}, "bad_request", "400 plain", None),
    ({"status": 502, "body": ""}, "transient", "502 status code (no body)", None),
])
async def test_http_errors_text_kind_and_server_delay(error: dict[str, Any], kind: str, text: str, retry_ms: int | None) -> None:
    with FakeAnthropicServer([{"error": error}]) as server:
        events = await _run(server)
    assert [e["type"] for e in events] == ["error"]
    final = _final(events)
    assert final["errorMessage"].startswith(text) and final["errorKind"] == kind
    assert final.get("retryAfterMs") == retry_ms
    assert final["usage"]["totalTokens"] == 0 and final["content"] == []


async def test_an_html_error_page_and_an_echoed_key() -> None:
    with FakeAnthropicServer([{"html": {"status": 502}}, {"error": {"status": 401, "echo_api_key": True}}]) as server:
        html = _final(await _run(server))
        echoed = _final(await _run(server))
    assert html["errorMessage"] == "502 Bad Gateway (an HTML page instead of the API's error)"  # not the whole page
    assert html["errorKind"] == "transient"
    assert KEY not in echoed["errorMessage"] and "[redacted]" in echoed["errorMessage"]


async def test_the_fake_rejects_a_wrong_key_and_the_error_reaches_the_message() -> None:
    with FakeAnthropicServer([{"text": "never"}], api_key=KEY) as server:
        final = _final(await _run(server, key="sk-ant-wrong-key-000"))
    assert final["errorKind"] == "auth" and "invalid x-api-key" in final["errorMessage"]


async def test_connection_refused_and_stalled_streams() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    request = CompletionRequest(model=dataclasses.replace(SONNET, base_url=f"http://127.0.0.1:{port}"), system_prompt="",
                                messages=[{"role": "user", "content": "hi", "timestamp": 0}], api_key=KEY)
    refused = [e async for e in AnthropicHttpProvider().stream(request)]
    assert _final(refused)["errorMessage"] == "Connection error." and _final(refused)["errorKind"] == "transient"
    with FakeAnthropicServer([{"text": "slow answer", "stall_after_chunks": 3}]) as server:
        request = dataclasses.replace(request, model=dataclasses.replace(SONNET, base_url=server.base_url))
        stalled = [e async for e in AnthropicHttpProvider(timeout=0.5).stream(request)]
    assert _final(stalled)["errorMessage"] == "Request timed out." and _final(stalled)["errorKind"] == "transient"


async def test_on_payload_may_replace_the_body_but_stream_stays_true() -> None:
    with FakeAnthropicServer([{"text": "ok"}]) as server:
        request = CompletionRequest(model=dataclasses.replace(SONNET, base_url=server.base_url), system_prompt="s",
                                    messages=[{"role": "user", "content": "hi", "timestamp": 0}], api_key=KEY,
                                    on_payload=lambda body: {k: v for k, v in body.items() if k != "stream"})
        final = _final([e async for e in AnthropicHttpProvider().stream(request)])
        sent = server.requests[0]
    assert final["stopReason"] == "stop" and sent["stream"] is True and list(sent)[-1] == "stream"


async def test_cancellation_closes_the_stream() -> None:
    with FakeAnthropicServer([{"text": "x" * 400, "chunk_size": 2, "chunk_delay_ms": 20}]) as server:
        seen: list[str] = []
        streaming = asyncio.Event()

        async def consume() -> None:
            async for event in AnthropicHttpProvider().stream(CompletionRequest(
                    model=dataclasses.replace(SONNET, base_url=server.base_url), system_prompt="",
                    messages=[{"role": "user", "content": "hi", "timestamp": 0}], api_key=KEY)):
                seen.append(event["type"])
                if event["type"] == "text_delta":
                    streaming.set()

        task = asyncio.create_task(consume())
        await asyncio.wait_for(streaming.wait(), 10)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    assert "done" not in seen


async def _chunks(*parts: bytes) -> AsyncIterator[bytes]:
    for part in parts:
        yield part


async def test_sse_framing_cr_only_comments_split_lines_and_an_unterminated_last_event() -> None:
    raw = (b"event: a\rdata: 1\r\r: comment\n\nevent: b\r", b"\ndata: x\ndata: y\r\n\r\nevent:c\ndata:2")
    events = [e async for e in iter_sse(_chunks(*raw))]
    assert events == [("a", "1"), ("b", "x\ny"), ("c", "2")]
