"""Branch summaries: collection, budget, request, stored text; navigation through the runner."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from pi_tui.core.context.branch_summary import (
    branch_summary_request,
    branch_summary_text,
    collect_entries_for_branch_summary,
    prepare_branch_entries,
)
from pi_tui.core.context.compaction_prompts import (
    BRANCH_SUMMARY_PROMPT,
    SUMMARIZATION_SYSTEM_PROMPT,
)
from pi_tui.core.errors import EntryNotFoundError, PiError
from pi_tui.core.messages import text_of, user_message
from tests.core.context.builders import PathBuilder, assistant, result, user
from tests.session.compaction_host import FakeHost, summary_turn, usage_assistant


def tree() -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
    """root ← a ← b ← c (old leaf), and a ← x (other branch)."""
    p = PathBuilder()
    root = p.message(user("root"))
    a = p.message(assistant("a", calls=[("k1", "read", {"path": "src/app.py"})]))
    r = p.message(result("k1", "file text", name="read"))
    b = p.message(user("b"))
    c = p.message(assistant("c", calls=[("k2", "write", {"path": "out.txt", "content": "x"})]))
    x = {"type": "message", "id": "x", "parentId": r["id"], "timestamp": "t", "message": user("x")}
    by_id = {e["id"]: e for e in [*p.entries, x]}
    return by_id, {"root": root["id"], "a": a["id"], "r": r["id"], "b": b["id"], "c": c["id"], "x": "x"}


def test_collect_walks_from_the_old_leaf_to_the_common_ancestor() -> None:
    by_id, ids = tree()
    collection = collect_entries_for_branch_summary(by_id, ids["c"], "x")
    assert collection.common_ancestor_id == ids["r"]
    assert [e["id"] for e in collection.entries] == [ids["b"], ids["c"]]
    assert collect_entries_for_branch_summary(by_id, None, "x").entries == []


def test_prepare_skips_tool_results_and_tracks_files() -> None:
    by_id, ids = tree()
    entries = collect_entries_for_branch_summary(by_id, ids["c"], ids["root"]).entries
    prep = prepare_branch_entries(entries)
    assert [m["role"] for m in prep.messages] == ["assistant", "user", "assistant"]
    assert prep.file_ops.lists() == (["src/app.py"], ["out.txt"])


def test_budget_is_filled_newest_first_and_a_summary_may_still_join() -> None:
    p = PathBuilder()
    p.add("branch_summary", fromId="root", summary="S" * 400, details={"readFiles": ["old.md"], "modifiedFiles": []}, fromHook=False)
    p.message(user("u" * 400))  # 100 tokens
    p.message(user("v" * 400))  # 100 tokens
    prep = prepare_branch_entries(p.entries, token_budget=150)
    assert [text_of(m["content"])[:1] for m in prep.messages] == ["v"]
    roomy = prepare_branch_entries(p.entries, token_budget=250)
    # u + v = 200 < 0.9 × 250, so the older summary joins although it does not fit
    assert [m["role"] for m in roomy.messages] == ["branchSummary", "user", "user"]
    assert roomy.file_ops.lists() == (["old.md"], [])


def test_request_and_stored_text() -> None:
    spec = branch_summary_request([user("hello")], custom_instructions="focus on tests")
    assert spec.system_prompt == SUMMARIZATION_SYSTEM_PROMPT
    assert (spec.max_tokens, spec.reasoning) == (2048, None)
    assert spec.prompt_text == f"<conversation>\n[User]: hello\n</conversation>\n\n{BRANCH_SUMMARY_PROMPT}\n\nAdditional focus: focus on tests"
    replaced = branch_summary_request([user("hello")], custom_instructions="ONLY THIS", replace_instructions=True)
    assert replaced.prompt_text.endswith("</conversation>\n\nONLY THIS")
    p = PathBuilder()
    p.message(assistant(calls=[("k", "edit", {"path": "a.py"})]))
    text, details = branch_summary_text("BODY", prepare_branch_entries(p.entries).file_ops)
    assert text == (
        "The user explored a different conversation branch before returning here.\nSummary of that exploration:\n\n"
        "BODY\n\n<modified-files>\na.py\n</modified-files>"
    )
    assert details == {"readFiles": [], "modifiedFiles": ["a.py"]}


# --------------------------------------------------------------------------- navigation


def branchy_host(tmp_path: Path, turns: list[dict[str, Any]], **kwargs: Any) -> tuple[FakeHost, dict[str, str]]:
    host = FakeHost(tmp_path, turns, **kwargs)
    ids = {"u1": host.add(user_message("first question"))}
    ids["a1"] = host.add(usage_assistant("first answer", total=10))
    ids["u2"] = host.add(user_message("second question"))
    ids["a2"] = host.add(usage_assistant("second answer", total=20))
    return host, ids


async def test_navigate_to_a_user_message_returns_its_text_and_moves_to_its_parent(tmp_path: Path) -> None:
    host, ids = branchy_host(tmp_path, [])
    outcome = await host.runner.navigate_tree(ids["u2"])
    assert outcome.editor_text == "second question" and not outcome.cancelled
    assert host.session_manager.leaf_id == ids["a1"]
    assert [m["role"] for m in host.agent.messages] == ["user", "assistant"]
    root = await host.runner.navigate_tree(ids["u1"])
    assert root.editor_text == "first question" and host.session_manager.leaf_id is None
    same = await host.runner.navigate_tree(ids["a1"])
    assert host.session_manager.leaf_id == ids["a1"] and same.editor_text is None
    assert (await host.runner.navigate_tree(ids["a1"])).cancelled is False  # same position: no-op
    with pytest.raises(EntryNotFoundError):
        await host.runner.navigate_tree("nope")


async def test_navigate_with_summary_appends_it_under_the_new_leaf(tmp_path: Path) -> None:
    tree_events: list[dict[str, Any]] = []

    async def on_tree(event: dict[str, Any]) -> None:
        tree_events.append(event)

    host, ids = branchy_host(tmp_path, [summary_turn("BRANCH-BODY")], handlers={"session_tree": [on_tree]})
    outcome = await host.runner.navigate_tree(ids["a1"], summarize=True, custom_instructions="be brief", label="explored")
    request = host.provider.requests[0]
    assert request.max_tokens == 2048 and request.tools == [] and request.reasoning is None
    text = text_of(request.messages[0]["content"])
    assert text.startswith("<conversation>\n[User]: second question\n\n[Assistant]: second answer\n</conversation>")
    assert text.endswith("Additional focus: be brief")
    summary = outcome.summary_entry
    assert summary is not None and summary["parentId"] == ids["a1"] and summary["fromId"] == ids["a1"]
    assert summary["summary"].endswith("BRANCH-BODY")
    label = host.session_manager.get_branch()[-1]
    assert label["type"] == "label" and label["targetId"] == summary["id"]
    assert tree_events[0]["newLeafId"] == label["id"] and tree_events[0]["oldLeafId"] == ids["a2"]
    assert host.agent.messages[-1]["role"] == "branchSummary"


async def test_navigate_abort_writes_nothing(tmp_path: Path) -> None:
    host, ids = branchy_host(tmp_path, [{**summary_turn(), "delay_ms": 2000}])
    before = len(host.session_manager.get_entries())
    task = asyncio.ensure_future(host.runner.navigate_tree(ids["a1"], summarize=True))
    await asyncio.sleep(0.05)
    assert host.runner.is_compacting
    host.runner.abort()
    outcome = await task
    assert outcome.cancelled and outcome.aborted
    assert len(host.session_manager.get_entries()) == before and host.session_manager.leaf_id == ids["a2"]


async def test_extension_can_cancel_or_supply_the_branch_summary(tmp_path: Path) -> None:
    async def supply(event: dict[str, Any]) -> dict[str, Any]:
        assert event["preparation"]["userWantsSummary"] is True
        return {"summary": {"summary": "EXT-SUMMARY"}}

    host, ids = branchy_host(tmp_path, [], handlers={"session_before_tree": [supply]})
    outcome = await host.runner.navigate_tree(ids["a1"], summarize=True)
    assert outcome.summary_entry is not None
    assert (outcome.summary_entry["summary"], outcome.summary_entry["fromHook"]) == ("EXT-SUMMARY", True)
    assert host.provider.requests == []

    async def cancel(event: dict[str, Any]) -> dict[str, Any]:
        return {"cancel": True}

    host2, ids2 = branchy_host(tmp_path, [], handlers={"session_before_tree": [cancel]})
    assert (await host2.runner.navigate_tree(ids2["a1"])).cancelled
    assert host2.session_manager.leaf_id == ids2["a2"]


async def test_summarize_without_a_model_is_refused(tmp_path: Path) -> None:
    host, ids = branchy_host(tmp_path, [], model=None)
    with pytest.raises(PiError, match="No model available for summarization"):
        await host.runner.navigate_tree(ids["a1"], summarize=True)


async def test_a_failed_branch_summary_raises_the_providers_error_as_pi_does(tmp_path: Path) -> None:
    """pi throws ``result.error`` (the provider's message, else ``Summarization failed``) without
    a prefix of its own; nothing is written and the leaf stays."""
    host, ids = branchy_host(tmp_path, [{"error": {"status": 400, "message": "bad branch summarizer"}}])
    leaf = host.session_manager.leaf_id
    with pytest.raises(PiError) as caught:
        await host.runner.navigate_tree(ids["a1"], summarize=True)
    assert str(caught.value) == "400 bad branch summarizer"
    assert host.session_manager.leaf_id == leaf
    assert all(e["type"] != "branch_summary" for e in host.session_manager.get_entries())
