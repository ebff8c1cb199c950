"""The request body of §14 (pi 0.73.1, api openai-completions), built without any HTTP."""

from __future__ import annotations

import json
from typing import Any

from pi_tui.core.messages import user_message
from pi_tui.core.provider import CompletionRequest, ModelInfo, ToolSpec
from pi_tui.providers.openai_encode import build_request_body, js_json

FAKE_COMPAT = {"supportsDeveloperRole": False, "supportsReasoningEffort": False}
MODEL = ModelInfo(provider="fake", id="fake-model", litellm_model="openai/fake-model",
                  base_url="http://127.0.0.1:9/v1", max_tokens=1000, compat=FAKE_COMPAT)
REASONER = ModelInfo(provider="fake", id="fake-reasoner", litellm_model="openai/fake-reasoner",
                     base_url="http://127.0.0.1:9/v1", reasoning=True)
BASH = ToolSpec(name="bash", description="Run a command",
                parameters={"type": "object", "required": ["command"], "properties": {"command": {"type": "string"}}})


def _assistant(*blocks: dict[str, Any], model: ModelInfo = MODEL, stop: str = "toolUse") -> dict[str, Any]:
    return {"role": "assistant", "content": list(blocks), "api": model.api, "provider": model.provider,
            "model": model.id, "usage": {}, "stopReason": stop, "timestamp": 2}


def _call(call_id: str, args: Any = None, name: str = "bash") -> dict[str, Any]:
    return {"type": "toolCall", "id": call_id, "name": name, "arguments": {"command": "echo hello"} if args is None else args}


def _result(call_id: str, *content: dict[str, Any], name: str = "bash") -> dict[str, Any]:
    return {"role": "toolResult", "toolCallId": call_id, "toolName": name, "content": list(content) or [{"type": "text", "text": "hello\n"}],
            "isError": False, "timestamp": 3}


def _body(messages: list[Any], model: ModelInfo = MODEL, **kw: Any) -> dict[str, Any]:
    kw.setdefault("tools", [BASH])
    return build_request_body(CompletionRequest(model=model, system_prompt=kw.pop("system", "You are helpful."), messages=messages, **kw))


def test_the_print_run_example_of_14_16_byte_for_byte() -> None:
    messages = [user_message("say hi", timestamp=1), _assistant(_call("call_1_0_a82efc3c")), _result("call_1_0_a82efc3c")]
    body = _body(messages, system="You are an expert coding assistant")
    tools = body.pop("tools")
    expected = (
        '{"model":"fake-model","messages":[{"role":"system","content":"You are an expert coding assistant"},'
        '{"role":"user","content":[{"type":"text","text":"say hi"}]},'
        '{"role":"assistant","content":null,"tool_calls":[{"id":"call_1_0_a82efc3c","type":"function",'
        '"function":{"name":"bash","arguments":"{\\"command\\":\\"echo hello\\"}"}}]},'
        '{"role":"tool","content":"hello\\n","tool_call_id":"call_1_0_a82efc3c"}],'
        '"stream":true,"stream_options":{"include_usage":true},"store":false,"max_completion_tokens":1000}'
    )
    assert json.dumps(body, separators=(",", ":"), ensure_ascii=False) == expected
    assert tools == [{"type": "function", "function": {"name": "bash", "description": "Run a command",
                                                       "parameters": BASH.parameters, "strict": False}}]


def _reasoning_turn() -> list[Any]:
    thinking = {"type": "thinking", "thinking": "Thinking about it.", "thinkingSignature": "reasoning_content"}
    return [user_message("run it", timestamp=1),
            _assistant(thinking, {"type": "text", "text": "Let me run it."}, _call("c1"), model=REASONER), _result("c1")]


def test_reasoning_goes_back_under_its_field_to_the_same_model() -> None:
    assistant = _body(_reasoning_turn(), REASONER)["messages"][2]
    assert list(assistant) == ["role", "content", "reasoning_content", "tool_calls"]
    assert assistant["content"] == "Let me run it." and assistant["reasoning_content"] == "Thinking about it."


def test_after_a_model_switch_thinking_becomes_text_without_separator() -> None:
    assistant = _body(_reasoning_turn(), MODEL)["messages"][2]
    assert assistant["content"] == "Thinking about it.Let me run it."
    assert "reasoning_content" not in assistant


def test_failed_turns_are_dropped_and_unanswered_calls_get_synthetic_results() -> None:
    messages = [
        user_message("first", timestamp=1),
        _assistant({"type": "text", "text": "partial"}, stop="error"),
        user_message("second", timestamp=2),
        _assistant(_call("a"), _call("b")),
        _result("a"),
        user_message("third", timestamp=3),
        _assistant({"type": "text", "text": "half"}, _call("z"), stop="aborted"),
    ]
    wire = _body(messages)["messages"][1:]
    assert [m["role"] for m in wire] == ["user", "user", "assistant", "tool", "tool", "user"]
    assert wire[3] == {"role": "tool", "content": "hello\n", "tool_call_id": "a"}
    assert wire[4] == {"role": "tool", "content": "No result provided", "tool_call_id": "b"}


def test_system_role_is_developer_only_for_reasoning_models_that_support_it() -> None:
    assert _body([user_message("x", timestamp=1)], REASONER)["messages"][0]["role"] == "developer"
    assert _body([user_message("x", timestamp=1)], MODEL)["messages"][0]["role"] == "system"
    assert "messages" in _body([user_message("x", timestamp=1)], MODEL, system="")
    assert _body([user_message("x", timestamp=1)], MODEL, system="")["messages"][0]["role"] == "user"


def test_output_budget_defaults_to_min_of_max_tokens_and_32000() -> None:
    big = ModelInfo(provider="fake", id="big", base_url="http://h/v1", max_tokens=64_000)
    assert _body([user_message("x", timestamp=1)], big)["max_completion_tokens"] == 32_000
    assert _body([user_message("x", timestamp=1)], big, max_tokens=40_000)["max_completion_tokens"] == 40_000
    moonshot = ModelInfo(provider="moonshotai", id="kimi", base_url="https://api.moonshot.ai/v1")
    body = _body([user_message("x", timestamp=1)], moonshot)
    assert body["max_tokens"] == 16_384 and "max_completion_tokens" not in body
    assert "store" not in body and "strict" not in body["tools"][0]["function"]


def test_tools_key_is_empty_list_when_history_has_tools_but_none_are_active() -> None:
    with_history = [user_message("x", timestamp=1), _assistant(_call("a")), _result("a")]
    assert _body(with_history, tools=[])["tools"] == []
    assert "tools" not in _body([user_message("x", timestamp=1)], tools=[])


def test_reasoning_effort_follows_level_model_and_compat() -> None:
    prompt = [user_message("x", timestamp=1)]
    body = _body(prompt, REASONER, reasoning="high")
    assert body["reasoning_effort"] == "high" and list(body)[-1] == "reasoning_effort"
    assert _body(prompt, REASONER, reasoning="xhigh")["reasoning_effort"] == "high"
    assert "reasoning_effort" not in _body(prompt, REASONER, reasoning="off")
    assert "reasoning_effort" not in _body(prompt, MODEL, reasoning="high")  # not a reasoning model
    no_effort = ModelInfo(provider="fake", id="r", base_url="http://h/v1", reasoning=True, compat=FAKE_COMPAT)
    assert "reasoning_effort" not in _body(prompt, no_effort, reasoning="high")
    mapped = ModelInfo(provider="fake", id="r", base_url="http://h/v1", reasoning=True,
                       thinking_level_map={"high": "max", "off": "none"})
    assert _body(prompt, mapped, reasoning="high")["reasoning_effort"] == "max"
    assert _body(prompt, mapped, reasoning=None)["reasoning_effort"] == "none"
    gaps = ModelInfo(provider="fake", id="r", base_url="http://h/v1", reasoning=True,
                     thinking_level_map={"minimal": None, "high": None})
    assert _body(prompt, gaps, reasoning="minimal")["reasoning_effort"] == "low"  # unsupported: next higher
    assert _body(prompt, gaps, reasoning="high")["reasoning_effort"] == "medium"  # nothing higher: next lower
    deepseek = ModelInfo(provider="deepseek", id="deepseek-reasoner", base_url="https://api.deepseek.com", reasoning=True)
    body = _body(prompt, deepseek, reasoning="medium")
    assert body["thinking"] == {"type": "enabled"} and body["reasoning_effort"] == "medium" and "store" not in body


def test_arguments_are_reserialized_like_json_stringify() -> None:
    args = {"b": 5.0, "a": "héllo", "n": [1.5, 2.0]}
    wire = _body([user_message("x", timestamp=1), _assistant(_call("a", args)), _result("a")])["messages"][2]
    assert wire["tool_calls"][0]["function"]["arguments"] == '{"b":5,"a":"héllo","n":[1.5,2]}'
    empty = _body([user_message("x", timestamp=1), _assistant(_call("a", {})), _result("a")])["messages"][2]
    assert empty["tool_calls"][0]["function"]["arguments"] == "{}"
    assert js_json({"s": "\ud800x"}) == '{"s":"\\ud800x"}'


def test_images_for_a_text_only_model_become_placeholders() -> None:
    image = {"type": "image", "data": "AAAA", "mimeType": "image/png"}
    prompt = user_message("look", images=[image, image], timestamp=1)
    wire = _body([prompt, _assistant(_call("r", name="read")), _result("r", {"type": "text", "text": "Read image file [image/png]"}, image, name="read")])["messages"]
    assert wire[1]["content"] == [{"type": "text", "text": "look"},
                                  {"type": "text", "text": "(image omitted: model does not support images)"}]
    assert wire[3]["content"] == "Read image file [image/png]\n(tool image omitted: model does not support images)"


def test_tool_images_for_a_vision_model_follow_the_tool_run() -> None:
    vision = ModelInfo(provider="fake", id="v", base_url="http://h/v1", input=("text", "image"))
    image = {"type": "image", "data": "AAAA", "mimeType": "image/png"}
    messages = [user_message("x", timestamp=1), _assistant(_call("a"), _call("b"), model=vision),
                _result("a", image), _result("b")]
    wire = _body(messages, vision)["messages"]
    assert [m["role"] for m in wire] == ["system", "user", "assistant", "tool", "tool", "user"]
    assert wire[3]["content"] == "(see attached image)"
    assert wire[5]["content"] == [{"type": "text", "text": "Attached image(s) from tool result:"},
                                  {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}]


def test_foreign_tool_call_ids_with_pipes_are_normalized_everywhere() -> None:
    other = ModelInfo(provider="openai", id="gpt-x", api="openai-responses")
    messages = [user_message("x", timestamp=1), _assistant(_call("call_9|fc_long+id"), model=other), _result("call_9|fc_long+id")]
    wire = _body(messages)["messages"]
    assert wire[2]["tool_calls"][0]["id"] == "call_9"
    assert wire[3]["tool_call_id"] == "call_9"


def test_bridge_messages_when_the_endpoint_requires_an_assistant_after_tools() -> None:
    strict = ModelInfo(provider="fake", id="m", base_url="http://h/v1", compat={"requiresAssistantAfterToolResult": True})
    messages = [user_message("x", timestamp=1), _assistant(_call("a"), model=strict), _result("a"), user_message("next", timestamp=4)]
    wire = _body(messages, strict)["messages"]
    assert [m["role"] for m in wire] == ["system", "user", "assistant", "tool", "assistant", "user"]
    assert wire[2]["content"] == ""
    assert wire[4] == {"role": "assistant", "content": "I have processed the tool results."}


def test_whitespace_only_assistants_are_dropped_and_surrogates_removed() -> None:
    messages = [user_message("a\ud800b", timestamp=1), _assistant({"type": "text", "text": "  "}, stop="stop"),
                user_message("c", timestamp=2)]
    wire = _body(messages, system="sys\udfff")["messages"]
    assert wire[0]["content"] == "sys"
    assert [m["role"] for m in wire] == ["system", "user", "user"]
    assert wire[1]["content"] == [{"type": "text", "text": "ab"}]
