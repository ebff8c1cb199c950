"""The litellm adapter beyond the OpenAI-compatible route: other providers, quiet output."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pi_tui.core.messages import user_message
from pi_tui.core.provider import CompletionRequest, ModelInfo, ToolSpec
from pi_tui.providers.litellm_convert import completion_kwargs, is_openai_wire
from pi_tui.providers.litellm_provider import LiteLLMProvider
from pi_tui.testing.fake_server import FakeServer

BASH = ToolSpec(name="bash", description="Run", parameters={"type": "object", "properties": {"command": {"type": "string"}}})


def _history() -> list[Any]:
    call = {"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": "echo hello"}}
    return [
        user_message("say hi", timestamp=1),
        {"role": "assistant", "content": [call], "api": "anthropic-messages", "provider": "proxy", "model": "claude-x",
         "usage": {}, "stopReason": "toolUse", "timestamp": 2},
        {"role": "toolResult", "toolCallId": "c1", "toolName": "bash", "content": [{"type": "text", "text": "hello\n"}],
         "isError": False, "timestamp": 3},
    ]


async def test_anthropic_messages_models_are_translated_by_litellm(capfd: pytest.CaptureFixture[str]) -> None:
    with FakeServer([]) as server:
        model = ModelInfo(provider="proxy", id="claude-x", api="anthropic-messages", litellm_model="anthropic/claude-x",
                          base_url=server.base_url.removesuffix("/v1"), reasoning=True)
        request = CompletionRequest(model=model, system_prompt="sys", messages=_history(), tools=[BASH], api_key="k",
                                    reasoning="medium")
        events = [event async for event in LiteLLMProvider(timeout=5).stream(request)]
        recorded = server.recorded
    final = events[-1]["error"]
    # the fake server speaks OpenAI only: the Anthropic route gets its 404, classified, not raised
    assert (final["errorMessage"], final["errorKind"]) == ("404 Not found: /v1/messages", "bad_request")
    assert recorded[0].path == "/v1/messages"
    body = recorded[0].body
    assert body["system"] == [{"type": "text", "text": "sys", "cache_control": {"type": "ephemeral"}}]
    assert body["messages"][1]["content"][0] == {"type": "tool_use", "id": "c1", "name": "bash", "input": {"command": "echo hello"}}
    assert body["messages"][2]["content"][0]["type"] == "tool_result"
    assert "store" not in body
    out, err = capfd.readouterr()
    assert out == "" and "LiteLLM" not in err  # litellm's own warnings stay off the terminal


def test_only_openai_routes_get_pis_body_verbatim() -> None:
    assert is_openai_wire("openai/fake-model")
    assert not is_openai_wire("anthropic/claude-sonnet-4-5")
    model = ModelInfo(provider="openai", id="gpt-4o", litellm_model="openai/gpt-4o")
    request = CompletionRequest(model=model, system_prompt="s", messages=[user_message("x", timestamp=1)], api_key="sk")
    body = {"model": "gpt-4o", "messages": [], "stream": True, "stream_options": {"include_usage": True}, "store": False}
    kwargs = completion_kwargs(request, body, timeout=3)
    assert kwargs["max_retries"] == 0 and kwargs["stream"] is True and kwargs["timeout"] == 3
    assert kwargs["extra_body"] == {"messages": [], "store": False}
    assert kwargs["stream_options"] == {"include_usage": True} and "api_base" not in kwargs


async def test_unreachable_endpoint_is_a_transient_connection_error() -> None:
    with FakeServer([]) as server:
        base = server.base_url
    model = ModelInfo(provider="fake", id="m", litellm_model="openai/m", base_url=base)
    request = CompletionRequest(model=model, system_prompt="", messages=[user_message("x", timestamp=1)], api_key="k")
    events = [event async for event in LiteLLMProvider(timeout=5).stream(request)]
    final = events[-1]["error"]
    assert events[-1]["type"] == "error"
    assert final["errorKind"] == "transient" and final["errorMessage"].startswith("Connection error")


def test_a_base_url_override_of_litellms_own_provider_stays_with_litellm(tmp_path: Path) -> None:
    from pi_tui.providers.models import ModelRegistry
    from pi_tui.sdk import default_provider_for

    (tmp_path / "models.json").write_text(json.dumps({"providers": {
        "bedrock": {"baseUrl": "https://bedrock-proxy.example"},
        "groq": {"baseUrl": "https://groq-proxy.example/openai/v1"},
        "local": {"baseUrl": "http://127.0.0.1:9/v1", "api": "openai-completions", "models": [{"id": "qwen"}]},
    }}))
    registry = ModelRegistry(tmp_path / "models.json", env={})
    for ref in ("bedrock/anthropic.claude-3-5-sonnet-20240620-v1:0", "groq/llama-3.3-70b-versatile"):
        model = registry.resolve(ref)
        assert isinstance(default_provider_for(model), LiteLLMProvider), ref  # its baseUrl is litellm's api_base
        request = CompletionRequest(model=model, system_prompt="", messages=[user_message("x", timestamp=1)], api_key="k")
        assert completion_kwargs(request, {"messages": []}, timeout=3)["api_base"] == model.base_url
    assert not isinstance(default_provider_for(registry.resolve("local/qwen")), LiteLLMProvider)  # a declared OpenAI server
