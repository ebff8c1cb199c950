"""Broken streams through a real session (the SDK, in-process): every fault × wire × where the cut
lands. A stream that did not finish is an error, never an answer: the run ends with
``stopReason: "error"`` and an ``errorMessage`` naming what happened and where; no tool of the
broken reply runs (not even a command whose truncated text would parse); the session file holds
the failed replies as errors and nothing that looks like an answer; transient faults are retried
per the retry settings (1 retry here), and a good reply after a broken one is taken.

Print mode, as a real subprocess, is ``test_broken_streams_print.py``.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from pi_tui.sdk import create_agent_session
from pi_tui.testing.scripted import ScriptedProvider
from tests.reliability.broken_streams import (
    ANTHROPIC_ENDED,
    COMMANDS,
    CUT,
    FINAL_TURN,
    FIRST_OUTPUT,
    MARKERS,
    NOT_RUN,
    WIRES,
    Fault,
    answer_turn,
    assert_no_answer_and_nothing_ran,
    expected_place,
    fake_for,
    session_messages,
    stream_faults,
    write_agent_dir,
)
from tests.reliability.record import FaultRecord

FAULT_CLASS = "broken streams"

CASES = [pytest.param(wire, broken, id=f"sdk-{wire}-{broken.name}")
         for wire in (*WIRES, "scripted") for broken in stream_faults(wire)]


async def _run(wire: str, turns: list[dict[str, Any]], project: Path, agent: Path,
               monkeypatch: pytest.MonkeyPatch) -> tuple[Any, list[Any]]:
    """One prompt through a real session on the wire; returns the session and the requests."""
    if wire.endswith("litellm"):
        monkeypatch.setenv("PI_TUI_FORCE_LITELLM", "1")
    if wire == "scripted":
        ref = write_agent_dir(agent, "openai", "http://127.0.0.1:9/v1")
        provider = ScriptedProvider(copy.deepcopy(turns))
        session = create_agent_session(cwd=project, agent_dir=agent, model=ref, provider=provider,
                                       thinking_level="medium", load_extensions=False)
        await session.prompt("run both commands")
        return session, provider.requests
    with fake_for(wire, copy.deepcopy(turns)) as server:
        ref = write_agent_dir(agent, wire, server.base_url)
        session = create_agent_session(cwd=project, agent_dir=agent, model=ref, thinking_level="medium",
                                       load_extensions=False)
        await session.prompt("run both commands")
        return session, server.requests


@pytest.mark.parametrize(("wire", "broken"), CASES)
async def test_a_broken_stream_ends_the_run_in_an_error_and_runs_nothing(
    wire: str, broken: Fault, project: Path, agent_dir: Path, monkeypatch: pytest.MonkeyPatch, fault: FaultRecord,
) -> None:
    turn = answer_turn(fault=broken.fault)
    with fault.case(f"SDK session, {wire} wire, {broken.name}") as case:
        session, requests = await _run(wire, [turn, copy.deepcopy(turn)], project, agent_dir, monkeypatch)
        messages = session_messages(session.session_manager.session_file)
        case.kept(messages[0]["content"] == [{"type": "text", "text": "run both commands"}], "the prompt in the session file")
        final = session.messages[-1]
        assert final["role"] == "assistant" and final["stopReason"] == "error"
        assert final["errorMessage"].startswith(broken.cause), final["errorMessage"]
        assert expected_place(wire, broken.where) in final["errorMessage"], final["errorMessage"]
        assert "\n" not in final["errorMessage"] and "<body" not in final["errorMessage"]
        if any(b["type"] == "toolCall" for b in final["content"]) and broken.cause == CUT and wire != "anthropic":
            assert NOT_RUN in final["errorMessage"]
        assert len(requests) == (2 if broken.retried else 1)  # one retry (retry.maxRetries: 1), or none
        assert_no_answer_and_nothing_ran(messages, project)


@pytest.mark.parametrize("wire", [*WIRES, "scripted"])
@pytest.mark.parametrize("at", ["tool_args", "between_tool_calls"])
async def test_after_a_cut_the_retry_answer_is_taken_and_each_command_runs_once_whole(
    wire: str, at: str, project: Path, agent_dir: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    turns = [answer_turn(fault={"kind": "cut", "at": at, "style": "clean"}), answer_turn(), FINAL_TURN]
    session, requests = await _run(wire, turns, project, agent_dir, monkeypatch)
    assert [(b["type"], b["text"]) for b in session.messages[-1]["content"]] == [("text", "Both commands ran.")]
    assert all((project / name).exists() for name in MARKERS)
    messages = session_messages(session.session_manager.session_file)
    replies = [m for m in messages if m["role"] == "assistant"]
    assert [r["stopReason"] for r in replies] == ["error", "toolUse", "stop"]
    assert replies[0]["errorMessage"].startswith(ANTHROPIC_ENDED if wire == "anthropic" else CUT)
    results = [m for m in messages if m["role"] == "toolResult"]
    assert [r["toolCallId"].split("|")[0] for r in results] == ["call_first", "call_second"]  # Responses: call_id|item id
    assert results[0]["content"][0]["text"] == FIRST_OUTPUT + "\n"
    calls = [b for b in replies[1]["content"] if b["type"] == "toolCall"]
    assert [c["arguments"]["command"] for c in calls] == list(COMMANDS)
    assert len(requests) == 3
    # the retried request does not carry the broken reply (pi drops errored replies on replay)
    assert "I will run both commands now." not in str(requests[1])
