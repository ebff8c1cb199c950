"""pi-tui's own Gemini client (``providers/gemini_http.py``) against the strict Gemini fake: the exact
request of §15.15, what is stored from the stream, and how failures end.

Every test drives ``GeminiHttpProvider`` over real HTTP; the body assertions compare the raw bytes
the fake received, so key order and compactness count.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import Any

import pytest

from pi_tui.core.messages import user_message
from pi_tui.core.provider import CompletionRequest, ModelCost, ModelInfo
from pi_tui.providers.gemini_http import GeminiHttpProvider
from pi_tui.testing.gemini_fake import GeminiFakeServer
from tests.providers.wire_helpers import BASH, final_message, tool_result

PRO3 = ModelInfo(provider="google", id="gemini-3-pro-preview", api="google-generative-ai", litellm_model="gemini/gemini-3-pro-preview",
                 reasoning=True, max_tokens=65536, input=("text", "image"), cost=ModelCost(input=2, output=12, cache_read=0.2))
FLASH25 = replace(PRO3, id="gemini-2.5-flash", litellm_model="gemini/gemini-2.5-flash")
PNG = "iVBORw0KGgoAAAANSUhEUg=="
IMAGE = {"type": "image", "data": PNG, "mimeType": "image/png"}


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


async def _final(server: GeminiFakeServer, messages: list[Any], *, model: ModelInfo = PRO3, reasoning: str | None = "medium",
                 read_timeout: float = 5, **extra: Any) -> dict[str, Any]:
    request = CompletionRequest(model=replace(model, base_url=server.base_url), system_prompt="You are terse.", messages=messages,
                                tools=[BASH], api_key="gk", reasoning=reasoning, **extra)  # type: ignore[arg-type]
    return await final_message(GeminiHttpProvider(timeout=read_timeout), request)


def _assistant(content: list[dict[str, Any]], *, model: ModelInfo = PRO3, stop: str = "toolUse") -> dict[str, Any]:
    return {"role": "assistant", "content": content, "api": model.api, "provider": model.provider, "model": model.id,
            "usage": {}, "stopReason": stop, "timestamp": 2}


# --------------------------------------------------------------------------- the request (§15.15)


async def test_the_exact_body_of_a_fixed_conversation() -> None:
    """Keys and their order, signatures on thinking/text/call parts (base64 only), a run of tool
    results in one user turn with the image inside its functionResponse (Gemini 3), a failed
    reply dropped, thinkingConfig for Gemini 3 Pro at medium, compact JSON, the key in a header."""
    with GeminiFakeServer([{"text": "ok"}], placeholders_ok=False, api_key="gk") as server:
        thought, text_signature, call_signature = (server.mint_signature(PRO3.id) for _ in range(3))
        history = [
            user_message("run echo hi", timestamp=1),
            _assistant([{"type": "thinking", "thinking": "I should run it.", "thinkingSignature": thought},
                        {"type": "text", "text": "Running.", "textSignature": text_signature},
                        {"type": "toolCall", "id": "bash_1_1", "name": "bash", "arguments": {"command": "echo hi"},
                         "thoughtSignature": call_signature},
                        {"type": "toolCall", "id": "read_1_2", "name": "read", "arguments": {"path": "a.png"}}]),
            tool_result("bash_1_1", "hi\n"),
            {**tool_result("read_1_2", "read a.png"), "toolName": "read",
             "content": [{"type": "text", "text": "read a.png"}, IMAGE]},
            _assistant([{"type": "text", "text": "Done.", "textSignature": "not base64!"}], stop="stop"),
            {"role": "user", "content": [{"type": "text", "text": "what about this?"}, IMAGE], "timestamp": 5},
            {**_assistant([{"type": "text", "text": "half an answer"}], stop="error"), "errorMessage": "cut"},
            user_message("and now?", timestamp=7),
        ]
        final = await _final(server, history)
        sent = server.recorded[0]
    assert final["stopReason"] == "stop", final.get("errorMessage")
    assert sent.path == "/v1beta/models/gemini-3-pro-preview:streamGenerateContent?alt=sse"  # no ?key=: the key stays out of URLs
    assert sent.headers["x-goog-api-key"] == "gk" and sent.headers["content-type"] == "application/json"
    assert sent.headers["user-agent"].startswith("pi-tui/")
    assert re.fullmatch(r"pi-tui/\S+ gl-python/3\.\d+\.\d+\S*", sent.headers["x-goog-api-client"])  # Google's client/language form
    expected = {
        "contents": [
            {"parts": [{"text": "run echo hi"}], "role": "user"},
            {"parts": [{"text": "I should run it.", "thought": True, "thoughtSignature": thought},
                       {"text": "Running.", "thoughtSignature": text_signature},
                       {"functionCall": {"args": {"command": "echo hi"}, "name": "bash"}, "thoughtSignature": call_signature},
                       {"functionCall": {"args": {"path": "a.png"}, "name": "read"}}], "role": "model"},
            {"parts": [{"functionResponse": {"name": "bash", "response": {"output": "hi\n"}}},
                       {"functionResponse": {"name": "read", "response": {"output": "read a.png"},
                                             "parts": [{"inlineData": {"mimeType": "image/png", "data": PNG}}]}}], "role": "user"},
            {"parts": [{"text": "Done."}], "role": "model"},
            {"parts": [{"text": "what about this?"}, {"inlineData": {"data": PNG, "mimeType": "image/png"}}], "role": "user"},
            {"parts": [{"text": "and now?"}], "role": "user"},
        ],
        "systemInstruction": {"parts": [{"text": "You are terse."}], "role": "user"},
        "tools": [{"functionDeclarations": [{"name": "bash", "description": "Run a command", "parametersJsonSchema": BASH.parameters}]}],
        "generationConfig": {"maxOutputTokens": 32000, "thinkingConfig": {"includeThoughts": True, "thinkingLevel": "HIGH"}},
    }
    assert sent.raw.decode() == _compact(expected)


async def test_replay_to_another_model_drops_signatures_and_sends_thinking_as_text() -> None:
    """A 2.5 Flash request replaying Gemini 3 Pro's and Claude's turns: no signature at all, their
    thinking as plain text parts; older Gemini gets a tool result's image in an extra user turn."""
    claude = ModelInfo(provider="anthropic", id="claude-sonnet-4-5", api="anthropic-messages")
    with GeminiFakeServer([{"text": "ok"}], placeholders_ok=False) as server:
        signature = server.mint_signature(PRO3.id)
        history = [
            user_message("look", timestamp=1),
            _assistant([{"type": "thinking", "thinking": "Claude thinks.", "thinkingSignature": "EqQBCkYI"},
                        {"type": "toolCall", "id": "toolu_01|x", "name": "read", "arguments": {"path": "a.png"}}], model=claude),
            {**tool_result("toolu_01|x", ""), "toolName": "read", "content": [IMAGE]},
            _assistant([{"type": "thinking", "thinking": "Pro thinks.", "thinkingSignature": signature},
                        {"type": "text", "text": "Seen.", "textSignature": signature}], stop="stop"),
            user_message("and?", timestamp=5),
        ]
        await _final(server, history, model=FLASH25)
        contents = json.loads(server.recorded[0].raw)["contents"]
    assert contents == [
        {"parts": [{"text": "look"}], "role": "user"},
        {"parts": [{"text": "Claude thinks."}, {"functionCall": {"args": {"path": "a.png"}, "name": "read"}}], "role": "model"},
        {"parts": [{"functionResponse": {"name": "read", "response": {"output": "(see attached image)"}}}], "role": "user"},
        {"parts": [{"text": "Tool result image:"}, {"inlineData": {"data": PNG, "mimeType": "image/png"}}], "role": "user"},
        {"parts": [{"text": "Pro thinks."}, {"text": "Seen."}], "role": "model"},
        {"parts": [{"text": "and?"}], "role": "user"},
    ]


async def test_failed_tool_results_are_errors_and_images_become_placeholders_without_vision() -> None:
    text_only = replace(FLASH25, input=("text",))
    with GeminiFakeServer([{"text": "ok"}]) as server:
        history = [user_message("go", timestamp=1),
                   _assistant([{"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": "false"}}], model=text_only),
                   {**tool_result("c1", "Command exited with code 1", error=True), "content": [
                       {"type": "text", "text": "Command exited with code 1"}, IMAGE]}]
        await _final(server, history, model=text_only)
        response = json.loads(server.recorded[0].raw)["contents"][-1]
    assert response == {"parts": [{"functionResponse": {"name": "bash", "response": {
        "error": "Command exited with code 1\n(tool image omitted: model does not support images)"}}}], "role": "user"}


@pytest.mark.parametrize(
    ("model_id", "level", "budgets", "expected"),
    [
        ("gemini-3-pro-preview", "minimal", None, {"includeThoughts": True, "thinkingLevel": "LOW"}),
        ("gemini-3-pro-preview", None, None, {"thinkingLevel": "LOW"}),
        ("gemini-3.1-flash-preview", "medium", None, {"includeThoughts": True, "thinkingLevel": "MEDIUM"}),
        ("gemini-3-flash-preview", None, None, {"thinkingLevel": "MINIMAL"}),
        ("gemma-4-27b-it", "low", None, {"includeThoughts": True, "thinkingLevel": "MINIMAL"}),
        ("gemini-2.5-flash", "medium", None, {"includeThoughts": True, "thinkingBudget": 8192}),
        ("gemini-2.5-flash", "medium", {"medium": 3000}, {"includeThoughts": True, "thinkingBudget": 3000}),
        ("gemini-2.5-flash", None, {"medium": 3000}, {"thinkingBudget": 0}),
        ("gemini-2.5-flash-lite", "minimal", None, {"includeThoughts": True, "thinkingBudget": 512}),
        ("gemini-2.5-pro", "high", None, {"includeThoughts": True, "thinkingBudget": 32768}),
        ("gemini-2.5-pro", None, None, {"thinkingBudget": 128}),  # pi sends 0, which 2.5 Pro refuses
        ("gemini-3-pro-preview", "high", {"high": 999}, {"includeThoughts": True, "thinkingLevel": "HIGH"}),  # levels, no budgets
        ("gemini-2.0-flash-thinking", "high", None, {"includeThoughts": True, "thinkingBudget": -1}),
    ],
)
async def test_thinking_config_per_model_family_level_and_budget_setting(model_id: str, level: str | None,
                                                                         budgets: dict[str, int] | None, expected: dict[str, Any]) -> None:
    model = replace(PRO3, id=model_id)
    with GeminiFakeServer([{"text": "ok"}]) as server:
        final = await _final(server, [user_message("x", timestamp=1)], model=model, reasoning=level, thinking_budgets=budgets)
        raw = server.recorded[0].raw.decode()
    assert final["stopReason"] == "stop", final.get("errorMessage")  # the strict fake accepted it
    assert raw.endswith(f'"generationConfig":{{"maxOutputTokens":32000,"thinkingConfig":{_compact(expected)}}}}}')


async def test_a_model_without_reasoning_gets_no_thinking_config() -> None:
    with GeminiFakeServer([{"text": "ok"}]) as server:
        await _final(server, [user_message("x", timestamp=1)], model=replace(PRO3, id="gemini-2.0-flash", reasoning=False))
        assert json.loads(server.recorded[0].raw)["generationConfig"] == {"maxOutputTokens": 32000}


# --------------------------------------------------------------------------- what is stored


async def test_blocks_signatures_tool_ids_usage_and_response_id_are_stored_as_pi_stores_them() -> None:
    chunk = {"modelVersion": "gemini-3-pro-preview"}
    parts = [
        [{"text": "Let me ", "thought": True, "thoughtSignature": "c2lnMQ=="}],
        [{"text": "think.", "thought": True}],  # a later part without a signature keeps the block's
        [{"text": "Calling "}, {"text": "now.", "thoughtSignature": "dHh0"}],
        [{"functionCall": {"name": "bash", "args": {"command": "ls"}, "id": "call_a"}, "thoughtSignature": "Y2FsbA=="}],
        [{"functionCall": {"name": "bash", "args": {"command": "pwd"}, "id": "call_a"}}],  # a duplicate id is replaced
        [{"functionCall": {"name": "read", "args": {"path": "x"}}}],  # no id: pi's <name>_<ms>_<n>
    ]
    raw = [{**chunk, "responseId": "" if n == 0 else f"resp-{n}", "candidates": [{"content": {"parts": p, "role": "model"}, "index": 0}],
            "usageMetadata": {"promptTokenCount": 10 * n, "totalTokenCount": 10 * n}} for n, p in enumerate(parts)]
    raw[-1]["candidates"][0]["finishReason"] = "STOP"
    raw[-1]["usageMetadata"] = {"promptTokenCount": 1000, "cachedContentTokenCount": 600, "candidatesTokenCount": 20,
                                "thoughtsTokenCount": 30, "totalTokenCount": 1050}
    with GeminiFakeServer([{"raw_chunks": raw}]) as server:
        final = await _final(server, [user_message("go", timestamp=1)])
    content = final["content"]
    assert content[0] == {"type": "thinking", "thinking": "Let me think.", "thinkingSignature": "c2lnMQ=="}
    assert content[1] == {"type": "text", "text": "Calling now.", "textSignature": "dHh0"}
    assert content[2] == {"type": "toolCall", "id": "call_a", "name": "bash", "arguments": {"command": "ls"}, "thoughtSignature": "Y2FsbA=="}
    assert content[3]["id"].startswith("bash_") and content[3]["id"] != "call_a" and content[3]["arguments"] == {"command": "pwd"}
    name, millis, counter = content[4]["id"].split("_")
    assert (name, len(millis), counter.isdigit()) == ("read", 13, True)
    assert final["stopReason"] == "toolUse" and final["responseId"] == "resp-1"
    usage = final["usage"]  # the last usageMetadata replaced every earlier one
    assert (usage["input"], usage["cacheRead"], usage["cacheWrite"], usage["output"], usage["totalTokens"]) == (400, 600, 0, 50, 1050)
    assert usage["cost"]["total"] == pytest.approx((400 * 2 + 50 * 12 + 600 * 0.2) / 1e6)
    assert "responseModel" not in final and list(final)[:8] == ["role", "content", "api", "provider", "model", "usage",
                                                                "stopReason", "timestamp"]


@pytest.mark.parametrize(
    ("finish", "with_call", "stop", "error"),
    [("STOP", False, "stop", None), ("MAX_TOKENS", False, "length", None), ("MAX_TOKENS", True, "toolUse", None),
     ("SAFETY", False, "error", "An unknown error occurred (finishReason SAFETY)"), ("SAFETY", True, "toolUse", None)],
)
async def test_stop_reasons(finish: str, with_call: bool, stop: str, error: str | None) -> None:
    turn: dict[str, Any] = {"text": "partial", "finish_reason": finish}
    if with_call:
        turn["tool_calls"] = [{"name": "bash", "arguments": {"command": "ls"}}]
    with GeminiFakeServer([turn]) as server:
        final = await _final(server, [user_message("x", timestamp=1)])
    assert (final["stopReason"], final.get("errorMessage")) == (stop, error)
    assert final["content"][0]["text"] == "partial"


# --------------------------------------------------------------------------- failures

RETRY_INFO = {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "7s"}


@pytest.mark.parametrize(
    ("turn", "message", "kind", "retry_after"),
    [
        ({"error": {"status": 429, "message": "Resource has been exhausted (e.g. check quota).", "retry_after": 7}},
         _compact({"error": {"code": 429, "message": "Resource has been exhausted (e.g. check quota).", "status": "RESOURCE_EXHAUSTED",
                             "details": [RETRY_INFO]}}), "rate_limit", 7000),
        ({"error": {"status": 400, "message": "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576)."}},
         _compact({"error": {"code": 400, "message": "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).",
                             "status": "INVALID_ARGUMENT"}}), "context_overflow", None),
        ({"error": {"status": 503, "message": "The model is overloaded. Please try again later."}},
         _compact({"error": {"code": 503, "message": "The model is overloaded. Please try again later.", "status": "UNAVAILABLE"}}),
         "transient", None),
        ({"error": {"status": 403, "message": "Permission denied."}},
         _compact({"error": {"code": 403, "message": "Permission denied.", "status": "PERMISSION_DENIED"}}), "auth", None),
        ({"text": "x", "fault": {"kind": "html", "status": 502, "title": "502 Bad Gateway"}},
         "502 Bad Gateway (an HTML page instead of the API's error)", "transient", None),
        ({"text": "abcdefghijklmnop", "stream_error": {"after": 1, "status": 503}},
         _compact({"error": {"code": 503, "message": "The model is overloaded. Please try again later.", "status": "UNAVAILABLE"}}),
         "transient", None),
    ],
    ids=["429-retry-info", "overflow", "503", "403", "html-502", "mid-stream-error"],
)
async def test_errors_read_as_pis_and_carry_the_servers_delay(turn: dict[str, Any], message: str, kind: str, retry_after: int | None) -> None:
    with GeminiFakeServer([turn]) as server:
        final = await _final(server, [user_message("x", timestamp=1)])
    assert final["stopReason"] == "error"
    assert (final["errorMessage"], final["errorKind"], final.get("retryAfterMs")) == (message, kind, retry_after)


async def test_a_stream_without_finish_reason_is_an_error_never_an_answer() -> None:
    """pi 0.73.1 takes a body that just ends as a finished ``stop``; here it is a transient error."""
    raw = [{"candidates": [{"content": {"parts": [{"text": "It printed"}], "role": "model"}}], "responseId": "r1"}]
    with GeminiFakeServer([{"raw_chunks": raw}]) as server:
        final = await _final(server, [user_message("x", timestamp=1)])
    assert (final["stopReason"], final["errorKind"]) == ("error", "transient")
    assert final["errorMessage"] == ("Connection error: the stream ended before it was complete (no finishReason), during the text")
    assert final["content"] == [{"type": "text", "text": "It printed"}]


@pytest.mark.parametrize("style", ["clean", "reset"])
async def test_a_function_call_cut_in_its_arguments_never_becomes_a_tool_call(style: str) -> None:
    turn = {"text": "Running.", "tool_calls": [{"name": "bash", "arguments": {"command": "rm -rf build; ls"}}],
            "fault": {"kind": "cut", "at": "tool_args", "style": style}}
    with GeminiFakeServer([turn]) as server:
        final = await _final(server, [user_message("x", timestamp=1)])
    assert final["stopReason"] == "error" and final["errorKind"] == "transient"
    assert final["errorMessage"].startswith("Connection error: the stream ended before it was complete")
    assert final["errorMessage"].endswith(", in the middle of the arguments of tool call 'bash'; tool call 'bash' not run")
    assert [b["type"] for b in final["content"]] == ["text"]  # the call itself is not in the message


async def test_a_stall_times_out_naming_where() -> None:
    with GeminiFakeServer([{"text": "abcdefghijklmnop", "stall_after_chunks": 1}]) as server:
        final = await _final(server, [user_message("x", timestamp=1)], read_timeout=0.5)
    assert final["errorMessage"] == "Request timed out: no data from the provider within the read timeout, during the text"
    assert final["content"] == [{"type": "text", "text": "abcdefgh"}]


async def test_garbage_in_the_stream_is_a_malformed_stream() -> None:
    with GeminiFakeServer([{"text": "abcdefghijklmnop", "garbage_after_chunks": 1}]) as server:
        final = await _final(server, [user_message("x", timestamp=1)])
    assert final["errorMessage"].startswith("Malformed stream from the provider: event data is not a JSON object: '<html>")
    assert final["errorMessage"].endswith(", during the text") and final["errorKind"] == "transient"
