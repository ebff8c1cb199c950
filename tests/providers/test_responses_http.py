"""The OpenAI Responses client against the strict fake: pi's exact body, reasoning continuity,
usage, failures, and whole sessions through a models.json ``openai-responses`` provider."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from pi_tui.core.messages import user_message
from pi_tui.core.provider import CompletionRequest, ModelCost, ModelInfo
from pi_tui.providers.models import ModelRegistry
from pi_tui.providers.responses_http import ResponsesHttpProvider
from pi_tui.providers.stream_failures import keepalive_timeout_message
from pi_tui.resources.settings import SettingsManager
from pi_tui.sdk import create_agent_session, default_provider_for
from pi_tui.testing.responses_fake import OVERFLOW_MESSAGE, ResponsesFakeServer, encrypted_content
from tests.providers.wire_helpers import BASH, final_message, tool_result
from tests.session.conftest import FakeClock

O4 = ModelInfo(provider="openai", id="o4-mini", api="openai-responses", reasoning=True, max_tokens=100_000,
               cost=ModelCost(input=1.1, output=4.4, cache_read=0.275))
TOOL_TURN = {"thinking": "The user wants echo.", "text": "Running it.", "tool_calls": [{"name": "bash", "arguments": {"command": "echo hi"}}],
             "usage": {"prompt_tokens": 1000, "cached_tokens": 800, "completion_tokens": 50}}


async def _final(server: ResponsesFakeServer, messages: list[Any], *, model: ModelInfo = O4, reasoning: str | None = "medium",
                 read_timeout: float = 5) -> dict[str, Any]:
    request = CompletionRequest(model=replace(model, base_url=server.base_url), system_prompt="Be terse.", messages=messages,
                                tools=[BASH], api_key="sk", reasoning=reasoning, session_id="sess-1")  # type: ignore[arg-type]
    return await final_message(ResponsesHttpProvider(timeout=read_timeout), request)



async def test_reasoning_items_are_stored_whole_and_replayed_in_pis_exact_body() -> None:
    question = user_message("run echo hi", timestamp=1)
    with ResponsesFakeServer([TOOL_TURN, {"text": "It printed hi."}], api_key="sk") as server:
        first = await _final(server, [question])
        call = first["content"][2]
        second = await _final(server, [question, first, tool_result(call["id"], "hi\n")])
        body, headers = server.requests[1], server.recorded[1].headers
    reasoning = json.loads(first["content"][0]["thinkingSignature"])
    assert reasoning["id"] == "rs_fake1" and reasoning["encrypted_content"] == encrypted_content(1, "rs_fake1")
    assert first["content"][0]["thinking"] == "The user wants echo."
    assert first["content"][1] == {"type": "text", "text": "Running it.", "textSignature": '{"v":1,"id":"msg_fake1"}'}
    assert call["id"] == "call_fake1_0|fc_fake1_0" and first["stopReason"] == "toolUse"
    assert second["stopReason"] == "stop", second.get("errorMessage")
    assert list(body) == ["model", "input", "stream", "prompt_cache_key", "store", "max_output_tokens", "tools", "reasoning", "include"]
    assert body == {
        "model": "o4-mini",
        "input": [
            {"role": "developer", "content": "Be terse."},
            {"role": "user", "content": [{"type": "input_text", "text": "run echo hi"}]},
            reasoning,
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Running it.", "annotations": []}],
             "status": "completed", "id": "msg_fake1"},
            {"type": "function_call", "id": "fc_fake1_0", "call_id": "call_fake1_0", "name": "bash", "arguments": '{"command":"echo hi"}'},
            {"type": "function_call_output", "call_id": "call_fake1_0", "output": "hi\n"},
        ],
        "stream": True, "prompt_cache_key": "sess-1", "store": False, "max_output_tokens": 32000,
        "tools": [{"type": "function", "name": "bash", "description": "Run a command", "parameters": BASH.parameters, "strict": False}],
        "reasoning": {"effort": "medium", "summary": "auto"}, "include": ["reasoning.encrypted_content"],
    }
    assert (headers["authorization"], headers["session_id"], headers["x-client-request-id"]) == ("Bearer sk", "sess-1", "sess-1")


async def test_usage_subtracts_cached_input_and_prices_it() -> None:
    with ResponsesFakeServer([TOOL_TURN]) as server:
        usage = (await _final(server, [user_message("go", timestamp=1)]))["usage"]
    assert (usage["input"], usage["cacheRead"], usage["cacheWrite"], usage["output"], usage["totalTokens"]) == (200, 800, 0, 50, 1050)
    assert usage["cost"]["total"] == pytest.approx((200 * 1.1 + 50 * 4.4 + 800 * 0.275) / 1e6)


async def test_flex_tier_halves_the_cost() -> None:
    with ResponsesFakeServer([{"text": "hi", "service_tier": "flex", "usage": {"prompt_tokens": 1000, "completion_tokens": 10}}]) as server:
        cost = (await _final(server, [user_message("go", timestamp=1)]))["usage"]["cost"]
    assert cost["total"] == pytest.approx((1000 * 1.1 + 10 * 4.4) / 1e6 / 2)


async def test_another_models_reasoning_goes_back_as_text_and_calls_lose_their_item_ids() -> None:
    gpt5 = replace(O4, id="gpt-5")
    with ResponsesFakeServer([TOOL_TURN, {"text": "ok"}]) as server:
        first = await _final(server, [user_message("run", timestamp=1)])
        call = first["content"][2]
        final = await _final(server, [user_message("run", timestamp=1), first, tool_result(call["id"], "hi\n")], model=gpt5)
        items = server.requests[1]["input"][2:]
    assert final["stopReason"] == "stop", final.get("errorMessage")
    assert [i.get("type") for i in items] == ["message", "message", "function_call", "function_call_output"]
    assert items[0]["content"][0]["text"] == "The user wants echo." and items[0]["id"] == items[1]["id"] == "msg_1"
    assert "id" not in items[2] and items[2]["call_id"] == "call_fake1_0" == items[3]["call_id"]


@pytest.mark.parametrize(
    ("model", "level", "keys"),
    [
        # pi sends effort "none" (off) and "minimal", which the o-series refuses: its floor is "low"
        (O4, None, {"reasoning": {"effort": "low"}}),
        (O4, "minimal", {"reasoning": {"effort": "low", "summary": "auto"}, "include": ["reasoning.encrypted_content"]}),
        (replace(O4, id="gpt-5.1"), None, {"reasoning": {"effort": "none"}}),
        (replace(O4, thinking_level_map={"off": None}), None, {}),
        (replace(O4, id="gpt-5.2", thinking_level_map={"high": "xhigh"}), "high",
         {"reasoning": {"effort": "xhigh", "summary": "auto"}, "include": ["reasoning.encrypted_content"]}),
        (replace(O4, id="gpt-4.1", reasoning=False), "high", {}),
    ],
    ids=["o-series-off", "o-series-minimal", "off", "off-unsupported", "mapped", "non-reasoning"],
)
async def test_reasoning_keys_follow_the_level(model: ModelInfo, level: str | None, keys: dict[str, Any]) -> None:
    with ResponsesFakeServer([{"text": "ok"}]) as server:
        final = await _final(server, [user_message("x", timestamp=1)], model=model, reasoning=level)
        body = server.requests[0]
    assert final["stopReason"] == "stop", final.get("errorMessage")
    assert {k: body[k] for k in ("reasoning", "include") if k in body} == keys
    assert body["input"][0]["role"] == ("developer" if model.reasoning else "system")


async def test_long_retention_asks_for_a_24h_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PI_CACHE_RETENTION", "long")
    with ResponsesFakeServer([{"text": "ok"}]) as server:
        await _final(server, [user_message("x", timestamp=1)])
        assert server.requests[0]["prompt_cache_retention"] == "24h"


@pytest.mark.parametrize(
    ("turn", "message", "kind", "retry"),
    [
        ({"error": {"status": 429, "message": "Rate limit reached for o4-mini", "retry_after": 3}}, "429 Rate limit reached for o4-mini",
         "rate_limit", 3000),
        ({"error": {"status": 400, "message": OVERFLOW_MESSAGE, "code": "context_length_exceeded"}}, f"400 {OVERFLOW_MESSAGE}",
         "context_overflow", None),
        ({"text": "abc", "failed": {"code": "server_error", "message": "boom"}}, "server_error: boom", "transient", None),
        ({"text": "abcdefghijklmnop", "stream_error": {"after": 4}},
         "Error Code server_error: The server had an error while processing your request.", "transient", None),
        ({"text": "abcdefghijklmnop", "cut_after_chunks": 5}, "Connection error: the stream ended before it was complete, during the text", "transient", None),
        ({"text": "abcdefghijklmnop", "garbage_after_chunks": 5},
         "Malformed stream from the provider: '<html><body>502 Bad Gateway</body></html>', during the text", "transient", None),
        ({"text": "abcdefghijklmnop", "stall_after_chunks": 5}, "Request timed out: no data from the provider within the read timeout, during the text",
         "transient", None),
        ({"text": "abc", "fault": {"kind": "echo_auth"}}, "401 Invalid credentials in request: Bearer sk", "auth", None),
        ({"text": "abc", "fault": {"kind": "html", "status": 502, "title": "Bad Gateway"}},
         "502 Bad Gateway (an HTML page instead of the API's error)", "transient", None),
        ({**TOOL_TURN, "tool_calls": [{"name": "bash", "arguments": {"command": "echo hi"}, "chunks": 3}],
          "fault": {"kind": "cut", "at": "tool_args", "style": "clean"}},
         "Connection error: the stream ended before it was complete (no response.completed), in the middle of the arguments of "
         "tool call 'bash'; tool call 'bash' not run", "transient", None),
        ({"text": "abcdefghijklmnop", "fault": {"kind": "stall", "after_frames": 5, "keepalive_ms": 100, "seconds": 8}},
         f"{keepalive_timeout_message(1.5)}, during the text", "transient", None),
    ],
    ids=["429", "overflow", "failed", "stream-error", "cut", "garbage", "stall", "echo-auth", "html-502", "cut-in-args",
         "stall-with-keep-alives"],
)
async def test_failures_end_in_a_classified_error(turn: dict[str, Any], message: str, kind: str, retry: int | None) -> None:
    with ResponsesFakeServer([turn]) as server:
        final = await _final(server, [user_message("x", timestamp=1)], read_timeout=1.5)
    assert (final["stopReason"], final["errorMessage"], final["errorKind"], final.get("retryAfterMs")) == ("error", message, kind, retry)


async def test_a_dripping_stream_is_still_the_whole_answer() -> None:
    with ResponsesFakeServer([{**TOOL_TURN, "fault": {"kind": "drip", "bytes": 64, "interval_ms": 1}}]) as server:
        final = await _final(server, [user_message("x", timestamp=1)])
    assert final["stopReason"] == "toolUse" and final["content"][2]["arguments"] == {"command": "echo hi"}


async def test_a_reply_dripping_in_slower_than_the_timeout_per_event_is_not_a_stall() -> None:
    """4 bytes every 5 ms: the last event (~640 bytes, the whole response again) takes ~0.8 s to
    arrive, longer than the 0.5 s timeout; the bytes of an event still arriving are progress, so
    the reply is whole (~4.6 s in all)."""
    text = "A reply that drips in, a few bytes at a time."
    with ResponsesFakeServer([{"text": text, "fault": {"kind": "drip", "bytes": 4, "interval_ms": 5}}]) as server:
        final = await _final(server, [user_message("x", timestamp=1)], read_timeout=0.5)
    assert final["stopReason"] == "stop", final.get("errorMessage")
    assert final["content"][0]["text"] == text


async def test_an_incomplete_response_is_a_length_stop() -> None:
    with ResponsesFakeServer([{"text": "partial answer", "finish_reason": "length"}]) as server:
        final = await _final(server, [user_message("x", timestamp=1)])
    assert final["stopReason"] == "length" and final["content"][0]["text"] == "partial answer"


def test_openai_models_and_openai_responses_providers_take_this_client(tmp_path: Path) -> None:
    (tmp_path / "models.json").write_text(json.dumps({"providers": {"proxy": {
        "baseUrl": "http://127.0.0.1:9/v1", "api": "openai-responses", "apiKey": "k", "models": [{"id": "gpt-5", "reasoning": True}]}}}))
    registry = ModelRegistry(tmp_path / "models.json", env={})
    for ref in ("openai/gpt-4o", "proxy/gpt-5"):
        model = registry.resolve(ref)
        assert model.api == "openai-responses" and isinstance(default_provider_for(model), ResponsesHttpProvider)


async def test_a_whole_session_keeps_its_reasoning_across_the_tool_loop_and_a_resume(project: Path, agent_dir: Path) -> None:
    turns = [dict(TOOL_TURN, when={"last_user_contains": "echo"}), {"text": "It printed hi.", "when": {"request_contains": "hi\\n"}},
             {"thinking": "Still here.", "text": "Yes.", "when": {"last_user_contains": "again"}}]
    with ResponsesFakeServer(turns, api_key="sk") as server:
        (agent_dir / "models.json").write_text(json.dumps({"providers": {"oai": {
            "baseUrl": server.base_url, "api": "openai-responses", "apiKey": "sk",
            "models": [{"id": "o4-mini", "reasoning": True, "contextWindow": 200000, "maxTokens": 100000}]}}}))
        session = create_agent_session(cwd=project, agent_dir=agent_dir, model="oai/o4-mini", load_extensions=False)
        await session.prompt("run echo hi")
        path = session.session_manager.session_file
        session.session_manager.close()
        resumed = create_agent_session(cwd=project, agent_dir=agent_dir, session=str(path), load_extensions=False)
        await resumed.prompt("again?")
        requests = server.requests
    assert len(requests) == 3  # the fake refused nothing
    assert requests[1]["input"][2]["type"] == "reasoning" and requests[2]["input"][2] == requests[1]["input"][2]
    entries = [json.loads(line) for line in path.read_text().splitlines()]
    assistants = [e["message"] for e in entries if e["type"] == "message" and e["message"]["role"] == "assistant"]
    assert [m["stopReason"] for m in assistants] == ["toolUse", "stop", "stop"]
    assert json.loads(assistants[2]["content"][0]["thinkingSignature"])["encrypted_content"] == encrypted_content(3, "rs_fake3")


async def test_openai_base_url_from_the_environment_reaches_a_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    with ResponsesFakeServer([{"text": "via the proxy"}]) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        request = CompletionRequest(model=O4, system_prompt="", messages=[user_message("x", timestamp=1)], api_key="sk")
        events = [event async for event in ResponsesHttpProvider(timeout=5).stream(request)]
        assert server.recorded[0].path == "/v1/responses"
    assert events[-1]["type"] == "done"


def _responses_provider(agent_dir: Path, base_url: str, *, window: int = 200000) -> None:
    (agent_dir / "models.json").write_text(json.dumps({"providers": {"oai": {
        "baseUrl": base_url, "api": "openai-responses", "apiKey": "sk",
        "models": [{"id": "o4-mini", "reasoning": True, "contextWindow": window, "maxTokens": 100000}]}}}))


async def test_the_overflow_text_compacts_and_retries(project: Path, agent_dir: Path) -> None:
    """§15.14: 'exceeds the context window' is an overflow on this wire: the session compacts
    (the summary call goes over the same wire) and retries the request, never auto-retries it."""
    turns = [{"text": "first answer"}, {"text": "middle answer"},
             {"error": {"status": 400, "message": OVERFLOW_MESSAGE}, "when": {"last_user_contains": "second"}},  # the text alone
             {"text": "## Goal\nRESPONSES-SUMMARY", "when": {"system_contains": "summarize conversations"}},
             {"text": "recovered"}]
    settings = SettingsManager.in_memory({"compaction": {"reserveTokens": 2000, "keepRecentTokens": 1000}})
    with ResponsesFakeServer(turns, api_key="sk") as server:
        _responses_provider(agent_dir, server.base_url, window=8192)
        session = create_agent_session(cwd=project, agent_dir=agent_dir, model="oai/o4-mini", settings=settings,
                                       load_extensions=False, clock=FakeClock())
        events: list[dict[str, Any]] = []
        session.subscribe(events.append)
        await session.prompt("first " + "f" * 6000)
        await session.prompt("middle " + "m" * 6000)
        await session.prompt("second question")
        requests = server.requests
    end = next(e for e in events if e["type"] == "compaction_end")
    assert end["reason"] == "overflow" and end["willRetry"] is True
    assert not [e for e in events if e["type"] == "auto_retry_start"]
    assert len(requests) == 5 and "RESPONSES-SUMMARY" in json.dumps(requests[4]["input"])
    assert session.messages[-1]["content"][-1]["text"] == "recovered"


async def test_rate_limits_and_server_errors_retry_after_the_servers_delay(project: Path, agent_dir: Path) -> None:
    turns = [{"error": {"status": 429, "message": "Rate limit reached for o4-mini", "retry_after": 7}},
             {"error": {"status": 503, "message": "The server is overloaded", "retry_after": 9}},
             {"text": "after the waits"}]
    clock = FakeClock()
    with ResponsesFakeServer(turns, api_key="sk") as server:
        _responses_provider(agent_dir, server.base_url)
        session = create_agent_session(cwd=project, agent_dir=agent_dir, model="oai/o4-mini", load_extensions=False, clock=clock)
        events: list[dict[str, Any]] = []
        session.subscribe(events.append)
        await session.prompt("hello")
        assert len(server.requests) == 3
    starts = [e for e in events if e["type"] == "auto_retry_start"]
    assert [(s["attempt"], s["delayMs"]) for s in starts] == [(1, 7000), (2, 9000)]  # the server's delay (when above the backoff)
    assert starts[0]["errorMessage"].startswith("429 Rate limit reached")
    assert next(e for e in events if e["type"] == "auto_retry_end")["success"] is True
    assert session.messages[-1]["content"][-1]["text"] == "after the waits"
