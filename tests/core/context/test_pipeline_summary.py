"""The strict five-field JSON summary: validation, and the runner's summary step at its threshold."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pi_tui.core.context.pipeline import PipelineConfig, message_bytes, tool_pairing_problems
from pi_tui.core.context.pipeline_cache import RequestPreparer
from pi_tui.core.context.pipeline_summary import (
    PIPELINE_SUMMARY_INSTRUCTIONS,
    PIPELINE_SUMMARY_SYSTEM_PROMPT,
    SUMMARY_FIELDS,
    validate_summary_answer,
)
from pi_tui.core.messages import text_of, user_message
from tests.session.compaction_host import FakeHost, usage_assistant

GOOD = {field: f"value of {field}" for field in SUMMARY_FIELDS}


def answer(text: str, *, stop: str = "stop", calls: bool = False) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": text}]
    if calls:
        content.append({"type": "toolCall", "id": "x", "name": "read", "arguments": {}})
    return {"role": "assistant", "content": content, "stopReason": stop}


def test_a_strict_answer_is_accepted() -> None:
    verdict = validate_summary_answer(answer(json.dumps(GOOD)))
    assert verdict.accepted and verdict.fields == GOOD
    assert validate_summary_answer(answer("\n  " + json.dumps(GOOD) + "\n")).accepted


@pytest.mark.parametrize(
    ("message", "reason"),
    [
        (answer(json.dumps({**GOOD, "extra": "x"})), "unexpected field(s): extra"),
        (answer(json.dumps({k: v for k, v in GOOD.items() if k != "remaining_work"})), "missing field(s): remaining_work"),
        (answer(json.dumps({**GOOD, "user_constraints": "  "})), "empty or non-text field(s): user_constraints"),
        (answer(json.dumps({**GOOD, "key_findings": ["a"]})), "empty or non-text field(s): key_findings"),
        (answer("```json\n" + json.dumps(GOOD) + "\n```"), "the answer is not exactly one JSON object"),
        (answer(json.dumps(GOOD) + json.dumps(GOOD)), "the answer is not exactly one JSON object"),
        (answer("[1, 2]"), "the answer is not a JSON object"),
        (answer(json.dumps(GOOD), calls=True), "the answer contains tool calls"),
        (answer(json.dumps(GOOD), stop="length"), "stop reason is 'length', not 'stop'"),
        # the first current_goal would be silently dropped by a plain json.loads
        (answer(json.dumps(GOOD)[:-1] + ', "current_goal": "other"}'), "duplicate field(s): current_goal"),
    ],
)
def test_anything_else_is_rejected(message: dict[str, Any], reason: str) -> None:
    verdict = validate_summary_answer(message)
    assert not verdict.accepted and verdict.reason == reason


def big_session(host: FakeHost) -> list[dict[str, Any]]:
    host.add(user_message("Build the parser in src/parse.py"))
    for i in range(6):
        call = usage_assistant("", total=100)
        call["content"] = [{"type": "toolCall", "id": f"c{i}", "name": "read", "arguments": {"path": f"src/f{i}.py"}}]
        call["stopReason"] = "toolUse"
        host.add(call)
        host.add({"role": "toolResult", "toolCallId": f"c{i}", "toolName": "read",
                  "content": [{"type": "text", "text": f"{i}" * 14_000}], "isError": False, "timestamp": 1})
    host.add(user_message("now continue " + "p" * 12_000))
    return list(host.session_manager.build_session_context().messages)


def pipeline_host(tmp_path: Path, turns: list[dict[str, Any]], threshold: int = 50_000) -> FakeHost:
    settings = {"context": {"strategy": "pipeline", "pipeline": {"summaryThresholdBytes": threshold}}}
    return FakeHost(tmp_path, turns, settings=settings)


async def test_at_the_threshold_no_summary_above_it_one(tmp_path: Path) -> None:
    probe = pipeline_host(tmp_path, [])
    messages = big_session(probe)
    prepared = await probe.runner.prepare_request_messages(messages)
    size = sum(message_bytes(m) for m in prepared)
    assert size > 50_000 and probe.provider.requests  # over the default threshold: a summary was asked for
    at = pipeline_host(tmp_path, [], threshold=size)
    unchanged = await at.runner.prepare_request_messages(big_session(at))
    assert at.provider.requests == [] and sum(message_bytes(m) for m in unchanged) == size


async def test_accepted_summary_is_recorded_and_shrinks_the_request(tmp_path: Path) -> None:
    host = pipeline_host(tmp_path, [{"text": json.dumps(GOOD)}])
    messages = big_session(host)
    before = sum(message_bytes(m) for m in (await _reduced_only(tmp_path)))
    out = await host.runner.prepare_request_messages(messages)
    request = host.provider.requests[0]
    assert request.system_prompt == PIPELINE_SUMMARY_SYSTEM_PROMPT and request.tools == []
    prompt = text_of(request.messages[0]["content"])
    assert prompt.startswith("<conversation>\n[User]: Build the parser") and prompt.endswith(PIPELINE_SUMMARY_INSTRUCTIONS)
    entry = host.session_manager.get_branch()[-1]
    assert entry["type"] == "compaction" and '"current_goal": "value of current_goal"' in entry["summary"]
    assert out[0]["role"] == "compactionSummary"
    assert sum(message_bytes(m) for m in out) < before
    assert tool_pairing_problems(out) == []
    summary_events = [e for e in host.events if e.get("step") == "summary"]
    assert summary_events and summary_events[0]["bytesAfter"] < summary_events[0]["bytesBefore"]
    assert host.agent.messages[0]["role"] == "compactionSummary"


async def _reduced_only(tmp_path: Path) -> list[dict[str, Any]]:
    host = pipeline_host(tmp_path, [], threshold=10**9)
    return await host.runner.prepare_request_messages(big_session(host))


async def test_rejected_summary_leaves_the_request_and_history_alone(tmp_path: Path) -> None:
    host = pipeline_host(tmp_path, [{"text": json.dumps({**GOOD, "bonus": "x"})}])
    messages = big_session(host)
    out = await host.runner.prepare_request_messages(messages)
    assert out == RequestPreparer(PipelineConfig()).prepare(messages).messages
    assert all(e["type"] != "compaction" for e in host.session_manager.get_entries())
    rejected = [e for e in host.events if e.get("step") == "summary_rejected"]
    assert rejected[0]["detail"] == "summary rejected: unexpected field(s): bonus"
    assert host.runner.state.pipeline.failures == 1
    assert host.runner.consecutive_failures == 0  # pi-style recovery keeps its own breaker
    await host.runner.prepare_request_messages(messages)  # same history: not asked again
    assert len(host.provider.requests) == 1
