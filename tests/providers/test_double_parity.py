"""The same scripts through ScriptedProvider and through an HTTP provider → fake server.

Both HTTP providers run every test: ``LiteLLMProvider`` (litellm's real HTTP client, SSE parsing
and error mapping) and ``OpenAIHttpProvider`` (the direct client used for models.json endpoints).
All must end in the same final message (timestamps aside) after the same event sequence.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
from collections.abc import Callable
from typing import Any

import pytest

from pi_tui.core.messages import user_message
from pi_tui.core.overflow import is_context_overflow
from pi_tui.core.provider import CompletionRequest, ModelCost, ModelInfo, ToolSpec
from pi_tui.providers.litellm_provider import LiteLLMProvider
from pi_tui.providers.openai_http import OpenAIHttpProvider
from pi_tui.testing.fake_server import FakeServer
from pi_tui.testing.scripted import ScriptedProvider

PRICED = ModelCost(input=3.0, output=15.0, cache_read=0.3, cache_write=3.75)
BASH = ToolSpec(name="bash", description="Run a command",
                parameters={"type": "object", "required": ["command"], "properties": {"command": {"type": "string"}}})
USAGE = {"prompt_tokens": 120, "completion_tokens": 30}


def _model(base_url: str) -> ModelInfo:
    return ModelInfo(provider="fake", id="fake-model", litellm_model="openai/fake-model", base_url=base_url,
                     max_tokens=1000, cost=PRICED, headers={"X-Team": "core"},
                     compat={"supportsDeveloperRole": False, "supportsReasoningEffort": False})


def _request(base_url: str, messages: list[Any] | None = None) -> CompletionRequest:
    return CompletionRequest(model=_model(base_url), system_prompt="You are a test.", tools=[BASH], api_key="fake-key",
                             messages=messages or [user_message("say hi", timestamp=1)])


async def _collect(provider: Any, request: CompletionRequest) -> tuple[list[tuple[Any, ...]], dict[str, Any]]:
    events = []
    final: dict[str, Any] = {}
    async for event in provider.stream(request):
        events.append((event["type"], event.get("contentIndex"), event.get("delta")))
        if event["type"] in ("done", "error"):
            final = copy.deepcopy(dict(event.get("message") or event.get("error")))
    final.pop("timestamp", None)
    return events, final


HttpProviderFactory = Callable[..., Any]


@pytest.fixture(params=["litellm", "direct"])
def http_provider(request: pytest.FixtureRequest) -> HttpProviderFactory:
    return LiteLLMProvider if request.param == "litellm" else OpenAIHttpProvider


async def _both(make: HttpProviderFactory, turns: list[dict[str, Any]], *, read_timeout: float = 5.0) -> tuple[Any, Any, FakeServer]:
    with FakeServer(copy.deepcopy(turns)) as server:
        via_http = await _collect(make(timeout=read_timeout), _request(server.base_url))
    in_process = await _collect(ScriptedProvider(copy.deepcopy(turns)), _request(server.base_url))
    return via_http, in_process, server


async def test_text_in_chunks(http_provider: HttpProviderFactory) -> None:
    (events, final), scripted, _ = await _both(http_provider, [{"text": "Hello there, this is the answer.", "usage": USAGE}])
    assert (events, final) == scripted
    assert [e[0] for e in events] == ["start", "text_start", *["text_delta"] * 4, "text_end", "done"]
    assert final["content"] == [{"type": "text", "text": "Hello there, this is the answer."}]
    assert final["stopReason"] == "stop" and final["responseId"] == "chatcmpl-fake"


async def test_thinking_then_text(http_provider: HttpProviderFactory) -> None:
    (events, final), scripted, _ = await _both(http_provider, [{"thinking": "Let me consider.", "text": "Done.", "usage": USAGE}])
    assert (events, final) == scripted
    assert final["content"][0] == {"type": "thinking", "thinking": "Let me consider.", "thinkingSignature": "reasoning_content"}
    assert [e[0] for e in events][:2] == ["start", "thinking_start"]


async def test_parallel_tool_calls_with_arguments_split_over_deltas(http_provider: HttpProviderFactory) -> None:
    turn = {"text": "Running both.", "usage": USAGE, "tool_calls": [
        {"id": "call_a", "name": "bash", "arguments": {"command": "echo one && echo two"}, "chunks": 4},
        {"id": "call_b", "name": "bash", "arguments": {"command": "ls -la /tmp"}, "chunks": 3},
    ]}
    (events, final), scripted, _ = await _both(http_provider, [turn])
    assert (events, final) == scripted
    assert final["stopReason"] == "toolUse"
    assert final["content"][1:] == [
        {"type": "toolCall", "id": "call_a", "name": "bash", "arguments": {"command": "echo one && echo two"}},
        {"type": "toolCall", "id": "call_b", "name": "bash", "arguments": {"command": "ls -la /tmp"}},
    ]
    deltas = [e for e in events if e[0] == "toolcall_delta"]
    assert [e[1] for e in deltas] == [1, 1, 1, 1, 2, 2, 2]
    assert [e[0] for e in events][-4:] == ["text_end", "toolcall_end", "toolcall_end", "done"]


async def test_usage_and_cost_arithmetic_with_cached_tokens(http_provider: HttpProviderFactory) -> None:
    usage = {"prompt_tokens": 1000, "completion_tokens": 200, "cached_tokens": 400, "cache_write_tokens": 100}
    (_, final), scripted, _ = await _both(http_provider, [{"text": "ok", "usage": usage}])
    assert final == scripted[1]
    got = final["usage"]
    assert (got["input"], got["output"], got["cacheRead"], got["cacheWrite"], got["totalTokens"]) == (600, 200, 300, 100, 1200)
    cost = got["cost"]
    assert cost["input"] == pytest.approx(600 * 3.0 / 1e6)
    assert cost["output"] == pytest.approx(200 * 15.0 / 1e6)
    assert cost["cacheRead"] == pytest.approx(300 * 0.3 / 1e6)
    assert cost["cacheWrite"] == pytest.approx(100 * 3.75 / 1e6)
    assert cost["total"] == pytest.approx(cost["input"] + cost["output"] + cost["cacheRead"] + cost["cacheWrite"])


@pytest.mark.parametrize(
    ("error", "kind", "text"),
    [
        ({"status": 429, "retry_after": 3}, "rate_limit", "429 Rate limit reached, please try again later"),
        ({"status": 500}, "transient", "500 Internal server error"),
        ({"status": 503}, "transient", "503 Service unavailable"),
        ({"status": 401}, "auth", "401 Incorrect API key provided"),
        ({"status": 400, "message": "Invalid tool schema"}, "bad_request", "400 Invalid tool schema"),
        ({"status": 400, "code": "context_length_exceeded"}, "context_overflow",
         "400 This model's maximum context length is 8192 tokens. Please reduce the length of the messages."),
        ({"status": 400, "code": "context_length_exceeded", "message": "Input too long"}, "context_overflow", "400 Input too long"),
    ],
)
async def test_http_errors_are_classified_and_never_raised(http_provider: HttpProviderFactory, error: dict[str, Any], kind: str, text: str) -> None:
    (events, final), scripted, server = await _both(http_provider, [{"error": error}])
    assert (events, final) == scripted
    assert events == [("error", None, None)]
    assert (final["stopReason"], final["errorKind"], final["errorMessage"]) == ("error", kind, text)
    assert final.get("retryAfterMs") == (3000 if error["status"] == 429 else None)
    assert len(server.requests) == 1  # SDK retries are off: one request per call
    if kind == "context_overflow":
        assert is_context_overflow(final, 8192)


async def test_connection_cut_mid_stream_keeps_the_partial_text(http_provider: HttpProviderFactory) -> None:
    (events, final), scripted, _ = await _both(http_provider, [{"text": "This answer will be cut short.", "cut_after_chunks": 2}])
    assert (events, final) == scripted
    assert final["content"] == [{"type": "text", "text": "This answer will"}]
    assert (final["stopReason"], final["errorKind"]) == ("error", "transient")
    assert final["errorMessage"].startswith("Connection error")
    assert [e[0] for e in events][-2:] == ["text_end", "error"]


async def test_stalled_stream_times_out_as_transient(http_provider: HttpProviderFactory) -> None:
    (events, final), scripted, _ = await _both(http_provider, [{"text": "stalling here", "stall_after_chunks": 1}], read_timeout=0.5)
    assert (events, final) == scripted
    assert (final["errorKind"], final["content"]) == ("transient", [{"type": "text", "text": "stalling"}])
    assert "timed out" in final["errorMessage"]


async def test_unknown_finish_reason_is_an_error_and_response_model_is_recorded(http_provider: HttpProviderFactory) -> None:
    (_, final), scripted, _ = await _both(http_provider, [{"text": "filtered", "finish_reason": "content_filter", "usage": USAGE,
                                            "response_model": "fake-model-2025"}])
    assert final == scripted[1]
    assert (final["stopReason"], final["errorMessage"]) == ("error", "Provider finish_reason: content_filter")
    assert final["responseModel"] == "fake-model-2025"


async def test_request_body_on_the_wire_is_pis(http_provider: HttpProviderFactory) -> None:
    turns = [{"tool_calls": [{"id": "call_1_0_a82efc3c", "name": "bash", "arguments": {"command": "echo hello"}}], "usage": USAGE},
             {"text": "done", "usage": USAGE}]
    with FakeServer(turns) as server:
        provider = http_provider(timeout=5)
        first = _request(server.base_url)
        _, reply = await _collect(provider, first)
        reply["timestamp"] = 2
        result = {"role": "toolResult", "toolCallId": "call_1_0_a82efc3c", "toolName": "bash",
                  "content": [{"type": "text", "text": "hello\n"}], "isError": False, "timestamp": 3}
        await _collect(provider, _request(server.base_url, [*first.messages, reply, result]))
        body = server.requests[1]
        raw = server.recorded[1]
    assert list(body) == ["model", "messages", "stream", "stream_options", "store", "max_completion_tokens", "tools"]
    assert body["messages"] == [
        {"role": "system", "content": "You are a test."},
        {"role": "user", "content": [{"type": "text", "text": "say hi"}]},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "call_1_0_a82efc3c", "type": "function",
                                                               "function": {"name": "bash", "arguments": '{"command":"echo hello"}'}}]},
        {"role": "tool", "content": "hello\n", "tool_call_id": "call_1_0_a82efc3c"},
    ]
    assert (body["stream"], body["stream_options"], body["store"], body["max_completion_tokens"]) == (True, {"include_usage": True}, False, 1000)
    assert body["tools"][0]["function"]["strict"] is False
    assert raw.headers["authorization"] == "Bearer fake-key"
    assert raw.headers["x-team"] == "core"
    if http_provider is LiteLLMProvider:
        assert raw.headers["x-stainless-retry-count"] == "0"  # the SDK's own retries are off


async def test_on_payload_replacement_is_what_gets_sent(http_provider: HttpProviderFactory) -> None:
    seen: list[dict[str, Any]] = []

    def hook(body: dict[str, Any]) -> dict[str, Any]:
        seen.append(copy.deepcopy(body))
        return {**body, "messages": [*body["messages"], {"role": "user", "content": "injected"}], "temperature": 0.2}

    with FakeServer([{"text": "ok", "usage": USAGE}]) as server:
        request = dataclasses.replace(_request(server.base_url), on_payload=hook)
        await _collect(http_provider(timeout=5), request)
        body = server.requests[0]
    assert seen and seen[0]["model"] == "fake-model"
    assert body["messages"][-1] == {"role": "user", "content": "injected"}
    assert body["temperature"] == 0.2


async def test_cancellation_propagates_and_releases_the_stream(http_provider: HttpProviderFactory) -> None:
    with FakeServer([{"text": "a slow answer that streams for a while", "chunk_delay_ms": 200}]) as server:
        provider = http_provider(timeout=5)
        seen: list[str] = []
        streaming = asyncio.Event()

        async def consume() -> None:
            async for event in provider.stream(_request(server.base_url)):
                seen.append(event["type"])
                if event["type"] == "text_delta":
                    streaming.set()

        task = asyncio.create_task(consume())
        await asyncio.wait_for(streaming.wait(), 30)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    assert "done" not in seen and "error" not in seen
