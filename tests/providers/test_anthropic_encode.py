"""The Anthropic Messages request pi-tui sends, against pi-behaviour.md §15.2–15.8 (exact)."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from pi_tui.core.provider import CompletionRequest, ModelInfo, ToolSpec
from pi_tui.providers.anthropic_encode import anthropic_headers, base_url, build_anthropic_body
from pi_tui.providers.models import ModelRegistry

SONNET = ModelRegistry(None, env={}).resolve("anthropic/claude-sonnet-4-5")
SIGNATURE = "EqQBCkYIBxgCKkDFAKE-SIGNATURE-turn1-0123456789abcdef"
TOOL_ID = "toolu_01Fake10142288b2cab748"
WRITE_SCHEMA = {"type": "object", "required": ["path", "content"], "additionalProperties": False,
                "properties": {"path": {"type": "string", "description": "Path"}, "content": {"type": "string"}}}


def _assistant(content: list[dict[str, Any]], model: ModelInfo = SONNET, stop: str = "toolUse") -> dict[str, Any]:
    return {"role": "assistant", "content": content, "api": model.api, "provider": model.provider, "model": model.id,
            "usage": {}, "stopReason": stop, "timestamp": 1}


def _result(call_id: str, text: str, *, is_error: bool = False) -> dict[str, Any]:
    return {"role": "toolResult", "toolCallId": call_id, "toolName": "bash", "content": [{"type": "text", "text": text}],
            "isError": is_error, "timestamp": 2}


def _user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 0}


def _request(messages: list[Any], *, model: ModelInfo = SONNET, reasoning: Any = "medium", tools: list[ToolSpec] | None = None,
             **kwargs: Any) -> CompletionRequest:
    if tools is None:
        tools = [ToolSpec(name="bash", description="Run", parameters={"type": "object", "properties": {"command": {"type": "string"}},
                                                                      "required": ["command"]}),
                 ToolSpec(name="write", description="Write a file", parameters=WRITE_SCHEMA)]
    return CompletionRequest(model=model, system_prompt="You are an expert coding assistant", messages=messages, tools=tools,
                             reasoning=reasoning, api_key="sk-ant-api03-test", **kwargs)


def test_the_second_request_of_a_tool_call_is_pis_body_byte_for_byte() -> None:
    """§15.13: request 2 of the captured `medium` run (system text and tools shortened)."""
    messages = [
        _user("Run `echo hi` in the shell and tell me what it printed."),
        _assistant([{"type": "thinking", "thinking": "The user wants me to run echo hi. I will call the bash tool.",
                     "thinkingSignature": SIGNATURE},
                    {"type": "toolCall", "id": TOOL_ID, "name": "bash", "arguments": {"command": "echo hi"}}]),
        _result(TOOL_ID, "hi\n"),
    ]
    body = build_anthropic_body(_request(messages))
    expected = (
        '{"model":"claude-sonnet-4-5","messages":[{"role":"user","content":[{"type":"text","text":"Run `echo hi` in the shell and '
        'tell me what it printed."}]},{"role":"assistant","content":[{"type":"thinking","thinking":"The user wants me to run echo '
        f'hi. I will call the bash tool.","signature":"{SIGNATURE}"}},{{"type":"tool_use","id":"{TOOL_ID}","name":"bash",'
        '"input":{"command":"echo hi"}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"' + TOOL_ID + '",'
        '"content":"hi\\n","is_error":false,"cache_control":{"type":"ephemeral"}}]}],"max_tokens":40192,"stream":true,'
        '"system":[{"type":"text","text":"You are an expert coding assistant","cache_control":{"type":"ephemeral"}}],'
        '"tools":[{"name":"bash","description":"Run","eager_input_streaming":true,"input_schema":{"type":"object",'
        '"properties":{"command":{"type":"string"}},"required":["command"]}},{"name":"write","description":"Write a file",'
        '"eager_input_streaming":true,"input_schema":{"type":"object","properties":{"path":{"type":"string","description":'
        '"Path"},"content":{"type":"string"}},"required":["path","content"]},"cache_control":{"type":"ephemeral"}}],'
        '"thinking":{"type":"enabled","budget_tokens":8192,"display":"summarized"}}'
    )
    assert json.dumps(body, separators=(",", ":"), ensure_ascii=False) == expected


def test_the_marker_moves_to_the_newest_user_block_and_never_sits_on_an_assistant() -> None:
    messages = [_user("one"), _assistant([{"type": "toolCall", "id": "t1", "name": "bash", "arguments": {}}]),
                _result("t1", "out"), _assistant([{"type": "text", "text": "done"}], stop="stop"), _user("two")]
    body = build_anthropic_body(_request(messages, reasoning=None))
    marked = [(i, j) for i, m in enumerate(body["messages"]) for j, b in enumerate(m["content"]) if "cache_control" in b]
    assert marked == [(4, 0)]
    body = build_anthropic_body(_request(messages[:4], reasoning=None))
    assert not any("cache_control" in b for m in body["messages"] for b in m["content"])  # last message is an assistant


def test_long_retention_puts_ttl_on_all_three_markers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PI_CACHE_RETENTION", "long")
    body = build_anthropic_body(_request([_user("hi")]))
    markers = [body["system"][0]["cache_control"], body["tools"][-1]["cache_control"], body["messages"][0]["content"][0]["cache_control"]]
    assert markers == [{"type": "ephemeral", "ttl": "1h"}] * 3
    plain = dataclasses.replace(SONNET, compat={"supportsLongCacheRetention": False})
    assert build_anthropic_body(_request([_user("hi")], model=plain))["system"][0]["cache_control"] == {"type": "ephemeral"}


@pytest.mark.parametrize(("model_ref", "level", "max_tokens", "thinking", "extra"), [
    ("claude-sonnet-4-5", None, 32000, {"type": "disabled"}, {}),
    ("claude-sonnet-4-5", "minimal", 33024, {"type": "enabled", "budget_tokens": 1024, "display": "summarized"}, {}),
    ("claude-sonnet-4-5", "low", 34048, {"type": "enabled", "budget_tokens": 2048, "display": "summarized"}, {}),
    ("claude-sonnet-4-5", "medium", 40192, {"type": "enabled", "budget_tokens": 8192, "display": "summarized"}, {}),
    ("claude-sonnet-4-5", "high", 48384, {"type": "enabled", "budget_tokens": 16384, "display": "summarized"}, {}),
    ("claude-sonnet-4-5", "xhigh", 48384, {"type": "enabled", "budget_tokens": 16384, "display": "summarized"}, {}),
    ("claude-opus-4-1", "medium", 32000, {"type": "enabled", "budget_tokens": 8192, "display": "summarized"}, {}),
    ("claude-sonnet-4-6", "high", 32000, {"type": "adaptive", "display": "summarized"}, {"output_config": {"effort": "high"}}),
    ("claude-opus-4-6", "low", 32000, {"type": "adaptive", "display": "summarized"}, {"output_config": {"effort": "low"}}),
    ("claude-opus-4-6", "xhigh", 32000, {"type": "adaptive", "display": "summarized"}, {"output_config": {"effort": "max"}}),
    ("claude-opus-4-7", "xhigh", 32000, {"type": "adaptive", "display": "summarized"}, {"output_config": {"effort": "xhigh"}}),
])
def test_thinking_level_to_thinking_and_max_tokens(model_ref: str, level: Any, max_tokens: int, thinking: dict[str, Any],
                                                   extra: dict[str, Any]) -> None:
    model = ModelRegistry(None, env={}).resolve(f"anthropic/{model_ref}")
    body = build_anthropic_body(_request([_user("hi")], model=model, reasoning=level))
    assert body["max_tokens"] == max_tokens
    assert body["thinking"] == thinking
    assert {k: body[k] for k in ("output_config",) if k in body} == extra
    assert list(body)[-len(["thinking", *extra]):] == ["thinking", *extra]


def test_a_non_reasoning_model_gets_no_thinking_key_and_summaries_their_explicit_budget() -> None:
    haiku = ModelRegistry(None, env={}).resolve("anthropic/claude-3-5-haiku-20241022")
    body = build_anthropic_body(_request([_user("hi")], model=haiku, reasoning="high"))
    assert "thinking" not in body and body["max_tokens"] == 8192
    summary = build_anthropic_body(_request([_user("hi")], tools=[], max_tokens=13107))
    assert (summary["max_tokens"], summary["thinking"]["budget_tokens"], "tools" in summary) == (21299, 8192, False)


def test_assistant_block_mapping_same_model() -> None:
    messages = [_user("q"), _assistant([
        {"type": "thinking", "thinking": "[Reasoning redacted]", "thinkingSignature": "opaque", "redacted": True},
        {"type": "thinking", "thinking": "unsigned", "thinkingSignature": ""},
        {"type": "thinking", "thinking": "   ", "thinkingSignature": "sig"},
        {"type": "text", "text": "  "},
        {"type": "text", "text": "answer", "textSignature": "x"},
    ], stop="stop"), _assistant([{"type": "text", "text": " "}, {"type": "thinking", "thinking": "", "thinkingSignature": "s"}],
                                stop="stop"), _user("  "), _user("next")]
    body = build_anthropic_body(_request(messages, reasoning=None))
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "q"}]},
        {"role": "assistant", "content": [{"type": "redacted_thinking", "data": "opaque"}, {"type": "text", "text": "unsigned"},
                                          {"type": "text", "text": "answer"}]},
        {"role": "user", "content": [{"type": "text", "text": "next", "cache_control": {"type": "ephemeral"}}]},
    ]


def test_cross_model_replay_turns_thinking_into_text_drops_redacted_and_sanitizes_ids() -> None:
    """§15.8: history from an OpenAI-compatible model replayed to Claude."""
    other = ModelInfo(provider="fake", id="fake-model", api="openai-completions")
    long_id = "call_Zx9|fc_" + "0123456789" * 8
    messages = [_user("q"), _assistant([
        {"type": "thinking", "thinking": "Thinking about it.", "thinkingSignature": "reasoning_content"},
        {"type": "thinking", "thinking": "x", "thinkingSignature": "d", "redacted": True},
        {"type": "toolCall", "id": long_id, "name": "bash", "arguments": {"command": "ls"}, "thoughtSignature": "t"},
    ], model=other), _result(long_id, "a", is_error=True)]
    body = build_anthropic_body(_request(messages))
    new_id = ("call_Zx9_fc_" + "0123456789" * 8)[:64]
    assert body["messages"][1] == {"role": "assistant", "content": [
        {"type": "text", "text": "Thinking about it."},
        {"type": "tool_use", "id": new_id, "name": "bash", "input": {"command": "ls"}}]}
    assert body["messages"][2]["content"][0]["tool_use_id"] == new_id
    assert body["messages"][2]["content"][0]["is_error"] is True


def test_a_run_of_tool_results_is_one_user_message_with_errors_images_and_synthetic_results() -> None:
    calls = [{"type": "toolCall", "id": f"t{i}", "name": "bash", "arguments": {}} for i in range(3)]
    image = {"type": "image", "data": "AAAA", "mimeType": "image/png"}
    messages = [_user("q"), _assistant(calls), _result("t0", "ok"),
                {**_result("t1", ""), "content": [image], "isError": True}, _user("steer")]
    body = build_anthropic_body(_request(messages, reasoning=None))
    results = body["messages"][2]["content"]
    assert [r["tool_use_id"] for r in results] == ["t0", "t1", "t2"]
    assert results[0] == {"type": "tool_result", "tool_use_id": "t0", "content": "ok", "is_error": False}
    assert results[1]["content"] == [{"type": "text", "text": "(see attached image)"},
                                     {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}}]
    assert results[2] == {"type": "tool_result", "tool_use_id": "t2", "content": "No result provided", "is_error": True}
    assert body["messages"][3] == {"role": "user", "content": [{"type": "text", "text": "steer", "cache_control": {"type": "ephemeral"}}]}


def test_failed_and_aborted_replies_are_not_replayed() -> None:
    messages = [_user("q"), _assistant([{"type": "text", "text": "partial"}], stop="error"), _user("again")]
    assert [m["role"] for m in build_anthropic_body(_request(messages))["messages"]] == ["user", "user"]


def test_headers_betas_and_base_url() -> None:
    request = _request([_user("hi")])
    body = build_anthropic_body(request)
    headers = anthropic_headers(request, body)
    assert headers["x-api-key"] == "sk-ant-api03-test" and headers["anthropic-version"] == "2023-06-01"
    assert headers["anthropic-beta"] == "interleaved-thinking-2025-05-14"
    lazy = dataclasses.replace(SONNET, compat={"supportsEagerToolInputStreaming": False})
    request = _request([_user("hi")], model=lazy)
    body = build_anthropic_body(request)
    assert "eager_input_streaming" not in body["tools"][0]
    assert anthropic_headers(request, body)["anthropic-beta"] == "fine-grained-tool-streaming-2025-05-14,interleaved-thinking-2025-05-14"
    adaptive = ModelRegistry(None, env={}).resolve("anthropic/claude-sonnet-4-6")
    request = _request([_user("hi")], model=adaptive)
    assert "anthropic-beta" not in anthropic_headers(request, build_anthropic_body(request))
    custom = dataclasses.replace(SONNET, headers={"anthropic-version": "2099-01-01", "x-extra": "1"})
    request = _request([_user("hi")], model=custom)
    assert anthropic_headers(request, body)["anthropic-version"] == "2099-01-01"
    assert base_url(SONNET, {}) == "https://api.anthropic.com"
    assert base_url(SONNET, {"ANTHROPIC_BASE_URL": "http://proxy:8080/"}) == "http://proxy:8080"
    assert base_url(SONNET, {"ANTHROPIC_API_BASE": "http://litellm-style:1"}) == "http://litellm-style:1"
    assert base_url(dataclasses.replace(SONNET, base_url="http://127.0.0.1:9"), {"ANTHROPIC_BASE_URL": "x"}) == "http://127.0.0.1:9"


def test_oauth_tokens_use_bearer_auth_and_the_claude_code_identity() -> None:
    request = dataclasses.replace(_request([_user("hi")]), api_key="sk-ant-oat01-abc")
    body = build_anthropic_body(request)
    headers = anthropic_headers(request, body)
    assert "x-api-key" not in headers and headers["authorization"] == "Bearer sk-ant-oat01-abc"
    assert headers["anthropic-beta"].startswith("claude-code-20250219,oauth-2025-04-20,")
    assert (headers["user-agent"], headers["x-app"]) == ("claude-cli/2.1.75", "cli")
    assert body["system"][0]["text"].startswith("You are Claude Code")
    assert sum("cache_control" in b for b in body["system"]) == 2
    assert [t["name"] for t in body["tools"]] == ["Bash", "Write"]


def test_lone_surrogates_are_dropped_from_text_but_not_from_tool_input() -> None:
    messages = [_user("a\ud800b"), _assistant([{"type": "toolCall", "id": "t", "name": "bash", "arguments": {"c": "x\ud800"}}]),
                _result("t", "o\udc00k")]
    body = build_anthropic_body(_request(messages, reasoning=None))
    assert body["messages"][0]["content"][0]["text"] == "ab"
    assert body["messages"][1]["content"][0]["input"] == {"c": "x\ud800"}
    assert body["messages"][2]["content"][0]["content"] == "ok"
