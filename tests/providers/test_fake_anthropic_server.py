"""The strict fake of Anthropic's Messages API: its SSE format, what it rejects (with the real
API's error shapes), the cache billing from markers, and the ways it can fail."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pi_tui.testing.fake_anthropic_rules import redacted_data, sign_thinking
from pi_tui.testing.fake_anthropic_server import FakeAnthropicServer

KEY = "sk-ant-test-key"
HEADERS = {"x-api-key": KEY, "anthropic-version": "2023-06-01", "content-type": "application/json"}
TOOL = {"name": "bash", "description": "run", "input_schema": {"type": "object", "properties": {}, "required": []}}


def _post(base_url: str, body: Any, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    """A raw HTTP/1.1 POST that also returns a body cut mid-way (urllib would raise)."""
    host, port = base_url.removeprefix("http://").split(":")
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    head = ["POST /v1/messages HTTP/1.1", f"Host: {host}:{port}", f"Content-Length: {len(data)}", "Connection: close"]
    head += [f"{k}: {v}" for k, v in (HEADERS if headers is None else headers).items()]
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode() + data)
        raw = b""
        while chunk := sock.recv(65536):
            raw += chunk
    head_bytes, _, rest = raw.partition(b"\r\n\r\n")
    lines = head_bytes.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    received = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    if "chunked" in received.get("transfer-encoding", ""):
        body_out = b""
        while rest:
            size_line, _, rest = rest.partition(b"\r\n")
            size = int(size_line or b"0", 16)
            if size == 0:
                break
            body_out += rest[:size]
            rest = rest[size + 2 :]
        return status, received, body_out
    return status, received, rest


def _events(raw: bytes) -> list[tuple[str, Any]]:
    out = []
    for block in raw.decode().replace("\r\n", "\n").split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)
        if "event" in fields:
            out.append((fields["event"], json.loads(fields["data"])))
    return out


def _body(**changes: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"model": "claude-sonnet-4-5", "messages": [{"role": "user", "content": "hi"}],
                            "max_tokens": 40192, "stream": True}
    body.update(changes)
    return body


def _error(raw: bytes) -> tuple[str, str]:
    parsed = json.loads(raw)
    assert parsed["type"] == "error" and parsed["request_id"].startswith("req_")
    return parsed["error"]["type"], parsed["error"]["message"]


def test_streams_the_messages_sse_format_with_signed_thinking_and_tool_input() -> None:
    turn = {"thinking": "Let me think.", "text": "Running it.",
            "tool_calls": [{"name": "bash", "arguments": {"command": "echo hi"}, "chunks": 2}]}
    with FakeAnthropicServer([turn], api_key=KEY) as server:
        status, headers, raw = _post(server.base_url, _body(tools=[TOOL], thinking={"type": "enabled", "budget_tokens": 8192}))
    assert status == 200 and headers["content-type"].startswith("text/event-stream")
    events = _events(raw)
    names = [name for name, _ in events]
    assert names[:2] == ["message_start", "ping"] and names[-2:] == ["message_delta", "message_stop"]
    starts = [data["content_block"]["type"] for name, data in events if name == "content_block_start"]
    assert starts == ["thinking", "text", "tool_use"]
    deltas = [data["delta"] for name, data in events if name == "content_block_delta"]
    signature = "".join(d["signature"] for d in deltas if d["type"] == "signature_delta")
    assert signature == sign_thinking("Let me think.")
    assert "".join(d.get("partial_json", "") for d in deltas) == '{"command": "echo hi"}'
    assert sum(d["type"] == "input_json_delta" for d in deltas) == 2
    assert events[-2][1]["delta"]["stop_reason"] == "tool_use"
    assert events[0][1]["message"]["id"].startswith("msg_")


def test_thinking_is_streamed_only_when_the_request_enables_it() -> None:
    with FakeAnthropicServer([{"thinking": "hidden", "text": "ok"}]) as server:
        _, _, raw = _post(server.base_url, _body())
    starts = [data["content_block"]["type"] for name, data in _events(raw) if name == "content_block_start"]
    assert starts == ["text"]


@pytest.mark.parametrize(("headers", "status", "kind", "text"), [
    ({"anthropic-version": "2023-06-01", "content-type": "application/json"}, 401, "authentication_error",
     "x-api-key header is required"),
    ({**HEADERS, "x-api-key": "wrong"}, 401, "authentication_error", "invalid x-api-key"),
    ({"x-api-key": KEY, "content-type": "application/json"}, 400, "invalid_request_error",
     "anthropic-version: header is required"),
    ({**HEADERS, "anthropic-beta": "made-up-beta"}, 400, "invalid_request_error", "Unexpected value(s) `made-up-beta`"),
])
def test_bad_headers_are_rejected(headers: dict[str, str], status: int, kind: str, text: str) -> None:
    with FakeAnthropicServer([{"text": "never"}], api_key=KEY) as server:
        got, _, raw = _post(server.base_url, _body(), headers)
        assert server.script.remaining == 1
    assert got == status
    error_type, message = _error(raw)
    assert error_type == kind and message.startswith(text)


def _tool_history(first_block: dict[str, Any] | None) -> list[dict[str, Any]]:
    assistant = [{"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {"command": "ls"}}]
    if first_block is not None:
        assistant.insert(0, first_block)
    return [{"role": "user", "content": "run ls"}, {"role": "assistant", "content": assistant},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "a\n", "is_error": False}]}]


THINKING = {"type": "enabled", "budget_tokens": 8192}


@pytest.mark.parametrize(("changes", "text"), [
    ({"thinking": THINKING, "messages": _tool_history(None)},
     "messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`"),
    ({"thinking": THINKING, "messages": _tool_history({"type": "thinking", "thinking": "hm", "signature": "reasoning_content"})},
     "messages.1.content.0: Invalid `signature` in `thinking` block"),
    ({"thinking": THINKING, "messages": _tool_history({"type": "thinking", "thinking": "changed", "signature": sign_thinking("hm")})},
     "messages.1.content.0: Invalid `signature` in `thinking` block"),
    ({"thinking": THINKING, "messages": _tool_history({"type": "redacted_thinking", "data": "made-up"})},
     "messages.1.content.0: Invalid `data` in `redacted_thinking` block"),
    ({"thinking": {"type": "enabled", "budget_tokens": 8192}, "max_tokens": 8192},
     "`max_tokens` must be greater than `thinking.budget_tokens`"),
    ({"thinking": {"type": "enabled", "budget_tokens": 512}}, "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"),
    ({"messages": [*_tool_history(None)[:2], {"role": "user", "content": "next"}]},
     "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_1"),
    ({"messages": [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_9", "content": ""}]}]},
     "messages.0.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_9"),
    ({"messages": [{"role": "user", "content": [{"type": "text", "text": "  "}]}]},
     "messages.0.content.0.text: text content blocks must contain non-whitespace text"),
    ({"stream_options": {"include_usage": True}}, "stream_options: Extra inputs are not permitted"),
    ({"max_tokens": None}, "max_tokens: Input should be greater than or equal to 1"),
    ({"system": [{"type": "text", "text": "s", "cache_control": {"type": "ephemeral"}}] * 3,
      "tools": [{**TOOL, "cache_control": {"type": "ephemeral"}}],
      "messages": [{"role": "user", "content": [{"type": "text", "text": "x", "cache_control": {"type": "ephemeral"}}]}]},
     "A maximum of 4 blocks with cache_control may be provided. Found 5."),
    # keys a client keeps for itself must not leak onto the wire
    ({"thinking": THINKING, "messages": _tool_history({"type": "thinking", "thinking": "hm", "signature": sign_thinking("hm"),
                                                        "thinkingSignature": sign_thinking("hm")})},
     "messages.1.content.0.thinking.thinkingSignature: Extra inputs are not permitted"),
    ({"messages": [{"role": "user", "content": [{"type": "text", "text": "x", "textSignature": "{}"}]}]},
     "messages.0.content.0.text.textSignature: Extra inputs are not permitted"),
    ({"messages": [{"role": "user", "content": "x", "timestamp": 1}]}, "messages.0.timestamp: Extra inputs are not permitted"),
    ({"thinking": THINKING, "messages": _tool_history({"type": "thinking", "thinking": "hm", "signature": sign_thinking("hm"),
                                                        "cache_control": {"type": "ephemeral"}})},
     "messages.1.content.0.thinking.cache_control: Extra inputs are not permitted"),
    ({"messages": [*_tool_history(None)[:2], {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "toolCall", "text": "x"}]}]}]},
     "messages.2.content.0.tool_result.content.0.type: Input tag 'toolCall'"),
    ({"system": [{"type": "text", "text": "s", "cache_control": {"type": "ephemeral"}}],
      "messages": [{"role": "user", "content": [{"type": "text", "text": "x", "cache_control": {"type": "ephemeral", "ttl": "1h"}}]}]},
     "A ttl='1h' cache_control block must not come after a ttl='5m' cache_control block."),
])
def test_invalid_bodies_get_the_real_400(changes: dict[str, Any], text: str) -> None:
    with FakeAnthropicServer([{"text": "never"}]) as server:
        status, _, raw = _post(server.base_url, _body(**changes))
    assert status == 400
    error_type, message = _error(raw)
    assert error_type == "invalid_request_error" and message.startswith(text), message


def test_only_the_first_step_of_a_tool_loop_turn_must_open_with_thinking() -> None:
    """assistant -> tool_result -> assistant is one turn: later steps think only when interleaved."""
    messages = _tool_history({"type": "thinking", "thinking": "hm", "signature": sign_thinking("hm")})
    messages += [{"role": "assistant", "content": [{"type": "text", "text": "Next."},
                                                   {"type": "tool_use", "id": "toolu_2", "name": "bash", "input": {}}]},
                 {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_2", "content": "b"}]}]
    with FakeAnthropicServer([{"text": "done"}]) as server:
        status, _, raw = _post(server.base_url, _body(thinking=THINKING, messages=messages))
        assert status == 200, raw
        messages[1]["content"].pop(0)  # the turn's first step without its thinking: rejected
        status, _, raw = _post(server.base_url, _body(thinking=THINKING, messages=messages))
    assert status == 400 and _error(raw)[1].startswith("messages.1.content.0.type: Expected `thinking`")


def test_a_correctly_replayed_signed_turn_and_redacted_block_are_accepted() -> None:
    messages = _tool_history({"type": "thinking", "thinking": "hm", "signature": sign_thinking("hm")})
    messages[1]["content"].insert(0, {"type": "redacted_thinking", "data": redacted_data("x")})
    with FakeAnthropicServer([{"text": "done"}]) as server:
        status, _, raw = _post(server.base_url, _body(thinking=THINKING, messages=messages))
    assert status == 200, raw


def test_usage_is_billed_from_the_cache_markers() -> None:
    system = [{"type": "text", "text": "s" * 8000, "cache_control": {"type": "ephemeral"}}]

    def body(messages: list[dict[str, Any]]) -> dict[str, Any]:
        last = messages[-1]
        last["content"] = [{"type": "text", "text": last["content"], "cache_control": {"type": "ephemeral"}}]
        return _body(system=system, messages=messages)

    with FakeAnthropicServer([{"text": "one"}, {"text": "two"}, {"text": "three"}]) as server:
        _post(server.base_url, body([{"role": "user", "content": "first question"}]))
        _post(server.base_url, body([{"role": "user", "content": "first question"}, {"role": "assistant", "content": "one"},
                                     {"role": "user", "content": "second question"}]))
        unmarked = _body(system=[{"type": "text", "text": "s" * 8000}], messages=[{"role": "user", "content": "q"}])
        _post(server.base_url, unmarked)
        first, second, third = server.usages
    assert first["cache_read_input_tokens"] == 0 and first["cache_creation_input_tokens"] > 2000
    assert first["input_tokens"] == 0
    # the second request reads the first prefix (lookback from its marker) and writes the rest
    assert second["cache_read_input_tokens"] == first["cache_creation_input_tokens"]
    assert 0 < second["cache_creation_input_tokens"] < 100
    # without markers nothing is read or written: every token is billed as fresh input
    assert third["cache_read_input_tokens"] == third["cache_creation_input_tokens"] == 0
    assert third["input_tokens"] > 2000


def test_an_over_long_prompt_is_the_api_overflow_error() -> None:
    with FakeAnthropicServer([{"text": "never"}], context_window=100) as server:
        status, _, raw = _post(server.base_url, _body(messages=[{"role": "user", "content": "x" * 2000}]))
    assert status == 400
    assert _error(raw)[1].startswith("prompt is too long: ") and _error(raw)[1].endswith(" tokens > 100 maximum")


def test_scripted_errors_carry_the_retry_delay_and_can_echo_the_key() -> None:
    turns = [{"error": {"status": 529, "retry_after": 2}},
             {"error": {"status": 401, "echo_api_key": True}},
             {"html": {"status": 502}}]
    with FakeAnthropicServer(turns) as server:
        s1, h1, r1 = _post(server.base_url, _body())
        s2, _, r2 = _post(server.base_url, _body())
        s3, h3, r3 = _post(server.base_url, _body())
    assert (s1, h1["retry-after"], _error(r1)) == (529, "2", ("overloaded_error", "Overloaded"))
    assert s2 == 401 and KEY in _error(r2)[1]
    assert s3 == 502 and h3["content-type"] == "text/html" and b"<html>" in r3


def test_faults_cut_mid_tool_input_end_without_message_stop_and_mid_stream_error() -> None:
    call = {"name": "bash", "arguments": {"command": "echo a long command"}, "chunks": 3}
    turns = [{"tool_calls": [call], "cut_in": "tool_input"},
             {"text": "partial answer", "end_after_chunks": 4},
             {"text": "x", "stream_error": {"type": "overloaded_error", "message": "Overloaded", "after": 1}},
             {"text": "crlf", "crlf": True}]
    with FakeAnthropicServer(turns) as server:
        _, _, cut = _post(server.base_url, _body(tools=[TOOL]))
        _, _, ended = _post(server.base_url, _body())
        _, _, errored = _post(server.base_url, _body())
        _, _, crlf = _post(server.base_url, _body())
    cut_events = _events(cut)
    assert cut_events[-1][1]["delta"]["type"] == "input_json_delta"
    assert "message_stop" not in [n for n, _ in cut_events]
    assert [n for n, _ in _events(ended)][-1] == "content_block_delta"
    assert [n for n, _ in _events(errored)] == ["message_start", "error"]
    assert b"\r\n\r\n" in crlf and [n for n, _ in _events(crlf)][-1] == "message_stop"


def test_command_line_prints_the_port(tmp_path: Path) -> None:
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"turns": [{"text": "hi"}]}))
    process = subprocess.Popen([sys.executable, "-m", "pi_tui.testing.fake_anthropic_server", "--script", str(script)],
                               stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("PORT ")
        status, _, raw = _post(f"http://127.0.0.1:{line.split()[1]}", _body())
        assert status == 200 and [n for n, _ in _events(raw)][-1] == "message_stop"
    finally:
        process.terminate()
        process.wait(timeout=10)
