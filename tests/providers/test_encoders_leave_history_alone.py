"""Every request encoder leaves the history it encodes alone, and its body shares no mutable
object with it.

Since the preparation cache hits in a real session (issue 12), the agent loop hands the
history's own message objects to the request pipeline instead of a deep copy each call: the
messages a provider encodes *are* the canonical history in memory (the session manager's
entries, what the next request, a compaction summary, /tree and the export read). So an encoder
that changes its input, or a body that holds one of the history's dicts or lists, which a
``before_provider_request`` handler or the HTTP layer may then change in place, would rewrite
history that the session file no longer matches. Checked for each wire, same-model and
cross-model replays, with every block kind the history can hold.
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

import pytest

from pi_tui.core.context.convert import convert_to_llm
from pi_tui.core.provider import CompletionRequest, ModelInfo, ToolSpec
from pi_tui.providers.anthropic_encode import build_anthropic_body
from pi_tui.providers.gemini_encode import build_gemini_body
from pi_tui.providers.litellm_convert import encoded_body, family_body
from pi_tui.providers.openai_encode import build_request_body
from pi_tui.providers.responses_encode import build_body

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
SIGNATURE = "RXJyb3JTaWduYXR1cmVCYXNlNjQ="  # base64, so Gemini's route carries it too


def history(provider: str, api: str, model_id: str) -> list[dict[str, Any]]:
    """One of each: user text and image, assistant thinking (signed, unsigned, redacted), text
    with a signature, tool calls with nested arguments, results with an image and an error,
    and the app messages the projection turns into user messages."""
    made_by = {"api": api, "provider": provider, "model": model_id,
               "usage": {"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 15,
                         "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}}
    return [
        {"role": "compactionSummary", "summary": "## Goal\nearlier work", "tokensBefore": 900, "timestamp": 1},
        {"role": "user", "content": [{"type": "text", "text": "look at this 漢字 🙂"},
                                     {"type": "image", "mimeType": "image/png", "data": PNG}], "timestamp": 2},
        {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "signed thought", "thinkingSignature": SIGNATURE},
            {"type": "thinking", "thinking": "unsigned thought"},
            {"type": "thinking", "thinking": "", "thinkingSignature": SIGNATURE, "redacted": True},
            {"type": "text", "text": "I will read both.", "textSignature": SIGNATURE},
            {"type": "toolCall", "id": "call_1|fc_1", "name": "read",
             "arguments": {"path": "a.txt", "options": {"lines": [1, 2], "deep": {"k": ["v"]}}},
             "thoughtSignature": SIGNATURE},
            {"type": "toolCall", "id": "call_2", "name": "edit",
             "arguments": {"path": "b.txt", "edits": [{"oldText": "x", "newText": "y"}]}},
        ], "stopReason": "toolUse", "timestamp": 3, **made_by},
        {"role": "toolResult", "toolCallId": "call_1|fc_1", "toolName": "read", "isError": False, "timestamp": 4,
         "content": [{"type": "text", "text": "contents"}, {"type": "image", "mimeType": "image/png", "data": PNG}],
         "details": {"truncation": {"lines": 2}}},
        {"role": "toolResult", "toolCallId": "call_2", "toolName": "edit", "isError": True, "timestamp": 5,
         "content": [{"type": "text", "text": "no match"}], "details": {"diff": "-x\n+y"}},
        {"role": "bashExecution", "command": "ls", "output": "a.txt", "exitCode": 0, "cancelled": False,
         "truncated": False, "timestamp": 6},
        {"role": "custom", "customType": "note", "content": [{"type": "text", "text": "a note"}], "display": True,
         "timestamp": 7},
        {"role": "assistant", "content": [{"type": "text", "text": "Done."}], "stopReason": "stop", "timestamp": 8,
         **made_by},
        {"role": "user", "content": "and now?", "timestamp": 9},
    ]


def request(model: ModelInfo, messages: list[Any], *, api_key: str | None = "sk-test") -> CompletionRequest:
    tool = ToolSpec(name="read", description="Read a file", parameters={"type": "object", "properties": {"path": {"type": "string"}}})
    return CompletionRequest(model=model, system_prompt="You help.", messages=messages, tools=[tool], max_tokens=1000,
                             reasoning="high", session_id="s1", api_key=api_key)


def scribble(value: Any) -> None:
    """Change every dict and list of a body in place, as a careless handler might."""
    if isinstance(value, dict):
        for item in list(value.values()):
            scribble(item)
        value["scribbled"] = True
    elif isinstance(value, list):
        for item in list(value):
            scribble(item)
        value.append("scribbled")


OPENAI = ModelInfo(provider="openai", id="gpt-5", api="openai-completions", reasoning=True, input=("text", "image"))
COMPAT_HEAVY = ModelInfo(provider="proxy", id="any", api="openai-completions", base_url="http://127.0.0.1:9/v1",
                         reasoning=True, input=("text", "image"),
                         compat={"requiresThinkingAsText": True, "requiresAssistantAfterToolResult": True,
                                 "requiresToolResultName": True, "cacheControlFormat": "anthropic",
                                 "requiresReasoningContentOnAssistantMessages": True})
ANTHROPIC = ModelInfo(provider="anthropic", id="claude-sonnet-4-5", api="anthropic-messages", reasoning=True,
                      input=("text", "image"))
RESPONSES = ModelInfo(provider="openai", id="gpt-5", api="openai-responses", reasoning=True, input=("text", "image"))
GEMINI = ModelInfo(provider="google", id="gemini-3-pro-preview", api="google-generative-ai", reasoning=True, input=("text", "image"))
GEMINI_2 = ModelInfo(provider="google", id="gemini-2.5-flash", api="google-generative-ai", reasoning=True, input=("text", "image"))


def litellm_model(name: str) -> ModelInfo:
    provider, _, model_id = name.partition("/")
    return ModelInfo(provider=provider, id=model_id, litellm_model=name, reasoning=True, input=("text", "image"))


ENCODERS = [
    pytest.param(lambda r: build_request_body(r), OPENAI, id="openai"),
    pytest.param(lambda r: build_request_body(r), COMPAT_HEAVY, id="openai-compat-flags"),
    pytest.param(lambda r: build_anthropic_body(r), ANTHROPIC, id="anthropic"),
    pytest.param(lambda r: build_anthropic_body(dataclasses.replace(r, api_key="sk-ant-oat01-x")), ANTHROPIC,
                 id="anthropic-oauth"),
    pytest.param(lambda r: build_body(r), RESPONSES, id="responses"),
    pytest.param(lambda r: build_gemini_body(r), GEMINI, id="gemini-3"),
    pytest.param(lambda r: build_gemini_body(r), GEMINI_2, id="gemini-2.5"),  # tool-result images in an extra user turn
    pytest.param(lambda r: encoded_body(r), litellm_model("openai/gpt-5"), id="litellm-openai"),
    pytest.param(lambda r: family_body(r), litellm_model("anthropic/claude-sonnet-4-5"), id="litellm-anthropic"),
    pytest.param(lambda r: family_body(r), litellm_model("gemini/gemini-3-pro-preview"), id="litellm-gemini"),
    pytest.param(lambda r: family_body(r), litellm_model("ollama/qwen3"), id="litellm-other"),
]


@pytest.mark.parametrize("same_model", [True, False], ids=["same-model", "other-model"])
@pytest.mark.parametrize(("encode", "model"), ENCODERS)
def test_an_encoder_neither_changes_the_history_nor_shares_it_with_the_body(encode: Any, model: ModelInfo, same_model: bool) -> None:
    agent_messages = history(model.provider, model.api, model.id) if same_model else history("other", "other-api", "other-model")
    snapshot = copy.deepcopy(agent_messages)
    llm_messages = convert_to_llm(agent_messages)
    body = encode(request(model, llm_messages))
    assert agent_messages == snapshot, "the encoder changed the history it encoded"
    scribble(body)
    assert agent_messages == snapshot, "the body shares a dict or list with the history"
