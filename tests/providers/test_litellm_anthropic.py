"""Claude carried by litellm (Bedrock, Vertex, proxies: litellm's Anthropic translation) against the
strict Anthropic fake: thinking continuity with signatures and redacted thinking, the three cache
markers, pi's thinking budgets, usage as Anthropic reports it, and whole sessions."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from pi_tui.core.messages import user_message
from pi_tui.core.provider import CompletionRequest, ModelCost, ModelInfo
from pi_tui.providers.litellm_provider import LiteLLMProvider
from pi_tui.sdk import create_agent_session
from pi_tui.testing.fake_anthropic_server import FakeAnthropicServer
from tests.providers.wire_helpers import BASH, final_message, tool_result

KEY = "sk-ant-test"
SONNET = ModelInfo(provider="claude-proxy", id="claude-sonnet-4-5", api="anthropic-messages", litellm_model="anthropic/claude-sonnet-4-5",
                   reasoning=True, max_tokens=64000, context_window=200_000, cost=ModelCost(input=3, output=15, cache_read=0.3, cache_write=3.75))
SYSTEM = "You are a careful coding assistant. " * 300  # above the 1024-token minimum for a cache entry
TOOL_TURN = {"thinking": "The user wants echo.", "text": "Running it.", "redacted_thinking": True,
             "tool_calls": [{"name": "bash", "arguments": {"command": "echo hi"}}]}
MARKER = {"type": "ephemeral"}


async def _final(server: FakeAnthropicServer, messages: list[Any], *, model: ModelInfo = SONNET, reasoning: str | None = "medium",
                 system: str = SYSTEM) -> dict[str, Any]:
    request = CompletionRequest(model=replace(model, base_url=server.base_url), system_prompt=system, messages=messages,
                                tools=[BASH], api_key=KEY, reasoning=reasoning)  # type: ignore[arg-type]
    return await final_message(LiteLLMProvider(timeout=5), request)



async def test_signed_and_redacted_thinking_round_trip_with_pis_markers_and_budget() -> None:
    question = user_message("run echo hi", timestamp=1)
    with FakeAnthropicServer([TOOL_TURN, {"text": "It failed."}], api_key=KEY) as server:
        first = await _final(server, [question])
        call = first["content"][-1]
        second = await _final(server, [question, first, tool_result(call["id"], "boom", error=True)])
        body, headers = server.requests[1], server.recorded[1].headers
    redacted, thinking = first["content"][0], first["content"][1]
    assert redacted["redacted"] is True and redacted["thinking"] == "[Reasoning redacted]" and redacted["thinkingSignature"]
    assert thinking["thinking"] == "The user wants echo." and thinking["thinkingSignature"] not in ("", "reasoning_content")
    assert second["stopReason"] == "stop", second.get("errorMessage")
    assert headers["anthropic-beta"] == "interleaved-thinking-2025-05-14"
    assert body == {
        "model": "claude-sonnet-4-5",
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "run echo hi"}]},
            {"role": "assistant", "content": [
                {"type": "redacted_thinking", "data": redacted["thinkingSignature"]},
                {"type": "thinking", "thinking": "The user wants echo.", "signature": thinking["thinkingSignature"]},
                {"type": "text", "text": "Running it."},
                {"type": "tool_use", "id": call["id"], "name": "bash", "input": {"command": "echo hi"}},
            ]},
            # litellm's tool messages have no error flag: is_error cannot be sent on this route
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call["id"], "content": "boom", "cache_control": MARKER}]},
        ],
        "max_tokens": 40192,
        "tools": [{"name": "bash", "input_schema": BASH.parameters, "type": "custom", "description": "Run a command", "cache_control": MARKER}],
        "thinking": {"type": "enabled", "budget_tokens": 8192, "display": "summarized"},
        "system": [{"type": "text", "text": SYSTEM, "cache_control": MARKER}],
        "stream": True,
    }


async def test_usage_keeps_anthropics_uncached_input_and_cache_counts_apart() -> None:
    question = user_message("run echo hi", timestamp=1)
    with FakeAnthropicServer([TOOL_TURN, {"text": "Done."}], api_key=KEY) as server:
        first = await _final(server, [question])
        second = await _final(server, [question, first, tool_result(first["content"][-1]["id"], "hi\n")])
        billed = server.usages
    for message, bill in zip((first, second), billed, strict=True):
        usage = message["usage"]
        assert (usage["input"], usage["cacheRead"], usage["cacheWrite"]) == (
            bill["input_tokens"], bill["cache_read_input_tokens"], bill["cache_creation_input_tokens"])
        assert usage["cost"]["total"] == pytest.approx((usage["input"] * 3 + usage["output"] * 15 + usage["cacheRead"] * 0.3
                                                         + usage["cacheWrite"] * 3.75) / 1e6)
    assert billed[0]["cache_creation_input_tokens"] > 1000 and billed[1]["cache_read_input_tokens"] > 1000


@pytest.mark.parametrize(
    ("model", "level", "max_tokens", "thinking", "extra"),
    [
        (SONNET, None, 32000, {"type": "disabled"}, None),
        (SONNET, "minimal", 33024, {"type": "enabled", "budget_tokens": 1024, "display": "summarized"}, None),
        (SONNET, "high", 48384, {"type": "enabled", "budget_tokens": 16384, "display": "summarized"}, None),
        (replace(SONNET, id="claude-opus-4-1", litellm_model="anthropic/claude-opus-4-1", max_tokens=32000), "medium", 32000,
         {"type": "enabled", "budget_tokens": 8192, "display": "summarized"}, None),
        (replace(SONNET, id="claude-sonnet-4-6", litellm_model="anthropic/claude-sonnet-4-6"), "high", 32000,
         {"type": "adaptive", "display": "summarized"}, {"effort": "high"}),
    ],
    ids=["off", "minimal", "high", "opus-4-1", "adaptive"],
)
async def test_thinking_levels_map_as_pi_maps_them(model: ModelInfo, level: str | None, max_tokens: int, thinking: dict[str, Any],
                                                   extra: dict[str, Any] | None) -> None:
    with FakeAnthropicServer([{"text": "ok"}], api_key=KEY) as server:
        final = await _final(server, [user_message("x", timestamp=1)], model=model, reasoning=level)
        body, beta = server.requests[0], server.recorded[0].headers.get("anthropic-beta")
    assert final["stopReason"] == "stop", final.get("errorMessage")
    assert (body["max_tokens"], body["thinking"], body.get("output_config")) == (max_tokens, thinking, extra)
    assert beta == (None if extra else "interleaved-thinking-2025-05-14")  # adaptive models take no beta


@pytest.mark.parametrize(
    ("turn", "message", "kind", "retry"),
    [
        ({"error": {"status": 429, "type": "rate_limit_error", "message": "Rate limited", "retry_after": 4}}, "429 Rate limited", "rate_limit", 4000),
        ({"error": {"status": 529, "type": "overloaded_error", "message": "Overloaded"}}, "529 Overloaded", "transient", None),
        ({"error": {"status": 400, "type": "invalid_request_error", "message": "prompt is too long: 213462 tokens > 200000 maximum"}},
         "400 prompt is too long: 213462 tokens > 200000 maximum", "context_overflow", None),
        ({"text": "x", "html": {"status": 502}},
         "502 The provider answered with an HTML page (titled '502 Bad Gateway') instead of an API response; is the model's baseUrl right?",
         "transient", None),
        ({"thinking": "abcdefghijklmnop", "text": "hello there", "end_after_chunks": 6},
         "Connection error: the stream ended before it was complete, during the thinking", "transient", None),
    ],
    ids=["429", "529", "overflow", "html", "no-message-stop"],
)
async def test_failures_read_cleanly(turn: dict[str, Any], message: str, kind: str, retry: int | None) -> None:
    with FakeAnthropicServer([turn], api_key=KEY) as server:
        final = await _final(server, [user_message("x", timestamp=1)], system="sys")
    assert (final["stopReason"], final["errorMessage"], final["errorKind"], final.get("retryAfterMs")) == ("error", message, kind, retry)


async def test_a_whole_session_tool_loop_second_prompt_and_resume(project: Path, agent_dir: Path) -> None:
    turns = [dict(TOOL_TURN, when={"last_user_contains": "echo"}), {"text": "It printed hi.", "when": {"request_contains": "hi\\n"}},
             {"thinking": "Still.", "text": "Yes.", "when": {"last_user_contains": "again"}}]
    with FakeAnthropicServer(turns, api_key=KEY) as server:
        model = replace(SONNET, base_url=server.base_url)
        session = create_agent_session(cwd=project, agent_dir=agent_dir, model=model, provider=LiteLLMProvider(timeout=10),
                                       api_key=KEY, load_extensions=False)
        await session.prompt("run echo hi")
        path = session.session_manager.session_file
        session.session_manager.close()
        resumed = create_agent_session(cwd=project, agent_dir=agent_dir, model=model, provider=LiteLLMProvider(timeout=10),
                                       api_key=KEY, session=str(path), load_extensions=False)
        await resumed.prompt("again?")
        requests = server.requests
    assert len(requests) == 3  # the strict fake accepted every continuation
    replayed = [b["type"] for b in requests[2]["messages"][1]["content"]]
    assert replayed == ["redacted_thinking", "thinking", "text", "tool_use"]
    markers = sum(json.dumps(r).count('"cache_control"') for r in requests[2:])
    assert markers == 3  # last tool, system, last user block
