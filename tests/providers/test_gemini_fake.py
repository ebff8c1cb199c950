"""The Gemini fake speaks Gemini's SSE format and rejects what the API rejects."""

from __future__ import annotations

import base64
import json
import urllib.error
import urllib.request
from typing import Any

import pytest

from pi_tui.testing.gemini_fake import GeminiFakeServer
from pi_tui.testing.gemini_fake_rules import MISSING_SIGNATURE

PRO3 = "gemini-3-pro-preview"


def _post(server: GeminiFakeServer, body: Any, *, model: str = PRO3, key: str | None = "k", query: str = "alt=sse") -> tuple[int, str]:
    headers = {"Content-Type": "application/json"}
    if key:
        headers["x-goog-api-key"] = key
    url = f"{server.base_url}/models/{model}:streamGenerateContent?{query}"
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()


def _events(text: str) -> list[dict[str, Any]]:
    assert "[DONE]" not in text
    return [json.loads(block.removeprefix("data: ")) for block in text.split("\r\n\r\n") if block]


def _error(text: str) -> dict[str, Any]:
    error: dict[str, Any] = json.loads(text)["error"]
    return error


def _user(text: str) -> dict[str, Any]:
    return {"role": "user", "parts": [{"text": text}]}


def _call_turn(signature: str | None) -> list[dict[str, Any]]:
    call: dict[str, Any] = {"functionCall": {"name": "bash", "args": {"command": "echo hi"}}}
    if signature is not None:
        call["thoughtSignature"] = signature
    return [
        _user("run echo hi"),
        {"role": "model", "parts": [call]},
        {"role": "user", "parts": [{"functionResponse": {"name": "bash", "response": {"output": "hi\n"}}}]},
    ]


def test_a_reply_streams_as_gemini_sse_with_a_signed_function_call_and_usage() -> None:
    turn = {"thinking": "Let me run it.", "text": "Running.", "tool_calls": [{"name": "bash", "arguments": {"command": "echo hi"}}],
            "usage": {"prompt_tokens": 1000, "cached_tokens": 600, "completion_tokens": 20, "thoughts_tokens": 30}}
    with GeminiFakeServer([turn]) as server:
        status, text = _post(server, {"contents": [_user("run it")]})
        issued = server.issued_signatures
    assert status == 200
    events = _events(text)
    parts = [e["candidates"][0]["content"]["parts"][0] for e in events]
    assert [p.get("thought", False) for p in parts[:2]] == [True, True]
    assert "".join(p["text"] for p in parts if p.get("thought")) == "Let me run it."
    assert parts[-1] == {"functionCall": {"name": "bash", "args": {"command": "echo hi"}}, "thoughtSignature": issued[0]}
    assert all("thoughtSignature" not in p for p in parts[:-1])  # only the first call is signed
    last = events[-1]
    assert last["candidates"][0]["finishReason"] == "STOP"
    assert last["usageMetadata"] == {"promptTokenCount": 1000, "candidatesTokenCount": 20, "cachedContentTokenCount": 600,
                                     "thoughtsTokenCount": 30, "totalTokenCount": 1050,
                                     "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 1000}]}
    assert {e["responseId"] for e in events} == {events[0]["responseId"]}


def test_a_text_reply_is_signed_on_its_last_part() -> None:
    with GeminiFakeServer([{"text": "Hello there, friend."}]) as server:
        _, text = _post(server, {"contents": [_user("hi")]})
        issued = server.issued_signatures
    parts = [e["candidates"][0]["content"]["parts"][0] for e in _events(text)]
    assert parts[-1]["thoughtSignature"] == issued[0] and all("thoughtSignature" not in p for p in parts[:-1])


def test_gemini_3_rejects_a_function_call_turn_replayed_without_its_signature() -> None:
    with GeminiFakeServer([{"text": "ok"}, {"text": "ok"}]) as server:
        missing = _post(server, {"contents": _call_turn(None)})
        corrupted = _post(server, {"contents": _call_turn(base64.b64encode(b"made up").decode())})
        assert server.script.remaining == 2  # rejected requests use no turn
        # a signature the API issued is accepted
        _post(server, {"contents": [_user("go")], "tools": [{"functionDeclarations": [{"name": "bash"}]}]})
        accepted = _post(server, {"contents": _call_turn(server.issued_signatures[0])})
    assert missing[0] == 400
    assert _error(missing[1]) == {"code": 400, "status": "INVALID_ARGUMENT",
                                  "message": MISSING_SIGNATURE.format(name="bash", position=2)}
    assert (corrupted[0], _error(corrupted[1])["message"]) == (400, "Corrupted thought signature.")
    assert accepted[0] == 200


def test_placeholder_signatures_pass_like_the_api_unless_the_fake_is_told_otherwise() -> None:
    placeholder = base64.b64encode(b"skip_thought_signature_validator").decode()
    with GeminiFakeServer([{"text": "ok"}]) as server:
        assert _post(server, {"contents": _call_turn(placeholder)})[0] == 200
    with GeminiFakeServer([{"text": "ok"}], placeholders_ok=False) as server:
        status, text = _post(server, {"contents": _call_turn(placeholder)})
    assert status == 400 and "missing a thought_signature" in _error(text)["message"]


def test_only_the_current_turn_needs_signatures_and_older_models_need_none() -> None:
    older_turn = [*_call_turn(None), {"role": "model", "parts": [{"text": "It printed hi."}]}, _user("thanks")]
    with GeminiFakeServer([{"text": "ok"}, {"text": "ok"}]) as server:
        assert _post(server, {"contents": older_turn})[0] == 200
        assert _post(server, {"contents": _call_turn(None)}, model="gemini-2.5-flash")[0] == 200


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"contents": []}, "contents is not specified"),
        ({"contents": [_user("x")], "temperature": 1}, 'Unknown name "temperature"'),
        ({"contents": [{"role": "assistant", "parts": [{"text": "x"}]}]}, "Please use a valid role: user, model."),
        ({"contents": [{"role": "user", "parts": []}]}, "contents.parts must not be empty"),
        ({"contents": [{"role": "user", "parts": [{"text": "a", "inlineData": {"mimeType": "image/png", "data": ""}}]}]},
         "required oneof field 'data'"),
        ({"contents": [_user("x"), {"role": "user", "parts": [{"functionResponse": {"name": "bash", "response": {}}}]}]},
         "function response turn comes immediately after a function call turn"),
        ({"contents": [*_call_turn("x")[:2], {"role": "model", "parts": [{"functionCall": {"name": "bash", "args": {}}}]}]},
         "function call turn comes immediately after a user turn"),
        ({"contents": [_user("x"), {"role": "model", "parts": [{"functionCall": {"name": "a", "args": {}}}, {"functionCall": {"name": "b", "args": {}}}]},
                       {"role": "user", "parts": [{"functionResponse": {"name": "a", "response": {}}}]}]},
         "number of function response parts is equal to the number of function call parts"),
        ({"contents": [_user("x")], "generationConfig": {"thinkingConfig": {"thinkingBudget": 10, "thinkingLevel": "LOW"}}},
         "only one of thinking budget and thinking level"),
        ({"contents": [_user("x")], "generationConfig": {"thinkingConfig": {"thinkingLevel": "MEDIUM"}}}, "Thinking level MEDIUM is not supported"),
        ({"contents": [_user("x")], "generationConfig": {"maxOutputTokens": 100_000}}, "maxOutputTokens value of 100000"),
    ],
    ids=["no-contents", "unknown-field", "bad-role", "empty-parts", "two-data-fields", "orphan-response", "call-after-model",
         "response-count", "budget-and-level", "pro-medium", "max-output"],
)
def test_malformed_requests_get_the_apis_400(body: dict[str, Any], message: str) -> None:
    with GeminiFakeServer([{"text": "never"}]) as server:
        status, text = _post(server, body)
    assert status == 400 and message in _error(text)["message"]


def test_snake_case_fields_are_the_same_request() -> None:
    body = {"contents": [{"role": "user", "parts": [{"text": "x"}]}], "system_instruction": {"parts": [{"text": "sys"}]},
            "generation_config": {"max_output_tokens": 100, "thinking_config": {"thinking_level": "high"}}}
    with GeminiFakeServer([{"text": "ok", "when": {"system_contains": "sys"}}]) as server:
        assert _post(server, body)[0] == 200


def test_thinking_levels_exist_only_on_gemini_3_and_2_5_pro_cannot_turn_thinking_off() -> None:
    with GeminiFakeServer([]) as server:
        level = _post(server, {"contents": [_user("x")], "generationConfig": {"thinkingConfig": {"thinkingLevel": "LOW"}}}, model="gemini-2.5-flash")
        off = _post(server, {"contents": [_user("x")], "generationConfig": {"thinkingConfig": {"thinkingBudget": 0}}}, model="gemini-2.5-pro")
    assert (level[0], _error(level[1])["message"]) == (400, "Thinking level is not supported for this model.")
    assert (off[0], _error(off[1])["message"]) == (400, "Budget 0 is invalid. This model only works in thinking mode.")


def test_keys_paths_and_errors_are_googles() -> None:
    turns = [{"error": {"status": 429, "message": "Resource has been exhausted (e.g. check quota).", "retry_after": 7}}]
    with GeminiFakeServer(turns, api_key="right", context_window=10) as server:
        no_key = _post(server, {"contents": [_user("x")]}, key=None)
        wrong_key = _post(server, {"contents": [_user("x")]}, key="wrong")
        not_sse = _post(server, {"contents": [_user("x")]}, key="right", query="")
        overflow = _post(server, {"contents": [_user("x" * 100)]}, key="right")
    with GeminiFakeServer(turns) as server:
        limited = _post(server, {"contents": [_user("x")]})
    assert (no_key[0], _error(no_key[1])["status"]) == (403, "PERMISSION_DENIED")
    assert (wrong_key[0], _error(wrong_key[1])["message"]) == (400, "API key not valid. Please pass a valid API key.")
    assert not_sse[0] == 400
    assert overflow[0] == 400 and "exceeds the maximum number of tokens allowed (10)" in _error(overflow[1])["message"]
    assert limited[0] == 429 and _error(limited[1]) == {
        "code": 429, "message": "Resource has been exhausted (e.g. check quota).", "status": "RESOURCE_EXHAUSTED",
        "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "7s"}]}


def test_garbage_and_stream_errors_arrive_inside_the_stream() -> None:
    turns = [{"text": "abcdefghijklmnop", "garbage_after_chunks": 1},
             {"text": "abcdefghijklmnop", "stream_error": {"after": 1, "status": 503}}]
    with GeminiFakeServer(turns) as server:
        _, garbage = _post(server, {"contents": [_user("x")]})
        _, broken = _post(server, {"contents": [_user("y")]})
    assert garbage.split("\r\n\r\n")[1] == "data: <html><body>502 Bad Gateway</body></html>"
    assert json.loads(broken.split("\r\n\r\n")[1].removeprefix("data: "))["error"]["status"] == "UNAVAILABLE"
