"""What a session and its subagents used, after the parent compacted: the footer sums every
entry of the session file as pi 0.73.1's footer does (``components/footer.js`` iterates
``sessionManager.getEntries()``), so the task's cost stays; ``get_session_stats`` and
``/session`` count the current context, as pi's ``getSessionStats`` (``state.messages``)."""

from __future__ import annotations

from pathlib import Path

from pi_tui.modes.interactive.session_view import footer_data
from pi_tui.modes.rpc.views import session_stats
from tests.subagents.conftest import read_jsonl

TURNS = [
    *[{"when": {"system_contains": "summarize conversations"}, "text": "## Goal\nPARENT-SUMMARY"}] * 2,
    {"when": {"last_user_contains": "PARENT-1"}, "tool_calls": [{"id": "t1", "name": "task", "arguments": {
        "description": "look", "prompt": "CHILD: look around"}}], "usage": {"prompt_tokens": 1000, "completion_tokens": 10}},
    {"when": {"last_user_contains": "CHILD"}, "text": "child answer " + "y" * 400,
     "usage": {"prompt_tokens": 700, "completion_tokens": 70}},
    {"when": {"last_user_contains": "PARENT-1"}, "text": "first answer " + "z" * 800,
     "usage": {"prompt_tokens": 1100, "completion_tokens": 11}},
    {"when": {"last_user_contains": "PARENT-2"}, "text": "second answer " + "w" * 800,
     "usage": {"prompt_tokens": 1300, "completion_tokens": 13}},
]


async def test_the_footer_keeps_the_childs_cost_after_the_parent_compacted(make_parent, project: Path) -> None:
    session, _, _ = make_parent(TURNS, settings={"compaction": {"keepRecentTokens": 50}},
                                session_dir=project.parent / "sessions")
    await session.prompt("PARENT-1: delegate")
    await session.prompt("PARENT-2: and then")
    before = footer_data(session, project).totals
    assert before["subagentTokens"] == 770
    await session.compact()
    assert not any(m.get("role") == "toolResult" for m in session.messages)  # the task left the context

    after = footer_data(session, project).totals
    assert after["subagentTokens"] == 770 and after["subagentCost"] == before["subagentCost"] > 0
    usages = [e["message"]["usage"] for e in read_jsonl(session.session_manager.session_file)
              if e["type"] == "message" and e["message"]["role"] == "assistant"]
    assert after["input"] == before["input"] == sum(u["input"] for u in usages) == 3400  # every parent turn
    assert after["cost"] == before["cost"]

    stats = session_stats(session)  # pi's getSessionStats: the context, whose only turn is the second answer
    assert stats["tokens"]["input"] == 1300 and "subagents" not in stats
