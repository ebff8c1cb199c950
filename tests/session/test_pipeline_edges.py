"""The pipeline strategy's edges from issue 12: what its threshold measures, what a summary must
achieve, the documented artifact settings, and the preparation cache in a real session."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pi_tui.core.context.pipeline import request_bytes
from pi_tui.core.context.pipeline_summary import SUMMARY_FIELDS
from pi_tui.core.messages import user_message
from tests.session.compaction_host import FakeHost, usage_assistant

CONDENSE = {"system_contains": "condense the history"}
GOOD = {field: f"value of {field}" for field in SUMMARY_FIELDS}
GOOD_JSON = json.dumps(GOOD)


def pipeline_host(tmp_path: Path, turns: list[dict[str, Any]], threshold: int = 50_000, **pipeline: Any) -> FakeHost:
    settings = {"context": {"strategy": "pipeline", "pipeline": {"summaryThresholdBytes": threshold, **pipeline}}}
    return FakeHost(tmp_path, turns, settings=settings)


def edit_turn(host: FakeHost, i: int, diff_bytes: int) -> None:
    call = usage_assistant("", total=100)
    call["content"] = [{"type": "toolCall", "id": f"e{i}", "name": "edit",
                        "arguments": {"path": f"src/m{i}.py", "edits": [{"oldText": "a", "newText": "b"}]}}]
    call["stopReason"] = "toolUse"
    host.add(call)
    host.add({"role": "toolResult", "toolCallId": f"e{i}", "toolName": "edit",
              "content": [{"type": "text", "text": f"Successfully replaced 1 block(s) in src/m{i}.py."}],
              "details": {"diff": "-" * diff_bytes, "firstChangedLine": 1}, "isError": False, "timestamp": 1})


def context(host: FakeHost) -> list[dict[str, Any]]:
    return list(host.session_manager.build_session_context().messages)


# --------------------------------------------------------------------------- 4: the bytes that are sent


async def test_the_threshold_counts_the_request_not_usage_metadata_or_details(tmp_path: Path) -> None:
    """Three edits with 19 KB diffs in ``details``: the diffs never reach the model, so the
    request is far below 50,000 bytes and no summary is asked for."""
    host = pipeline_host(tmp_path, [])
    host.add(user_message("edit three files"))
    for i in range(3):
        edit_turn(host, i, 19_000)
    out = await host.runner.prepare_request_messages(context(host))
    assert host.provider.requests == []
    assert host.runner.last_request_bytes == request_bytes(out) < 2_000


def test_request_bytes_are_the_wire_fields_only() -> None:
    from pi_tui.core.context.convert import convert_to_llm

    assistant = usage_assistant("hello", total=12_345)
    assistant["responseId"] = "r" * 500
    result = {"role": "toolResult", "toolCallId": "c1", "toolName": "read", "isError": False, "timestamp": 1,
              "content": [{"type": "text", "text": "日本語"}], "details": {"big": "x" * 10_000}}
    failed = usage_assistant("", total=0, stop="error", error="503 " + "e" * 5000)
    summary = {"role": "compactionSummary", "summary": "S", "tokensBefore": 9, "timestamp": 1}
    messages = [user_message("hi"), assistant, result, failed, summary]
    expected = sum(
        len(json.dumps({k: m[k] for k in ("role", "content", "toolCallId", "toolName", "isError") if k in m},
                       separators=(",", ":"), ensure_ascii=False).encode())
        for m in convert_to_llm(messages) if m.get("stopReason") not in ("error", "aborted")
    )
    assert request_bytes(messages) == expected
    assert expected < 600  # the details, usage, ids and the failed answer are not sent


# --------------------------------------------------------------------------- 3: a summary gets below the threshold


def cjk_history(host: FakeHost, turns: int, size: int = 400) -> None:
    for i in range(turns):
        host.add(user_message(f"第{i}回 " + "漢字の文章です。" * size))  # 24 bytes, 2 "tokens" a repeat
        host.add(usage_assistant(f"回答{i} " + "これは回答です。" * (size // 2), total=100))


async def test_after_a_summary_of_a_cjk_chat_the_request_is_below_the_threshold(tmp_path: Path) -> None:
    """The kept tail is chosen in bytes, like the threshold: 6,250 *tokens* of CJK text were
    ~75 KB, so the request stayed above 50,000 bytes after every successful summary."""
    host = pipeline_host(tmp_path, [{"text": GOOD_JSON, "when": CONDENSE} for _ in range(20)])
    summaries = 0
    for turn in range(40):
        cjk_history(host, 1, size=100)  # ~3.6 KB a turn
        out = await host.runner.prepare_request_messages(context(host))
        if len(host.provider.requests) > summaries:
            summaries = len(host.provider.requests)
            assert request_bytes(out) < 50_000, f"turn {turn}: still above the threshold after a summary"
    assert 1 <= summaries <= 5  # was one on every turn once the first was made


async def test_a_summary_that_would_leave_the_request_above_the_threshold_is_rejected(tmp_path: Path) -> None:
    huge = json.dumps({k: v * 400 for k, v in GOOD.items()})  # ~40 KB: smaller than the history, not small enough
    host = pipeline_host(tmp_path, [{"text": huge, "when": CONDENSE}])
    cjk_history(host, 8)
    before = await host.runner.prepare_request_messages(context(host))
    assert len(host.provider.requests) == 1
    assert all(e["type"] != "compaction" for e in host.session_manager.get_entries())
    rejected = [e for e in host.events if e.get("step") == "summary_rejected"]
    assert "still be above the threshold" in rejected[0]["detail"]
    assert request_bytes(before) > 50_000


# --------------------------------------------------------------------------- 8: the documented artifact knobs


async def test_the_artifact_settings_are_used(make_session: Any, project: Path) -> None:
    """artifactThresholdBytes, previewBytes and turnInlineLimitBytes were parsed, then ignored."""
    from pi_tui.resources.settings import SettingsManager

    (project / "a.txt").write_text("a" * 1500)
    (project / "b.txt").write_text("b" * 900)
    (project / "c.txt").write_text("c" * 800)
    settings = SettingsManager.in_memory({"context": {"strategy": "pipeline", "pipeline": {
        "artifactThresholdBytes": 1000, "previewBytes": 100, "turnInlineLimitBytes": 1000}}})
    calls = [{"id": f"r{n}", "name": "read", "arguments": {"path": f"{n}.txt"}} for n in "abc"]
    session, _, events = make_session([{"tool_calls": calls}, {"text": "done"}], settings=settings)
    await session.prompt("read them")
    results = {m["toolCallId"]: m for m in session.agent.messages if m["role"] == "toolResult"}
    saved = {e["toolCallId"] for e in events if e["type"] == "artifact_saved"}
    # a: above the 1,000-byte threshold; then b (the larger of b and c) to get the turn within 1,000
    assert saved == {"ra", "rb"}
    text = results["ra"]["content"][0]["text"]
    assert "--- first 100 bytes ---\n" + "a" * 100 + "\n--- last 100 bytes ---\n" + "a" * 100 in text
    assert results["rc"]["content"][0]["text"].startswith("c" * 800)


async def test_sequential_tool_execution_keeps_the_turn_budget(make_session: Any, project: Path) -> None:
    """Issue 19 item 5: eight reads of 29,000 bytes in one turn are 232,000 bytes, more than the
    turn's 200,000 inline. Parallel execution saves two as artifacts; with ``toolExecution:
    "sequential"`` the rule saw one result at a time and kept all eight inline."""
    from pi_tui.resources.settings import SettingsManager

    for n in range(8):
        (project / f"f{n}.txt").write_text(("x" * 99 + "\n") * 290)  # 29,000 bytes
    calls = [{"id": f"r{n}", "name": "read", "arguments": {"path": f"f{n}.txt"}} for n in range(8)]
    for execution in ("parallel", "sequential"):
        settings = SettingsManager.in_memory({"toolExecution": execution, "context": {"strategy": "pipeline"}})
        session, _, events = make_session([{"tool_calls": calls}, {"text": "done"}], settings=settings)
        await session.prompt("read them all")
        saved = [e["toolCallId"] for e in events if e["type"] == "artifact_saved"]
        assert len(saved) == 2, (execution, saved)
        results = [m for m in session.agent.messages if m["role"] == "toolResult"]
        inline = sum(len(m["content"][0]["text"].encode()) for m in results if m["toolCallId"] not in saved)
        assert inline <= 200_000, (execution, inline)
    assert saved == ["r6", "r7"]  # sequential: the ones that would have taken the turn past the budget


# --------------------------------------------------------------------------- 9: the preparation cache in a real session


def tool_round(n: int) -> list[dict[str, Any]]:
    return [{"tool_calls": [{"id": f"t{n}", "name": "read", "arguments": {"path": "a.txt"}}]}, {"text": f"done {n}"}]


async def test_the_preparation_cache_hits_on_every_append_in_a_session(make_session: Any, project: Path) -> None:
    """The loop handed the pipeline a deep copy on every call and the cache compared identity:
    every request was prepared from scratch."""
    from pi_tui.resources.settings import SettingsManager

    (project / "a.txt").write_text("hello\n" * 50)
    settings = SettingsManager.in_memory({"context": {"strategy": "pipeline"}})
    session, provider, _ = make_session([turn for n in range(5) for turn in tool_round(n)], settings=settings)
    for n in range(5):
        await session.prompt(f"prompt {n}")
    reuse = session.compaction_runner.preparation_reuse
    assert len(provider.requests) == 10
    assert reuse["none"] == 1 and reuse["append"] == 9


CONTEXT_EXTENSION = '''
def register(pi):
    @pi.on("context")
    def keep(event):
        return {"messages": event["messages"]}
'''


async def test_the_cache_also_hits_when_an_extension_sees_a_copy_of_the_context(make_session: Any, project: Path) -> None:
    """With a ``context`` handler the loop still hands out a deep copy (pi's structuredClone):
    the cache then compares values, and an unchanged prefix is still reused."""
    from pi_tui.resources.settings import SettingsManager

    folder = project / ".pi" / "extensions"
    folder.mkdir(parents=True)
    (folder / "ctx.py").write_text(CONTEXT_EXTENSION)
    (project / "a.txt").write_text("hello\n" * 50)
    settings = SettingsManager.in_memory({"context": {"strategy": "pipeline"}})
    session, provider, _ = make_session([turn for n in range(3) for turn in tool_round(n)], settings=settings,
                                        load_extensions=True)
    for n in range(3):
        await session.prompt(f"prompt {n}")
    reuse = session.compaction_runner.preparation_reuse
    assert len(provider.requests) == 6 and reuse["none"] == 1 and reuse["append"] == 5


REDACTING_EXTENSION = '''
import json

def register(pi):
    @pi.on("context")
    def redact(event):
        return {"messages": json.loads(json.dumps(event["messages"]).replace("SECRET-TOKEN-42", "[redacted]"))}
'''


async def test_the_request_right_after_a_pipeline_summary_passes_the_context_handlers(make_session: Any, project: Path) -> None:
    """Issue 19 item 2: after a JSON summary the request was rebuilt from the session's raw
    context, so an extension redacting a secret saw it redacted in every request but that one."""
    from pi_tui.resources.settings import SettingsManager

    folder = project / ".pi" / "extensions"
    folder.mkdir(parents=True)
    (folder / "redact.py").write_text(REDACTING_EXTENSION)
    settings = SettingsManager.in_memory({"context": {"strategy": "pipeline", "pipeline": {"summaryThresholdBytes": 8_000}}})
    turns: list[dict[str, Any]] = []
    for n in range(4):
        turns.append({"text": f"answer {n} " + "a" * 1500, "when": {"has_tools": True}})
    turns.insert(0, {"text": GOOD_JSON, "when": CONDENSE})
    session, provider, events = make_session(turns, settings=settings, load_extensions=True)
    await session.prompt("the key is SECRET-TOKEN-42, keep it out of requests")
    for n in range(1, 4):
        await session.prompt(f"prompt {n} with SECRET-TOKEN-42 again " + "p" * 2500)
    assert [e for e in events if e.get("step") == "summary"], "no summary was made"
    agent_requests = [r for r in provider.requests if r.tools]
    after_summary = [r for r in agent_requests if any(m.get("role") == "user" and "value of current_goal" in json.dumps(m)
                                                      for m in r.messages)]
    assert after_summary, "no request carried the summary"
    for request in agent_requests:
        assert "SECRET-TOKEN-42" not in json.dumps(request.messages, ensure_ascii=False)
    assert "[redacted]" in json.dumps(agent_requests[0].messages)


# --------------------------------------------------------------------------- 10: the cache-aware budgets are not clamped silently


async def test_bounded_cache_aware_budgets_are_reported_once(tmp_path: Path) -> None:
    host = pipeline_host(tmp_path, [], variant="cache-aware", cacheAwareProtectTokens=30_000, cacheAwareMinGainTokens=9_000)
    host.add(user_message("hello"))
    for _ in range(2):
        await host.runner.prepare_request_messages(context(host))
    notes = [e for e in host.events if e["type"] == "notify" and "cache-aware" in e["message"]]
    assert len(notes) == 1
    assert "30,000 → 3,125" in notes[0]["message"] and "9,000 → 1,562" in notes[0]["message"]
    quiet = pipeline_host(tmp_path, [], variant="cache-aware", cacheAwareProtectTokens=3_000, cacheAwareMinGainTokens=1_000)
    quiet.add(user_message("hello"))
    await quiet.runner.prepare_request_messages(context(quiet))
    assert not [e for e in quiet.events if e["type"] == "notify"]
