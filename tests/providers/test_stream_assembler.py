"""Parsing of streamed chunks (§14.14) beyond what the scripts produce."""

from __future__ import annotations

from typing import Any

from pi_tui.core.partial_json import PartialJson, parse_partial_json, parse_tool_arguments
from pi_tui.core.provider import ModelInfo
from pi_tui.providers.stream_assembler import StreamAssembler

MODEL = ModelInfo(provider="fake", id="fake-model")


def _chunk(delta: dict[str, Any] | None = None, *, finish: str | None = None, **top: Any) -> dict[str, Any]:
    return {"id": "r1", "model": "fake-model", "choices": [{"index": 0, "delta": delta or {}, "finish_reason": finish}], **top}


def test_reasoning_field_name_becomes_the_signature_and_only_one_field_counts() -> None:
    assembler = StreamAssembler(MODEL)
    assembler.feed(_chunk({"reasoning": "a", "reasoning_content": "dup"}))
    assembler.feed(_chunk({"reasoning": "b"}))
    events = assembler.finish()
    block = events[-1]["message"]["content"][0]
    assert block == {"type": "thinking", "thinking": "dupb", "thinkingSignature": "reasoning_content"}


def test_tool_call_fragments_match_by_index_then_by_id_and_fill_names_once() -> None:
    assembler = StreamAssembler(MODEL)
    assembler.feed(_chunk({"tool_calls": [{"index": 0, "id": "", "function": {"name": "", "arguments": '{"pa'}}]}))
    assembler.feed(_chunk({"tool_calls": [{"index": 0, "id": "c1", "function": {"name": "read", "arguments": 'th": "a'}}]}))
    assembler.feed(_chunk({"tool_calls": [{"index": 0, "function": {"name": "ignored", "arguments": '.txt"}'}}]}))
    assembler.feed(_chunk({"tool_calls": [{"id": "c2", "function": {"name": "bash", "arguments": "{}"}}]}))
    message = assembler.finish()[-1]["message"]
    assert message["content"] == [
        {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "a.txt"}},
        {"type": "toolCall", "id": "c2", "name": "bash", "arguments": {}},
    ]
    assert message["stopReason"] == "stop"  # no finish_reason: stays stop (§14.14)


def test_partial_arguments_are_visible_while_streaming() -> None:
    assembler = StreamAssembler(MODEL)
    events = assembler.feed(_chunk({"tool_calls": [{"index": 0, "id": "c", "function": {"name": "bash", "arguments": '{"command": "ls -l'}}]}))
    assert events[-1]["partial"]["content"][0]["arguments"] == {"command": "ls -l"}


def test_broken_final_arguments_are_repaired_or_empty() -> None:
    assert parse_tool_arguments('{"text": "line1\nline2"}') == {"text": "line1\nline2"}
    assert parse_tool_arguments('{"path": "C:\\dir\\x"}') == {"path": "C:\\dir\\x"}
    assert parse_tool_arguments('{"a": 1, "b": [1, 2') == {"a": 1, "b": [1, 2]}
    assert parse_tool_arguments("not json at all") == {}
    assert parse_tool_arguments("") == {}
    assert parse_partial_json('{"a": "x", "b":') == {"a": "x"}


def test_usage_chunk_replaces_usage_and_ids_are_recorded_once() -> None:
    assembler = StreamAssembler(MODEL)
    assembler.feed(_chunk({"content": "hi"}))
    assembler.feed({"id": "r2", "model": "served-model", "choices": [],
                    "usage": {"prompt_tokens": 50, "completion_tokens": 5, "prompt_cache_hit_tokens": 20}})
    message = assembler.finish()[-1]["message"]
    assert (message["responseId"], message["responseModel"]) == ("r1", "served-model")
    assert (message["usage"]["input"], message["usage"]["cacheRead"], message["usage"]["totalTokens"]) == (30, 20, 55)


def test_length_and_tool_calls_finish_reasons() -> None:
    for finish, stop in (("length", "length"), ("tool_calls", "toolUse"), ("function_call", "toolUse"), ("end", "stop")):
        assembler = StreamAssembler(MODEL)
        assembler.feed(_chunk({"content": "x"}, finish=finish))
        assert assembler.finish()[-1]["message"]["stopReason"] == stop


def test_fail_keeps_partial_blocks_and_closes_them() -> None:
    assembler = StreamAssembler(MODEL)
    assembler.feed(_chunk({"content": "par"}))
    events = assembler.fail("Connection error.", "transient", retry_after_ms=1500)
    assert [e["type"] for e in events] == ["text_end", "error"]
    error = events[-1]["error"]
    assert (error["stopReason"], error["errorKind"], error["retryAfterMs"]) == ("error", "transient", 1500)
    assert error["content"] == [{"type": "text", "text": "par"}]


def test_a_huge_streamed_argument_assembles_in_near_linear_time() -> None:
    import json
    import time

    content = ("line with \"quotes\", braces {[ and a backslash \\\\ \n" * 5000)[:200_000]
    raw = json.dumps({"path": "big.txt", "content": content})
    assembler = StreamAssembler(MODEL)
    started = time.perf_counter()
    for i in range(0, len(raw), 20):
        call: dict[str, Any] = {"index": 0, "function": {"arguments": raw[i : i + 20]}}
        if i == 0:
            call.update(id="c", function={"name": "write", "arguments": raw[:20]})
        events = assembler.feed(_chunk({"tool_calls": [call]}))
    partial = events[-1]["partial"]["content"][0]["arguments"]
    message = assembler.finish()[-1]["message"]
    elapsed = time.perf_counter() - started
    assert message["content"][0]["arguments"] == {"path": "big.txt", "content": content}
    assert partial["path"] == "big.txt" and len(partial["content"]) > 150_000  # partial view lags at most 1/8
    assert elapsed < 10, f"{len(raw) // 20} deltas took {elapsed:.1f}s: partial parsing went quadratic"


def test_arguments_are_complete_only_when_nothing_is_left_open() -> None:
    whole = '{"command": "echo hi; rm -rf build", "timeout": 10}'
    cut_points = [n for n in range(1, len(whole)) if not whole[:n].rstrip().endswith("}")]
    assert all(not PartialJson().append(whole[:n]).is_complete for n in cut_points)
    assert PartialJson().append(whole[:20]).append(whole[20:]).is_complete
    assert PartialJson().is_complete  # a call without arguments
    assert PartialJson().append('{"a": "}"}').is_complete
    assert not PartialJson().append('{"a": "}').is_complete  # the brace is inside an open string
