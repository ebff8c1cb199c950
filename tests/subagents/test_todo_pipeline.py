"""The todo list is given back to the model after the **pipeline** strategy's JSON summary too
(issue 23: "after a compaction the current list is given back"): that summary is made while a
model call is being prepared, inside a run, and recorded as a compaction entry — the reminder
must follow that entry in the file and be in the very request the summary shrank, at its end
(never inside the summary, so the cached prefix stays the same)."""

from __future__ import annotations

import json
from typing import Any

from pi_tui.core.context.pipeline_summary import SUMMARY_FIELDS
from pi_tui.resources.settings import SettingsManager
from pi_tui.subagents.todo_tracker import REMINDER_TYPE
from tests.subagents.conftest import read_jsonl
from tests.subagents.test_todo import FIRST, todo_turn

CONDENSE = {"system_contains": "condense the history"}
GOOD_JSON = json.dumps({field: f"value of {field}" for field in SUMMARY_FIELDS})


async def test_the_list_follows_a_pipeline_summary(make_parent: Any) -> None:
    settings = SettingsManager.in_memory({"context": {"strategy": "pipeline", "pipeline": {"summaryThresholdBytes": 8_000}}})
    turns: list[dict[str, Any]] = [{"text": GOOD_JSON, "when": CONDENSE}, todo_turn(FIRST, "c1", "plan")]
    turns += [{"text": f"answer {n} " + "a" * 1500, "when": {"has_tools": True}} for n in range(6)]
    session, provider, events = make_parent(turns, settings=settings)
    await session.prompt("plan the work")
    for n in range(1, 4):
        await session.prompt(f"prompt {n} " + "p" * 2500)
    assert [e for e in events if e.get("step") == "summary"], "no pipeline summary was made"

    entries = read_jsonl(session.session_manager.session_file)
    compactions = [i for i, e in enumerate(entries) if e["type"] == "compaction"]
    assert len(compactions) == 1
    reminder = entries[compactions[0] + 1]
    assert reminder["type"] == "custom_message" and reminder["customType"] == REMINDER_TYPE
    assert reminder["display"] is False and "[>] Read the code\n[ ] Write tests" in reminder["content"]
    assert reminder["parentId"] == entries[compactions[0]]["id"]

    agent_requests = [r for r in provider.requests if r.tools]
    summarized = [r for r in agent_requests if "value of current_goal" in json.dumps(r.messages)]
    assert summarized, "no request carried the summary"
    first = summarized[0]  # the request the summary was made for
    texts = [json.dumps(m["content"]) for m in first.messages]
    assert "value of current_goal" in texts[0] and "Read the code" not in texts[0]  # the summary is untouched
    assert "[>] Read the code" in texts[-1]  # at the end of that very request
    assert all(texts.count(t) == 1 for t in texts if "[>] Read the code" in t)  # once
    later = summarized[-1]
    assert sum("[>] Read the code" in json.dumps(m["content"]) for m in later.messages) == 1
