"""Compaction through AgentSession on the scripted provider: the exact requests the model gets."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from pi_tui.core.context.compaction_prompts import SUMMARIZATION_SYSTEM_PROMPT
from pi_tui.core.context.convert import convert_to_llm
from pi_tui.core.messages import text_of
from pi_tui.core.provider import ModelInfo
from pi_tui.core.session import SessionManager
from pi_tui.resources.settings import SettingsManager

SMALL = ModelInfo(provider="fake", id="fake-model", context_window=8192, max_tokens=1000)
SETTINGS = {"compaction": {"reserveTokens": 2000, "keepRecentTokens": 1000}}
SUMMARY_WRAPPER = "The conversation history before this point was compacted into the following summary:\n\n<summary>\n"


def summary(text: str = "## Goal\nSUMMARY") -> dict[str, Any]:
    return {"text": text, "when": {"system_contains": "summarize conversations"}}


# For each of pi's own files: the last compaction, and the ids of the messages pi kept after it
# (read off the files: from firstKeptEntryId to the compaction entry, then everything newer).
PI_FIXTURES = [
    ("v3-compact-manual.jsonl", "e0978ebb",
     ["49cf868a", "b6845fcf", "7f73ed6c", "d856995f", "473c2e6b", "69f3e69e", "fa9f10a7", "98014f97",
      "e948c599", "fd9ceca3"]),
    ("v3-compact-threshold.jsonl", "ce30c867", ["ec9c86d4", "6e4ea2ad", "46a6079e", "d9e7ff07", "36246a66"]),
    ("v3-compact-overflow.jsonl", "52c2773b",
     ["4fb410cd", "2a0f6de9", "7f7b67bd", "ca1d18a3", "8613ea51", "c333dd1c", "ff2412f3", "e269049d", "471d5b5d"]),
]


@pytest.mark.parametrize(("name", "compaction_id", "kept"), PI_FIXTURES)
async def test_loading_pi_fixture_and_prompting_sends_what_pi_sent(
    make_session: Any, project: Path, pi_fixtures: Path, name: str, compaction_id: str, kept: list[str]
) -> None:
    source = pi_fixtures / name
    path = project / "copy.jsonl"
    shutil.copy(source, path)
    manager = SessionManager.open(path, cwd=project)
    session, provider, _ = make_session([{"text": "one more answer"}], session_manager=manager, model=SMALL)
    await session.prompt("One more prompt")
    request = provider.requests[0]
    entries = [json.loads(line) for line in source.read_text().splitlines()[1:]]
    by_id = {e["id"]: e for e in entries}
    compaction = by_id[compaction_id]
    assert text_of(request.messages[0]["content"]) == SUMMARY_WRAPPER + compaction["summary"] + "\n</summary>"
    assert request.messages[1:-1] == convert_to_llm([by_id[i]["message"] for i in kept])
    assert text_of(request.messages[-1]["content"]) == "One more prompt"


async def test_overflow_compacts_and_retries_without_the_failed_answer(make_session: Any) -> None:
    turns = [
        {"text": "first answer", "usage": {"prompt_tokens": 1500, "completion_tokens": 10}},
        {"text": "middle answer", "usage": {"prompt_tokens": 3000, "completion_tokens": 10}},
        {"error": {"status": 400, "code": "context_length_exceeded"}, "when": {"last_user_contains": "second"}},
        summary("## Goal\nOVERFLOW-SUMMARY"),
        {"text": "recovered", "usage": {"prompt_tokens": 900, "completion_tokens": 10}},
    ]
    session, provider, events = make_session(turns, model=SMALL, settings=SettingsManager.in_memory(SETTINGS))
    await session.prompt("first " + "f" * 6000)
    await session.prompt("middle " + "m" * 6000)
    await session.prompt("second question")
    kinds = [e["type"] for e in events if e["type"].startswith("compaction")]
    assert kinds == ["compaction_start", "compaction_end"]
    end = next(e for e in events if e["type"] == "compaction_end")
    assert end["reason"] == "overflow" and end["willRetry"] is True and end["result"] is not None
    summarizer, retry = provider.requests[3], provider.requests[4]
    assert summarizer.system_prompt == SUMMARIZATION_SYSTEM_PROMPT and summarizer.max_tokens == 1600
    assert text_of(summarizer.messages[0]["content"]).startswith("<conversation>\n[User]: first ")
    assert text_of(retry.messages[0]["content"]).startswith(SUMMARY_WRAPPER + "## Goal\nOVERFLOW-SUMMARY")
    # kept: the middle turn and the new prompt; the failed answer is not replayed
    assert [m["role"] for m in retry.messages[1:]] == ["user", "assistant", "user"]
    assert text_of(retry.messages[-1]["content"]) == "second question"
    assert session.agent.messages[-1]["content"][0]["text"] == "recovered"


async def test_threshold_compaction_after_a_run_then_the_next_request(make_session: Any) -> None:
    turns = [
        {"text": "answer one", "usage": {"prompt_tokens": 1000, "completion_tokens": 10}},
        {"text": "answer two", "usage": {"prompt_tokens": 6500, "completion_tokens": 10}},  # > 8192 − 2000
        summary("## Goal\nTHRESHOLD-SUMMARY"),
        {"text": "answer three"},
    ]
    session, provider, events = make_session(turns, model=SMALL, settings=SettingsManager.in_memory(SETTINGS))
    await session.prompt("one " + "o" * 6000)
    await session.prompt("two " + "t" * 6000)
    end = next(e for e in events if e["type"] == "compaction_end")
    assert end["reason"] == "threshold" and end["willRetry"] is False
    await session.prompt("three")
    last = provider.requests[-1]
    assert text_of(last.messages[0]["content"]).startswith(SUMMARY_WRAPPER + "## Goal\nTHRESHOLD-SUMMARY")
    assert [text_of(m["content"])[:3] for m in last.messages[1:] if m["role"] == "user"] == ["two", "thr"]


async def test_pipeline_summary_between_model_calls(make_session: Any) -> None:
    settings = SettingsManager.in_memory({**SETTINGS, "context": {"strategy": "pipeline", "pipeline": {"summaryThresholdBytes": 6000}}})
    fields = {k: f"{k} text" for k in ("current_goal", "key_findings", "files_read_or_changed", "remaining_work", "user_constraints")}
    turns = [
        {"text": "one done"},
        {"text": json.dumps(fields), "when": {"system_contains": "condense the history"}},
        {"text": "two done"},
        {"text": "three done"},
    ]
    session, provider, events = make_session(turns, model=SMALL, settings=settings)
    await session.prompt("one " + "o" * 6000)
    await session.prompt("two " + "t" * 4000)
    summarizer, after = provider.requests[1], provider.requests[2]
    assert summarizer.tools == [] and "<conversation>\n[User]: one " in text_of(summarizer.messages[0]["content"])
    assert text_of(after.messages[0]["content"]).startswith(SUMMARY_WRAPPER + "Pipeline summary of the earlier conversation (JSON):")
    assert text_of(after.messages[-1]["content"]).startswith("two ")
    assert any(e.get("step") == "summary" for e in events)
    await session.prompt("three")
    assert text_of(provider.requests[-1].messages[0]["content"]).startswith(SUMMARY_WRAPPER)
    kinds = [e["type"] for e in session.session_manager.get_branch()]
    assert kinds.count("compaction") == 1
