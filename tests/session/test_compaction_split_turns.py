"""Issue 19 items 1 and 3: a split turn after a compaction, and what "the summary grew" means.

A real SessionManager, the CompactionRunner and the ScriptedProvider (``compaction_host``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pi_tui.core.messages import text_of, user_message
from tests.session.compaction_host import FakeHost, summary_turn, usage_assistant

PREFIX_PROMPT = {"last_user_contains": "PREFIX of a single turn"}


def tool_call(call_id: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    call = usage_assistant("", total=300)
    call["content"] = [{"type": "toolCall", "id": call_id, "name": name, "arguments": args}]
    call["stopReason"] = "toolUse"
    return call


def tool_result(call_id: str, name: str, text: str) -> dict[str, Any]:
    return {"role": "toolResult", "toolCallId": call_id, "toolName": name,
            "content": [{"type": "text", "text": text}], "isError": False, "timestamp": 1}


def compactions(host: FakeHost) -> list[dict[str, Any]]:
    return [e for e in host.session_manager.get_branch() if e["type"] == "compaction"]


def sent_prompts(host: FakeHost) -> list[str]:
    return [text_of(r.messages[0]["content"]) for r in host.provider.requests]


# --------------------------------------------------------------------------- item 1


def two_summaries() -> list[dict[str, Any]]:
    return [summary_turn("## Goal\nSUMMARY-ONE: the user wants the parser fixed (src/parse.py)"),
            {**summary_turn("## Original Request\nPREFIX-TWO"), "when": PREFIX_PROMPT}]


async def compact_at_turn_start(host: FakeHost) -> None:
    """Two earlier questions, then a turn whose user message compaction #1 keeps from."""
    for i in range(2):
        host.add(user_message(f"question {i} " + "q" * 3000))
        host.add(usage_assistant(f"answer {i}", total=1000 * (i + 1)))
    turn_start = host.add(user_message("fix the parser " + "t" * 4000))
    first = await host.runner.compact()
    assert first.first_kept_entry_id == turn_start


async def test_a_second_compaction_inside_the_same_turn_keeps_the_previous_summary(tmp_path: Path) -> None:
    """Compaction #1 keeps from the user message of the running turn; the turn goes on (tools,
    an overflow retry) and compaction #2 cuts inside that turn at the same start: its history
    part is empty. The first summary must still reach the second one, or it is in no request and
    in no summary (pi 0.73.1 writes "No prior history." there)."""
    host = FakeHost(tmp_path, two_summaries())
    await compact_at_turn_start(host)

    host.add(tool_call("c1", "read", {"path": "src/parse.py"}))
    host.add(tool_result("c1", "read", "r" * 6000))
    host.add(tool_call("c2", "read", {"path": "src/lex.py"}))
    host.add(tool_result("c2", "read", "l" * 6000))
    host.add(usage_assistant("almost there", total=5000))
    second = await host.runner.compact()

    assert len(compactions(host)) == 2
    assert "SUMMARY-ONE: the user wants the parser fixed (src/parse.py)" in second.summary
    assert "No prior history." not in second.summary
    assert "**Turn Context (split turn):**\n\n## Original Request\nPREFIX-TWO" in second.summary
    # the file lists are not repeated: one block, cumulative
    assert second.summary.count("<read-files>") == 1
    assert second.summary.endswith("<read-files>\nsrc/lex.py\nsrc/parse.py\n</read-files>")
    # what the model sees next: summary #2 (with #1 in it), then the kept suffix of the turn
    seen = host.session_manager.build_session_context().messages
    assert seen[0]["role"] == "compactionSummary" and "SUMMARY-ONE" in seen[0]["summary"]


async def test_an_automatic_compaction_in_the_same_turn_keeps_the_previous_summary(tmp_path: Path) -> None:
    """The same through the threshold trigger (the way it happens in a long tool loop)."""
    host = FakeHost(tmp_path, two_summaries())
    await compact_at_turn_start(host)
    for n in range(3):
        host.add(tool_call(f"c{n}", "read", {"path": f"f{n}.py"}))
        host.add(tool_result(f"c{n}", "read", "r" * 6000))
    last = usage_assistant("still going", total=18_500)  # above 20,000 − 2,000
    last["timestamp"] += 10  # after the first compaction's entry
    host.add(last)
    await host.runner.check_after_run(last)
    end = host.events_of("compaction_end")[-1]
    assert end["reason"] == "threshold" and end["result"] is not None, end
    assert "SUMMARY-ONE" in compactions(host)[-1]["summary"]


# --------------------------------------------------------------------------- item 3


async def test_a_turn_prefix_summary_longer_than_the_prefix_does_not_fail_a_shrinking_compaction(tmp_path: Path) -> None:
    """The prefix of the split turn is one short user message; the kept suffix starts at a big
    ``write`` call. The prefix's summary is longer than the prefix (a summary has headings), but
    the compaction replaces ~9,000 characters of history with ~200: the context shrinks, so the
    automatic compaction succeeds. It used to fail on the part ("longer than what it
    summarizes"), which made overflow recovery fail and counted for the breaker."""
    prefix_summary = "## Original Request\nWrite the generator.\n\n## Early Progress\n- (none)\n\n## Context for Suffix\n- (none)"
    host = FakeHost(tmp_path, [
        {**summary_turn(prefix_summary), "when": PREFIX_PROMPT},
        summary_turn("## Goal\nHISTORY of the earlier questions"),
    ])
    for i in range(3):
        host.add(user_message(f"question {i} " + "q" * 3000))
        host.add(usage_assistant(f"answer {i}", total=1000 * (i + 1)))
    host.add(user_message("write the generator"))
    host.add(tool_call("w1", "write", {"path": "gen.py", "content": "x = 1\n" * 1000}))
    host.add(tool_result("w1", "write", "Successfully wrote 6000 bytes to gen.py"))
    last = usage_assistant("written", total=18_500)
    host.add(last)
    await host.runner.check_after_run(last)
    end = host.events_of("compaction_end")[-1]
    assert end["result"] is not None, end.get("errorMessage")
    assert len(prefix_summary) > len("[User]: write the generator")
    summary = compactions(host)[-1]["summary"]
    assert summary.startswith("## Goal\nHISTORY") and prefix_summary in summary
    assert not host.runner.consecutive_failures

