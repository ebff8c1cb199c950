"""Streams that end wrong, at the provider seam: every fault of the fake server (``script_faults``)
through the direct OpenAI client, the litellm adapter and the scripted provider (and, for the
idle timeout, the direct Anthropic and Gemini clients). A stream that did not finish is an error
naming where it stopped, never a ``done``."""

from __future__ import annotations

import asyncio
import copy
import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from pi_tui.core.errors import ConfigError
from pi_tui.core.messages import user_message
from pi_tui.core.provider import CompletionRequest, ModelInfo, ToolSpec
from pi_tui.providers.anthropic_http import AnthropicHttpProvider
from pi_tui.providers.gemini_http import GeminiHttpProvider
from pi_tui.providers.litellm_provider import LiteLLMProvider, ReplyDeadline, load_litellm
from pi_tui.providers.openai_http import OpenAIHttpProvider
from pi_tui.providers.stream_failures import keepalive_timeout_message
from pi_tui.testing.fake_anthropic_server import FakeAnthropicServer
from pi_tui.testing.fake_server import FakeServer
from pi_tui.testing.gemini_fake import GeminiFakeServer
from pi_tui.testing.script import Script
from pi_tui.testing.scripted import ScriptedProvider

BASH = ToolSpec(name="bash", description="Run a command",
                parameters={"type": "object", "required": ["command"], "properties": {"command": {"type": "string"}}})
TURN: dict[str, Any] = {
    "thinking": "Let me think about it carefully.",
    "text": "Here is the plan: run two commands.",
    "tool_calls": [
        {"id": "call_a", "name": "bash", "arguments": {"command": "touch ran-a && echo first"}, "chunks": 3},
        {"id": "call_b", "name": "read", "arguments": {"path": "notes.txt"}, "chunks": 2},
    ],
    "usage": {"prompt_tokens": 100, "completion_tokens": 20},
}
WHERE = {
    "start": "before any content",
    "thinking": "during the thinking",
    "text": "during the text",
    "tool_args": "in the middle of the arguments of tool call 'bash'",
    "between_tool_calls": "after tool call 'bash'",
    "before_finish": "after tool call 'read'",
    "before_usage": "after the finish reason, before the usage",
    "before_done": "after the finish reason, before the end of the stream",
}


def _request(base_url: str, timeout_ms: int | None = None) -> CompletionRequest:
    model = ModelInfo(provider="fake", id="fake-model", litellm_model="openai/fake-model", base_url=base_url,
                      max_tokens=1000, compat={"supportsDeveloperRole": False, "supportsReasoningEffort": False})
    return CompletionRequest(model=model, system_prompt="sys", messages=[user_message("go", timestamp=1)],
                             tools=[BASH], api_key="sk-test-123", timeout_ms=timeout_ms)


async def _final(provider: Any, request: CompletionRequest) -> tuple[list[str], dict[str, Any]]:
    kinds: list[str] = []
    final: dict[str, Any] = {}
    async for event in provider.stream(request):
        kinds.append(event["type"])
        if event["type"] in ("done", "error"):
            final = dict(event.get("message") or event.get("error"))
    return kinds, final


@pytest.fixture(autouse=True, scope="module")
def _litellm_loaded() -> None:
    """Import litellm before any timing starts (seconds on a loaded machine)."""
    load_litellm()


def _where(wire: str, at: str) -> str:
    """litellm keeps the usage chunk to itself until the stream ends and never shows ``[DONE]``:
    past the finish reason it can only tell that the usage has not come. On the Anthropic wire
    the finish reason and the usage come together (``message_delta``). The direct Anthropic
    client keeps pi's texts, which do not name the place."""
    if wire == "anthropic":
        return ""
    if wire == "litellm" and at in ("before_usage", "before_done"):
        return "after the finish reason"
    if wire == "anthropic-litellm" and at in ("before_finish", "before_usage"):
        return WHERE["before_finish"]
    return WHERE[at]


async def _through(wire: str, turn: dict[str, Any], *, timeout_ms: int | None = None) -> tuple[list[str], dict[str, Any]]:
    turns = [copy.deepcopy(turn)]
    if wire in ("anthropic", "anthropic-litellm"):
        with FakeAnthropicServer(turns) as anthropic:
            model = ModelInfo(provider="anthropic", id="claude-sonnet-4-5", api="anthropic-messages", reasoning=True,
                              litellm_model="anthropic/claude-sonnet-4-5", base_url=anthropic.base_url, max_tokens=4000)
            request = CompletionRequest(model=model, system_prompt="sys", messages=[user_message("go", timestamp=1)],
                                        tools=[BASH], api_key="sk-ant-test-123", reasoning="medium", timeout_ms=timeout_ms)
            return await _final(AnthropicHttpProvider() if wire == "anthropic" else LiteLLMProvider(), request)
    if wire == "gemini":
        with GeminiFakeServer(turns) as gemini:
            model = ModelInfo(provider="google", id="gemini-2.5-flash", api="google-generative-ai", reasoning=True,
                              litellm_model="gemini/gemini-2.5-flash", base_url=gemini.base_url, max_tokens=4000)
            request = CompletionRequest(model=model, system_prompt="sys", messages=[user_message("go", timestamp=1)],
                                        tools=[BASH], api_key="gk-test-123", reasoning="medium", timeout_ms=timeout_ms)
            return await _final(GeminiHttpProvider(), request)
    if wire == "scripted":
        return await _final(ScriptedProvider(turns), _request("http://127.0.0.1:9/v1", timeout_ms))
    with FakeServer(turns) as server:
        provider = OpenAIHttpProvider() if wire == "direct" else LiteLLMProvider()
        return await _final(provider, _request(server.base_url, timeout_ms))


def _assert_broken(kinds: list[str], final: dict[str, Any], cause: str, where: str) -> None:
    assert "done" not in kinds and kinds[-1] == "error"
    assert final["stopReason"] == "error" and final["errorKind"] == "transient"
    assert final["errorMessage"].startswith(cause), final["errorMessage"]
    assert where in final["errorMessage"], final["errorMessage"]


@pytest.mark.parametrize("wire", ["direct", "scripted", "litellm", "anthropic-litellm"])
@pytest.mark.parametrize("style", ["clean", "eof", "reset"])
@pytest.mark.parametrize("at", list(WHERE))
async def test_a_cut_stream_is_an_error_naming_where_it_stopped(wire: str, style: str, at: str) -> None:
    kinds, final = await _through(wire, {**TURN, "fault": {"kind": "cut", "at": at, "style": style}})
    if (wire == "litellm" and at == "before_done" and style != "reset") or (wire == "anthropic-litellm" and at == "before_done"):
        # litellm shows neither [DONE] nor Anthropic's message_stop (it stops reading at the
        # finish): a stream that ends after the finish reason and the usage is whole to it, and
        # nothing is missing from the message
        assert kinds[-1] == "done" and final["usage"]["output"] == 20
        return
    _assert_broken(kinds, final, "Connection error: the stream ended before it was complete", _where(wire, at))
    calls = [b for b in final["content"] if b["type"] == "toolCall"]
    if calls:
        assert "not run" in final["errorMessage"]


@pytest.mark.parametrize("wire", ["direct", "scripted", "litellm", "anthropic-litellm"])
@pytest.mark.parametrize("at", ["text", "tool_args", "before_done"])
async def test_a_stalled_stream_times_out_after_the_idle_timeout(wire: str, at: str) -> None:
    started = time.monotonic()
    kinds, final = await _through(wire, {**TURN, "fault": {"kind": "stall", "at": at}}, timeout_ms=400)
    _assert_broken(kinds, final, "Request timed out", _where(wire, at))
    assert time.monotonic() - started < 10  # the stall lasts an hour: the idle timeout ended it


@pytest.mark.parametrize("wire", ["direct", "scripted"])
@pytest.mark.parametrize("at", ["start", "text", "tool_args"])
@pytest.mark.parametrize("garbage", ["\x89PNG\r\n\x1a\n\x00 binary\n\n", "data: {\"choices\": [{\"delta\"\n\n",
                                     "<html><body>oops</body></html>\n"])
async def test_garbage_in_the_stream_is_a_malformed_stream_error(wire: str, at: str, garbage: str) -> None:
    kinds, final = await _through(wire, {**TURN, "fault": {"kind": "garbage", "at": at, "data": garbage}})
    _assert_broken(kinds, final, "Malformed stream from the provider", WHERE[at])


@pytest.mark.parametrize("wire", ["direct", "scripted", "litellm", "anthropic-litellm"])
async def test_a_body_that_is_all_garbage_is_an_error(wire: str) -> None:
    kinds, final = await _through(wire, {**TURN, "fault": {"kind": "cut", "at": "start", "style": "eof"}})
    assert final["stopReason"] == "error" and "done" not in kinds
    kinds, final = await _through(wire, {"text": "x", "fault": {"kind": "garbage", "data": "hello\nworld\n",
                                                                "whole_body": True}})
    assert final["stopReason"] == "error" and "done" not in kinds


@pytest.mark.parametrize("wire", ["direct", "scripted", "litellm", "anthropic-litellm"])
@pytest.mark.parametrize("status", [200, 502])
async def test_an_html_page_instead_of_the_stream_is_an_error(wire: str, status: int) -> None:
    kinds, final = await _through(wire, {**TURN, "fault": {"kind": "html", "status": status, "title": "Wi-Fi login"}})
    assert kinds[-1] == "error" and "done" not in kinds and final["stopReason"] == "error"
    if status == 200 and wire in ("direct", "scripted"):  # litellm: an empty stream, "no finish reason"
        assert final["errorKind"] == "unknown"
        assert final["errorMessage"] == ("The provider answered 200 with an HTML page (titled 'Wi-Fi login') instead "
                                         "of an event stream; is the model's baseUrl right?")
    elif status == 502:
        assert final["errorKind"] == "transient" and final["errorMessage"].startswith("502 ")


DRIP_TEXT = "A whole answer, a byte at a time. " * 4


@pytest.mark.parametrize("wire", ["direct", "anthropic", "gemini", "scripted"])
async def test_a_slow_drip_is_not_a_stall(wire: str) -> None:
    """Every byte alone, 5 ms apart: one event (100-400 bytes) takes longer to arrive than the
    0.4 s timeout, the whole several times longer. A reply that keeps growing is never cut,
    however slowly it comes: the own clients count the bytes of an event still arriving."""
    turn = {"text": DRIP_TEXT, "usage": TURN["usage"], "fault": {"kind": "drip", "bytes": 1, "interval_ms": 5}}
    started = time.monotonic()
    kinds, final = await _through(wire, turn, timeout_ms=400)
    assert kinds[-1] == "done", final.get("errorMessage")
    assert [b["text"] for b in final["content"] if b["type"] == "text"] == [DRIP_TEXT]
    if wire != "scripted":  # (no clock there)
        assert time.monotonic() - started > 2.0  # several times the timeout


@pytest.mark.parametrize("wire", ["litellm", "anthropic-litellm"])
async def test_a_slow_drip_through_litellm_is_not_a_stall(wire: str) -> None:
    """litellm shows whole events only: 16 bytes every 5 ms bring one within the timeout (plus
    ``ReplyDeadline``'s grace), the whole reply takes several times the 0.4 s timeout."""
    turn = {"text": DRIP_TEXT * 2, "usage": TURN["usage"], "fault": {"kind": "drip", "bytes": 16, "interval_ms": 5}}
    started = time.monotonic()
    kinds, final = await _through(wire, turn, timeout_ms=400)
    assert kinds[-1] == "done", final.get("errorMessage")
    assert final["content"][-1] == {"type": "text", "text": DRIP_TEXT * 2}
    assert time.monotonic() - started > 0.8  # longer in total than the timeout


def _keepalive_cause(wire: str) -> str:
    return keepalive_timeout_message(0.4 + ReplyDeadline.GRACE_S if wire.endswith("litellm") else 0.4)


@pytest.mark.parametrize("wire", ["direct", "anthropic", "gemini", "scripted", "litellm", "anthropic-litellm"])
@pytest.mark.parametrize("at", ["start", "text", "tool_args"])
async def test_keep_alives_do_not_hold_a_stalled_reply_open(wire: str, at: str) -> None:
    """The server sends its keep-alive every 0.1 s (an SSE comment; Anthropic's ``ping`` event)
    and never the rest of the reply: the call ends after the 0.4 s timeout (through litellm,
    plus its grace), as a transient error saying so, not when the server gives up (8 s here,
    never for a real one). Gemini's function call is one event: no keep-alive inside it."""
    if wire == "gemini" and at == "tool_args":
        at = "text"
    started = time.monotonic()
    fault = {"kind": "stall", "at": at, "keepalive_ms": 100, "seconds": 8}
    kinds, final = await _through(wire, {**TURN, "fault": fault}, timeout_ms=400)
    _assert_broken(kinds, final, _keepalive_cause(wire), _where(wire, at))
    assert time.monotonic() - started < 6


@pytest.mark.parametrize("wire", ["direct", "anthropic", "litellm"])
async def test_a_slow_consumer_does_not_count_against_the_timeout(wire: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The timeout measures the provider, not the caller: a consumer that takes longer than the
    timeout (plus litellm's grace) over an event (the start, the first text), while the rest of
    the reply already waits in the socket, still gets the whole reply."""
    slow = 0.4 + ReplyDeadline.GRACE_S + 0.3 if wire == "litellm" else 0.7

    async def slowly(provider: Any, request: CompletionRequest) -> tuple[list[str], dict[str, Any]]:
        kinds: list[str] = []
        final: dict[str, Any] = {}
        async for event in provider.stream(request):
            kinds.append(event["type"])
            if event["type"] in ("start", "text_start"):
                await asyncio.sleep(slow)
            if event["type"] in ("done", "error"):
                final = dict(event.get("message") or event.get("error"))
        return kinds, final

    monkeypatch.setattr(sys.modules[__name__], "_final", slowly)
    kinds, final = await _through(wire, {"text": "first part, then the rest", "usage": TURN["usage"]}, timeout_ms=400)
    assert kinds[-1] == "done", final.get("errorMessage")


@pytest.mark.parametrize(("wire", "style"), [("direct", "blank"), ("direct", "empty"), ("direct", "comment"),
                                             ("anthropic", "comment"), ("anthropic", "blank"), ("gemini", "blank"),
                                             ("scripted", "empty"), ("litellm", "empty"), ("litellm", "blank")])
async def test_every_kind_of_keep_alive_is_not_progress(wire: str, style: str) -> None:
    """Blank lines, SSE comments and chunks with nothing in them (an empty content delta) keep a
    connection busy without adding to the reply."""
    fault = {"kind": "stall", "at": "text", "keepalive_ms": 100, "keepalive": style, "seconds": 8}
    kinds, final = await _through(wire, {**TURN, "fault": fault}, timeout_ms=400)
    _assert_broken(kinds, final, _keepalive_cause(wire), _where(wire, "text"))


@pytest.mark.parametrize("wire", ["direct", "scripted", "anthropic-litellm"])
async def test_echo_auth_quotes_the_credential_the_request_carried(wire: str) -> None:
    _, final = await _through(wire, {"text": "x", "fault": {"kind": "echo_auth"}})
    assert final["errorKind"] == "auth"
    quoted = "sk-ant-test-123" if wire == "anthropic-litellm" else "Bearer sk-test-123"
    assert final["errorMessage"].startswith("401 ") and final["errorMessage"].endswith(f"Invalid credentials in request: {quoted}")


@pytest.mark.parametrize("wire", ["direct", "scripted", "litellm", "anthropic-litellm"])
async def test_rate_limit_and_server_errors_carry_their_retry_delay(wire: str) -> None:
    _, final = await _through(wire, {"error": {"status": 429, "retry_after_ms": 1500}})
    assert (final["errorKind"], final.get("retryAfterMs")) == ("rate_limit", 1500)
    _, final = await _through(wire, {"error": {"status": 503, "retry_after": 2}})
    assert (final["errorKind"], final.get("retryAfterMs")) == ("transient", 2000)


async def test_the_direct_client_stops_reading_a_stalled_server_without_waiting_for_it() -> None:
    """The stall holds the connection for an hour; the client gives up after its timeout and the
    fake server is released by its own shutdown."""
    with FakeServer([{**TURN, "fault": {"kind": "stall", "at": "start"}}]) as server:
        started = time.monotonic()
        task = asyncio.ensure_future(_final(OpenAIHttpProvider(timeout=0.3), _request(server.base_url)))
        _, final = await asyncio.wait_for(task, 10)
        assert time.monotonic() - started < 5
    assert final["errorMessage"].startswith("Request timed out") and "before any content" in final["errorMessage"]


def test_a_fault_the_fakes_cannot_place_is_refused_with_a_clear_message() -> None:
    with pytest.raises(ConfigError, match="kind is one of"):
        Script.from_data([{"text": "x", "fault": {"kind": "explode"}}])
    with pytest.raises(ConfigError, match="'at' must be one of"):
        Script.from_data([{"text": "x", "fault": {"kind": "cut", "at": "middle"}}])
    with pytest.raises(ConfigError, match="needs 'at'"):
        Script.from_data([{"text": "x", "fault": {"kind": "cut"}}])


async def test_a_place_the_turn_does_not_have_is_refused() -> None:
    with pytest.raises(ConfigError, match="no such place"):
        await _through("scripted", {"text": "only text", "fault": {"kind": "cut", "at": "tool_args"}})


async def test_the_fault_example_in_docs_models_md_runs() -> None:
    text = (Path(__file__).parents[2] / "docs" / "models.md").read_text()
    example = json.loads(text.split("A turn's `fault` breaks the reply")[1].split("```json")[1].split("```")[0])
    outcomes = []
    for turn in example["turns"]:
        kinds, final = await _final(ScriptedProvider([turn]), _request("http://127.0.0.1:9/v1"))
        outcomes.append((kinds[-1], final.get("errorKind")))
    assert outcomes == [("error", "transient"), ("error", "transient"), ("error", "unknown"), ("error", "transient"),
                        ("done", None), ("error", "auth")]
