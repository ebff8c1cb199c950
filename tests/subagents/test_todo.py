"""The ``todo`` tool through the real loop: stored as custom entries, each tree node sees the
list as it was there, resume, compaction, JSON mode and RPC ``get_state``."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from pi_tui.core.provider import ModelInfo
from pi_tui.core.session.manager import SessionManager
from pi_tui.modes.json_mode import attach_json_output
from pi_tui.modes.rpc.views import state_json
from pi_tui.resources.settings import SettingsManager
from pi_tui.subagents.todo import TODO_ENTRY_TYPE
from pi_tui.subagents.todo_tracker import REMINDER_TYPE
from tests.subagents.conftest import read_jsonl

FIRST = [{"content": "Read the code", "status": "in_progress"}, {"content": "Write tests", "status": "pending"}]
SECOND = [{"content": "Read the code", "status": "completed"}, {"content": "Write tests", "status": "in_progress"}]


def todo_turn(todos: Any, call_id: str, when: str) -> dict[str, Any]:
    return {"when": {"last_user_contains": when},
            "tool_calls": [{"id": call_id, "name": "todo", "arguments": {"todos": todos}}]}


async def _two_lists(make_parent: Any, **kwargs: Any) -> Any:
    session, provider, events = make_parent([
        todo_turn(FIRST, "c1", "one"), {"when": {"last_user_contains": "one"}, "text": "started"},
        todo_turn(SECOND, "c2", "two"), {"when": {"last_user_contains": "two"}, "text": "moved on"},
    ], **kwargs)
    await session.prompt("step one")
    await session.prompt("step two")
    return session, provider, events


async def test_each_call_is_a_custom_entry_before_its_result_and_an_event(make_parent) -> None:
    session, provider, events = await _two_lists(make_parent)
    assert session.todos.current() == SECOND
    entries = read_jsonl(session.session_manager.session_file)
    kinds = [(e["type"], e.get("customType") or e.get("message", {}).get("role")) for e in entries[3:]]
    assert kinds[:4] == [("message", "user"), ("message", "assistant"), ("custom", TODO_ENTRY_TYPE),
                         ("message", "toolResult")]
    todo_entries = [e for e in entries if e.get("customType") == TODO_ENTRY_TYPE]
    assert [e["data"]["todos"] for e in todo_entries] == [FIRST, SECOND]
    assert [e["todos"] for e in events if e["type"] == "todo_update"] == [FIRST, SECOND]
    result = next(m for m in session.messages if m.get("role") == "toolResult")
    assert result["content"][0]["text"] == "Todo list updated: 0/2 completed; in progress: Read the code."
    # custom entries are outside the projection: the model sees the call and its result only
    assert TODO_ENTRY_TYPE not in json.dumps(provider.requests[-1].messages)


async def test_bad_lists_are_error_results_and_leave_the_list_alone(make_parent) -> None:
    two_active = [{"content": "a", "status": "in_progress"}, {"content": "b", "status": "in_progress"}]
    session, _, events = make_parent([
        todo_turn(FIRST, "c1", "go"),
        todo_turn(two_active, "c2", "go"),
        todo_turn([{"content": "x", "status": "done"}], "c3", "go"),
        todo_turn("not a list", "c4", "go"),
        {"when": {"last_user_contains": "go"}, "text": "ok"},
    ])
    await session.prompt("go")
    results = [m for m in session.messages if m.get("role") == "toolResult"]
    assert [r["isError"] for r in results] == [False, True, True, True]
    texts = [r["content"][0]["text"] for r in results[1:]]
    assert "only one item may be in_progress at a time, items 1, 2 are" in texts[0]
    assert "item 1 ('x'): 'status' must be one of pending, in_progress, completed, got 'done'" in texts[1]
    assert "todos" in texts[2]
    assert session.todos.current() == FIRST
    assert len([e for e in events if e["type"] == "todo_update"]) == 1


async def test_the_list_survives_resume(make_parent, project: Path) -> None:
    session, _, _ = await _two_lists(make_parent)
    path = session.session_manager.session_file
    session.session_manager.close()
    reopened, _, _ = make_parent([], session_manager=SessionManager.open(path, cwd=project))
    assert reopened.todos.current() == SECOND
    assert state_json(reopened)["todos"] == SECOND


async def test_each_tree_node_sees_the_list_as_it_was_there(make_parent) -> None:
    session, _, events = await _two_lists(make_parent)
    entries = session.session_manager.get_entries()
    first_answer = next(e for e in entries if e.get("type") == "message"
                        and e["message"].get("role") == "assistant" and e["message"]["content"][0].get("text") == "started")
    await session.navigate_tree(first_answer["id"])
    assert session.todos.current() == FIRST
    session.todos.announce()
    assert events[-1] == {"type": "todo_update", "todos": FIRST}
    root_user = next(e for e in entries if e.get("type") == "message")
    await session.navigate_tree(root_user["id"])
    assert session.todos.current() == []


async def test_after_a_compaction_the_list_is_given_back_at_the_end(make_parent) -> None:
    small = ModelInfo(provider="fake", id="fake-model", context_window=8192, max_tokens=1000)
    settings = SettingsManager.in_memory({"compaction": {"reserveTokens": 2000, "keepRecentTokens": 1000}})
    session, provider, _ = make_parent([
        todo_turn(FIRST, "c1", "one"),
        {"when": {"last_user_contains": "one"}, "text": "started", "usage": {"prompt_tokens": 1500, "completion_tokens": 5}},
        {"when": {"last_user_contains": "two"}, "text": "more", "usage": {"prompt_tokens": 3000, "completion_tokens": 5}},
        {"when": {"system_contains": "summarize conversations"}, "text": "## Goal\nSUMMARY"},
        {"when": {"last_user_contains": "three"}, "text": "after"},
    ], model=small, settings=settings)
    await session.prompt("one " + "o" * 6000)
    await session.prompt("two " + "t" * 6000)
    await session.compact()
    entries = read_jsonl(session.session_manager.session_file)
    compaction = max(i for i, e in enumerate(entries) if e["type"] == "compaction")
    reminder = entries[compaction + 1]
    assert reminder["type"] == "custom_message" and reminder["customType"] == REMINDER_TYPE
    assert reminder["display"] is False and "[>] Read the code\n[ ] Write tests" in reminder["content"]
    await session.prompt("three")
    request = provider.requests[-1]
    texts = [json.dumps(m["content"]) for m in request.messages]
    assert "SUMMARY" in texts[0]  # the summary itself is untouched: the list is not in it
    assert "Read the code" not in texts[0]
    assert "[>] Read the code" in texts[-2] and "three" in texts[-1]


async def test_json_mode_prints_each_change(make_parent) -> None:
    session, _, _ = make_parent([todo_turn(FIRST, "c1", "go"), {"when": {"last_user_contains": "go"}, "text": "ok"}])
    out = io.StringIO()
    attach_json_output(session, out)
    await session.prompt("go")
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert {"type": "todo_update", "todos": FIRST} in lines
