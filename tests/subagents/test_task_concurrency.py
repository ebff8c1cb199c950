"""Several ``task`` calls at once over real HTTP (the fake OpenAI-compatible server): they
overlap, and an abort stops every child and records it in both sessions."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path
from typing import Any

from pi_tui.providers.openai_http import OpenAIHttpProvider
from pi_tui.testing.fake_server import FakeServer
from tests.session.conftest import MODEL
from tests.subagents.conftest import SUBAGENT, read_jsonl

TWO_TASKS = {"when": {"last_user_contains": "PARENT"}, "tool_calls": [
    {"id": "ta", "name": "task", "arguments": {"description": "slow one", "prompt": "CHILD-SLOW: think"}},
    {"id": "tb", "name": "task", "arguments": {"description": "fast one", "prompt": "CHILD-FAST: answer"}},
]}


def _wire(make_parent: Any, server: FakeServer, **kwargs: Any) -> Any:
    model = replace(MODEL, base_url=server.base_url, api="openai-completions")
    return make_parent(OpenAIHttpProvider(), model=model, api_key="test-key", **kwargs)  # type: ignore[arg-type]


async def test_two_tasks_in_one_message_run_at_the_same_time(make_parent, project: Path) -> None:
    script = [
        TWO_TASKS,
        {"when": {"last_user_contains": "CHILD-SLOW"}, "delay_ms": 1500, "text": "slow answer"},
        {"when": {"last_user_contains": "CHILD-FAST"}, "text": "fast answer"},
        {"when": {"last_user_contains": "PARENT"}, "text": "both done"},
    ]
    with FakeServer({"turns": script}) as server:
        session, _, _events = _wire(make_parent, server)
        seen: list[tuple[str, str, int]] = []
        session.subscribe(lambda e: seen.append((e["type"], e.get("toolCallId", ""), len(server.requests)))
                          if e["type"] in ("subagent_start", "subagent_end") else None)
        await session.prompt("PARENT: two things")
        bodies = list(server.requests)
    ends = [call for kind, call, _ in seen if kind == "subagent_end"]
    assert ends == ["tb", "ta"]  # the fast child finished while the slow one was still waiting
    fast_end = next(count for kind, call, count in seen if kind == "subagent_end" and call == "tb")
    assert fast_end >= 3  # parent + both children's requests had all arrived by then
    children = [b for b in bodies if SUBAGENT in b["messages"][0]["content"]]
    assert len(children) == 2 and all("PARENT" not in str(b["messages"]) for b in children)
    results = {m["toolCallId"]: m for m in session.messages if m.get("role") == "toolResult"}
    assert results["ta"]["content"][0]["text"] == "slow answer"
    assert results["tb"]["content"][0]["text"] == "fast answer"
    assert "slow answer" in str(bodies[-1]["messages"]) and "fast answer" in str(bodies[-1]["messages"])


async def test_concurrency_limit_makes_the_second_task_wait(make_parent) -> None:
    script = [
        TWO_TASKS,
        {"when": {"last_user_contains": "CHILD-SLOW"}, "delay_ms": 800, "text": "slow answer"},
        {"when": {"last_user_contains": "CHILD-FAST"}, "text": "fast answer"},
        {"when": {"last_user_contains": "PARENT"}, "text": "both done"},
    ]
    with FakeServer({"turns": script}) as server:
        session, _, events = _wire(make_parent, server, settings={"subagents": {"maxConcurrent": 1}})
        await session.prompt("PARENT: two things")
    ends = [e["toolCallId"] for e in events if e["type"] == "subagent_end"]
    assert ends == ["ta", "tb"]


async def test_abort_mid_child_stops_both_and_records_them_aborted(make_parent) -> None:
    script = [
        TWO_TASKS,
        {"when": {"last_user_contains": "CHILD-SLOW"}, "delay_ms": 30_000, "text": "never"},
        {"when": {"last_user_contains": "CHILD-FAST"}, "delay_ms": 30_000, "text": "never"},
    ]
    with FakeServer({"turns": script}) as server:
        session, _, events = _wire(make_parent, server)
        run = asyncio.ensure_future(session.prompt("PARENT: two things"))
        for _ in range(200):
            if len(server.requests) >= 3:
                break
            await asyncio.sleep(0.02)
        assert len(server.requests) == 3
        loop = asyncio.get_running_loop()
        started = loop.time()
        await session.abort()
        await asyncio.wait_for(run, 10)
        assert loop.time() - started < 5
    results = [m for m in session.messages if m.get("role") == "toolResult"]
    assert [r["details"]["status"] for r in results] == ["aborted", "aborted"]
    assert all(r["isError"] and "Task aborted" in r["content"][0]["text"] for r in results)
    for result in results:
        entries = read_jsonl(Path(result["details"]["childSession"]))
        last = [e["message"] for e in entries if e["type"] == "message"][-1]
        assert last["role"] == "assistant" and last["stopReason"] == "aborted"
    assert [e["status"] for e in events if e["type"] == "subagent_end"] == ["aborted", "aborted"]
    assert not session.is_streaming
