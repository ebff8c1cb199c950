"""AgentSession: persistence, events, model/thinking changes, queues, prompt expansion."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from pi_tui.core.errors import AgentBusyError
from pi_tui.core.session.manager import SessionManager
from pi_tui.sdk import create_agent_session
from pi_tui.testing.scripted import ScriptedProvider
from tests.session.conftest import MODEL, entries_of


async def test_tool_round_trip_is_persisted_as_a_chain(make_session, project: Path) -> None:
    (project / "note.txt").write_text("hello file\n")
    session, provider, events = make_session([
        {"tool_calls": [{"id": "r1", "name": "read", "arguments": {"path": "note.txt"}, "chunks": 3}]},
        {"text": "It says hello."},
    ])
    await session.prompt("read note.txt")
    entries = entries_of(session)
    assert [e["type"] for e in entries] == [
        "session", "model_change", "thinking_level_change", "message", "message", "message", "message",
    ]
    assert entries[1]["provider"] == "fake" and entries[1]["modelId"] == "fake-model"
    assert entries[2]["thinkingLevel"] == "medium"  # the settings default, for a reasoning model
    roles = [e["message"]["role"] for e in entries[3:]]
    assert roles == ["user", "assistant", "toolResult", "assistant"]
    for parent, child in itertools.pairwise(entries[1:]):
        assert child["parentId"] == parent["id"]
    assert entries[5]["message"]["content"][0]["text"].startswith("hello file")
    assert provider.requests[0].reasoning == "medium"
    assert provider.requests[0].session_id == session.session_manager.session_id
    types = [e["type"] for e in events if e["type"] != "message_update"]
    assert types[0] == "agent_start" and types[-1] == "agent_end"
    assert "tool_execution_start" in types


async def test_thinking_and_model_changes_are_persisted_only_when_they_change(make_session) -> None:
    session, _, events = make_session([{"text": "ok"}])
    await session.prompt("hi")
    session.set_thinking_level("medium")
    session.set_thinking_level("high")
    session.set_model(MODEL)
    kinds = [e["type"] for e in entries_of(session)][-2:]
    assert kinds == ["thinking_level_change", "model_change"]
    assert entries_of(session)[-2]["thinkingLevel"] == "high"
    assert {"type": "thinking_level_changed", "level": "high"} in events
    assert session.cycle_thinking_level() == "off"  # xhigh is not in this model's map: wrap around


async def test_existing_session_restores_messages_model_and_thinking(make_session, project: Path) -> None:
    session, _, _ = make_session([{"text": "first answer"}], thinking_level="low")
    await session.prompt("hi")
    path = session.session_manager.session_file
    count = len(entries_of(session))
    session.session_manager.close()
    provider = ScriptedProvider([{"text": "second"}])
    reopened = create_agent_session(cwd=project, provider=provider, load_extensions=False,
                                    session_manager=SessionManager.open(path, cwd=project), model=MODEL)
    assert reopened.thinking_level == "low"
    assert [m["role"] for m in reopened.messages] == ["user", "assistant"]
    await reopened.prompt("again")
    assert [m["role"] for m in provider.requests[0].messages] == ["user", "assistant", "user"]
    assert len(entries_of(reopened)) == count + 2  # nothing but the two new messages


async def test_prompt_while_streaming_needs_a_queue_choice(make_session) -> None:
    import asyncio

    session, _, events = make_session([
        {"text": "slow answer here", "chunk_size": 2, "chunk_delay_ms": 15},
        {"text": "steered", "when": {"last_user_contains": "also"}},
    ])
    run = asyncio.ensure_future(session.prompt("first"))
    await asyncio.sleep(0.03)
    with pytest.raises(AgentBusyError, match=r"Specify streamingBehavior \('steer' or 'followUp'\)"):
        await session.prompt("also this")
    await session.prompt("also this", streaming_behavior="followUp")
    assert session.state.follow_up == ["also this"]
    await run
    queue_events = [e for e in events if e["type"] == "queue_update"]
    assert queue_events[0] == {"type": "queue_update", "steering": [], "followUp": ["also this"]}
    assert queue_events[-1] == {"type": "queue_update", "steering": [], "followUp": []}
    assert session.messages[-1]["content"][0]["text"] == "steered"


async def test_templates_expand_and_system_prompt_is_rebuilt_from_disk(make_session, project: Path) -> None:
    prompts = project / ".pi" / "prompts"
    prompts.mkdir(parents=True)
    (prompts / "fix.md").write_text("Fix the bug in $1 carefully.")
    session, provider, _ = make_session([{"text": "a"}, {"text": "b"}])
    await session.prompt("/fix parser.py")
    assert provider.requests[0].messages[-1]["content"][0]["text"] == "Fix the bug in parser.py carefully."
    (project / "AGENTS.md").write_text("Always answer in haiku.")
    await session.prompt("next")
    assert "Always answer in haiku." not in provider.requests[0].system_prompt
    assert "Always answer in haiku." in provider.requests[1].system_prompt


async def test_custom_messages_become_custom_message_entries(make_session) -> None:
    session, _, _ = make_session([{"text": "ok"}])
    await session.prompt("hi")
    session.send_message({"customType": "note", "content": "remember this", "display": True})
    last = entries_of(session)[-1]
    assert last["type"] == "custom_message" and last["customType"] == "note"
    assert last["content"] == "remember this"


async def test_usage_and_cost_arithmetic(make_session) -> None:
    session, _, _ = make_session([
        {"text": "one", "usage": {"prompt_tokens": 1000, "completion_tokens": 200, "cached_tokens": 400}},
        {"text": "two", "usage": {"prompt_tokens": 2000, "completion_tokens": 100, "cached_tokens": 500,
                                  "cache_write_tokens": 100}},
    ])
    await session.prompt("a")
    await session.prompt("b")
    first, second = (m for m in session.messages if m["role"] == "assistant")
    assert first["usage"]["input"] == 600 and first["usage"]["cacheRead"] == 400
    assert first["usage"]["totalTokens"] == 1200
    assert second["usage"]["cacheRead"] == 400 and second["usage"]["cacheWrite"] == 100
    assert second["usage"]["input"] == 1500
    assert first["usage"]["cost"]["total"] == pytest.approx((600 * 3 + 200 * 15 + 400 * 0.3) / 1e6)
    totals = session.state.totals
    assert (totals.input, totals.output, totals.cache_read, totals.cache_write) == (2100, 300, 800, 100)
    assert totals.cost == pytest.approx(first["usage"]["cost"]["total"] + second["usage"]["cost"]["total"])
    usage = session.get_context_usage()
    assert usage is not None and usage.tokens == 2100 and usage.context_window == 200_000


async def test_user_bash_is_recorded_and_held_back_while_streaming(make_session) -> None:
    import asyncio

    session, provider, _ = make_session([
        {"text": "slow streaming answer", "chunk_size": 2, "chunk_delay_ms": 40},
        {"text": "saw it"},
    ])
    run = asyncio.ensure_future(session.prompt("first"))
    await asyncio.sleep(0.02)
    message = await session.run_user_bash("echo from-user")
    assert message["output"] == "from-user\n" and message["exitCode"] == 0
    assert all(m["role"] != "bashExecution" for m in session.messages)  # held back during the run
    await run
    await session.prompt("next")
    roles = [m["role"] for m in session.messages]
    assert roles == ["user", "assistant", "bashExecution", "user", "assistant"]
    sent = provider.requests[1].messages
    assert "echo from-user" in sent[2]["content"][0]["text"]
    stored = [e["message"]["role"] for e in entries_of(session) if e["type"] == "message"]
    assert stored == roles
