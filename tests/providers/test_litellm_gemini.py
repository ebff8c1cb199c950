"""Gemini through litellm against the strict Gemini fake: the exact wire, continuity, usage, failures."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from pi_tui.core.messages import user_message
from pi_tui.core.provider import CompletionRequest, ModelCost, ModelInfo
from pi_tui.providers.litellm_provider import LiteLLMProvider
from pi_tui.testing.gemini_fake import GeminiFakeServer
from tests.providers.wire_helpers import BASH, final_message, tool_result

PRO3 = ModelInfo(provider="google", id="gemini-3-pro-preview", api="google-generative-ai", litellm_model="gemini/gemini-3-pro-preview",
                 reasoning=True, max_tokens=65536, cost=ModelCost(input=2, output=12, cache_read=0.2))
TOOL_TURN = {"thinking": "I should run it.", "text": "Running.", "tool_calls": [{"name": "bash", "arguments": {"command": "echo hi"}}],
             "usage": {"prompt_tokens": 1000, "cached_tokens": 600, "completion_tokens": 20, "thoughts_tokens": 30}}


async def _final(server: GeminiFakeServer, messages: list[Any], *, model: ModelInfo = PRO3, reasoning: str | None = "medium",
                 read_timeout: float = 5) -> dict[str, Any]:
    request = CompletionRequest(model=replace(model, base_url=server.base_url), system_prompt="You are terse.", messages=messages,
                                tools=[BASH], api_key="gk", reasoning=reasoning)  # type: ignore[arg-type]
    return await final_message(LiteLLMProvider(timeout=read_timeout), request)



async def test_a_tool_turn_round_trips_its_signature_and_the_exact_body() -> None:
    question = user_message("run echo hi", timestamp=1)
    with GeminiFakeServer([TOOL_TURN, {"text": "It failed."}], placeholders_ok=False) as server:
        first = await _final(server, [question])
        signature = server.issued_signatures[0]
        call = first["content"][2]
        second = await _final(server, [question, first, tool_result(call["id"], "boom", error=True)])
        body = server.requests[1]
        path = server.recorded[1].path
    assert [b["type"] for b in first["content"]] == ["thinking", "text", "toolCall"]
    assert first["content"][0] == {"type": "thinking", "thinking": "I should run it."}  # nothing signed it: no key, as pi
    assert first["content"][1] == {"type": "text", "text": "Running."}
    assert call["thoughtSignature"] == signature and call["arguments"] == {"command": "echo hi"}
    assert first["stopReason"] == "toolUse" and first["api"] == "google-generative-ai"
    assert second["stopReason"] == "stop", second.get("errorMessage")
    assert path == "/v1beta/models/gemini-3-pro-preview:streamGenerateContent?alt=sse"
    assert body == {
        "contents": [
            {"role": "user", "parts": [{"text": "run echo hi"}]},
            {"role": "model", "parts": [
                {"thought": True, "text": "I should run it."},
                {"text": "Running."},
                {"function_call": {"name": "bash", "args": {"command": "echo hi"}, "id": call["id"]}, "thoughtSignature": signature},
            ]},
            {"role": "user", "parts": [{"function_response": {"name": "bash", "response": {"error": "boom"}, "id": call["id"]}}]},
        ],
        "system_instruction": {"parts": [{"text": "You are terse."}]},
        "tools": [{"function_declarations": [{"name": "bash", "description": "Run a command", "parameters": BASH.parameters}]}],
        "generationConfig": {"max_output_tokens": 32000, "thinkingConfig": {"thinkingLevel": "HIGH", "includeThoughts": True}},
    }


async def test_usage_and_cost_follow_gemini_counts() -> None:
    with GeminiFakeServer([TOOL_TURN]) as server:
        final = await _final(server, [user_message("go", timestamp=1)])
    usage = final["usage"]
    # input = prompt − cached, output = candidates + thoughts (§15.15)
    assert (usage["input"], usage["cacheRead"], usage["cacheWrite"], usage["output"], usage["totalTokens"]) == (400, 600, 0, 50, 1050)
    assert usage["cost"]["input"] == pytest.approx(400 * 2 / 1e6)
    assert usage["cost"]["cacheRead"] == pytest.approx(600 * 0.2 / 1e6)
    assert usage["cost"]["total"] == pytest.approx((400 * 2 + 50 * 12 + 600 * 0.2) / 1e6)


async def test_text_and_thinking_signatures_are_kept_and_the_text_one_goes_back() -> None:
    turns = [{"thinking": "Greeting.", "text": "Hello there.", "thought_signature": True}, {"text": "Bye."}]
    with GeminiFakeServer(turns) as server:
        first = await _final(server, [user_message("hi", timestamp=1)])
        thinking_signature, text_signature = server.issued_signatures
        await _final(server, [user_message("hi", timestamp=1), first, user_message("bye", timestamp=4)])
        replayed = server.requests[1]["contents"][1]
    assert first["content"] == [
        {"type": "thinking", "thinking": "Greeting.", "thinkingSignature": thinking_signature},
        {"type": "text", "text": "Hello there.", "textSignature": text_signature},
    ]
    # litellm has no slot for a thought part's signature: only the text part's goes back
    assert replayed == {"role": "model", "parts": [{"thought": True, "text": "Greeting."},
                                                   {"text": "Hello there.", "thoughtSignature": text_signature}]}


async def test_another_models_turns_lose_their_signatures_and_thinking() -> None:
    flash = replace(PRO3, id="gemini-2.5-flash", litellm_model="gemini/gemini-2.5-flash")
    with GeminiFakeServer([TOOL_TURN, {"text": "ok"}]) as server:
        first = await _final(server, [user_message("run", timestamp=1)])
        call = first["content"][2]
        await _final(server, [user_message("run", timestamp=1), first, tool_result(call["id"], "hi\n")], model=flash)
        replayed = server.requests[1]["contents"][1:]
    assert replayed == [
        {"role": "model", "parts": [{"text": "I should run it."}, {"text": "Running."},
                                    {"function_call": {"name": "bash", "args": {"command": "echo hi"}}}]},
        {"role": "user", "parts": [{"function_response": {"name": "bash", "response": {"output": "hi\n"}}}]},
    ]


@pytest.mark.parametrize(
    ("model_id", "level", "expected"),
    [
        ("gemini-3-pro-preview", "minimal", {"thinkingLevel": "LOW", "includeThoughts": True}),
        ("gemini-3-pro-preview", "high", {"thinkingLevel": "HIGH", "includeThoughts": True}),
        ("gemini-3-pro-preview", None, {"thinkingLevel": "LOW"}),
        ("gemini-3-flash-preview", "medium", {"thinkingLevel": "MEDIUM", "includeThoughts": True}),
        ("gemini-3-flash-preview", None, {"thinkingLevel": "MINIMAL"}),
        ("gemini-2.5-flash", "medium", {"includeThoughts": True, "thinkingBudget": 8192}),
        ("gemini-2.5-flash", None, {"thinkingBudget": 0}),
        ("gemini-2.5-pro", "high", {"includeThoughts": True, "thinkingBudget": 32768}),
        ("gemini-2.5-pro", None, {"thinkingBudget": 128}),  # pi sends 0, which 2.5 Pro refuses
        ("gemini-2.5-flash-lite", "minimal", {"includeThoughts": True, "thinkingBudget": 512}),
    ],
)
async def test_thinking_levels_map_as_pi_maps_them(model_id: str, level: str | None, expected: dict[str, Any]) -> None:
    model = replace(PRO3, id=model_id, litellm_model=f"gemini/{model_id}")
    with GeminiFakeServer([{"text": "ok"}]) as server:
        final = await _final(server, [user_message("x", timestamp=1)], model=model, reasoning=level)
        config = server.requests[0]["generationConfig"]
    assert final["stopReason"] == "stop", final.get("errorMessage")
    assert config["thinkingConfig"] == expected


async def test_a_non_reasoning_model_gets_no_thinking_config() -> None:
    model = replace(PRO3, id="gemini-2.0-flash", litellm_model="gemini/gemini-2.0-flash", reasoning=False)
    with GeminiFakeServer([{"text": "ok"}]) as server:
        await _final(server, [user_message("x", timestamp=1)], model=model, reasoning="high")
        assert server.requests[0]["generationConfig"] == {"max_output_tokens": 32000}


@pytest.mark.parametrize(
    ("turn", "message", "kind", "retry_after"),
    [
        ({"error": {"status": 429, "message": "Resource has been exhausted (e.g. check quota).", "retry_after": 7}},
         "429 Resource has been exhausted (e.g. check quota).", "rate_limit", 7000),
        ({"error": {"status": 400, "message": "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576)."}},
         "400 The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).", "context_overflow", None),
        ({"error": {"status": 503, "message": "The model is overloaded. Please try again later."}},
         "503 The model is overloaded. Please try again later.", "transient", None),
        ({"error": {"status": 403, "message": "Permission denied."}}, "403 Permission denied.", "auth", None),
        ({"text": "abcdefghijklmnopqrstuvwxyz", "cut_after_chunks": 1},
         "Connection error: the stream ended before it was complete, during the text", "transient", None),
        ({"text": "abcdefghijklmnopqrstuvwxyz", "garbage_after_chunks": 1},
         "Connection error: the stream ended before it was complete (no finish reason), during the text", "transient", None),
        ({"text": "abcdefghijklmnopqrstuvwxyz", "stall_after_chunks": 1},
         "Request timed out: no data from the provider within the read timeout, during the text", "transient", None),
    ],
    ids=["429", "overflow", "503", "403", "cut", "garbage", "stall"],
)
async def test_failures_end_the_stream_with_a_classified_error(turn: dict[str, Any], message: str, kind: str, retry_after: int | None) -> None:
    with GeminiFakeServer([turn]) as server:
        final = await _final(server, [user_message("x", timestamp=1)], read_timeout=1.5)
    assert final["stopReason"] == "error"
    assert (final["errorMessage"], final["errorKind"], final.get("retryAfterMs")) == (message, kind, retry_after)
    if "after_chunks" in json.dumps(turn):
        assert final["content"] == [{"type": "text", "text": "abcdefgh"}]  # the partial text is kept
