"""Context projection (spec §1.5; pi's build-context tests) and an equivalence check of the fast
backward walk against a literal transcription of the spec on a generated session."""

from __future__ import annotations

import importlib.util
import random
import sys
from pathlib import Path
from typing import Any

import pytest

from pi_tui.core.session.entries import ms_from_iso
from pi_tui.core.session.jsonl import read_session_file
from pi_tui.core.session.projection import LAST_ENTRY, ModelRef, build_session_context

from .builders import assistant, user

BENCH = Path(__file__).resolve().parents[3] / "bench"


class Tree:
    """Entries built by hand: each ``add`` is a child of ``parent`` (default: the previous one)."""

    def __init__(self) -> None:
        self.entries: list[dict[str, Any]] = []
        self.clock = 0

    def add(self, kind: str, entry_id: str, parent: str | bool | None = True, **payload: Any) -> str:
        if parent is True:
            parent = self.entries[-1]["id"] if self.entries else None
        self.clock += 1
        stamp = f"2026-01-01T00:00:{self.clock:02d}.000Z"
        self.entries.append({"type": kind, "id": entry_id, "parentId": parent, "timestamp": stamp, **payload})
        return entry_id

    def msg(self, entry_id: str, message: dict, parent: str | bool | None = True) -> str:
        return self.add("message", entry_id, parent, message=message)


def roles(context) -> list[str]:
    return [m["role"] for m in context.messages]


def test_empty_and_null_leaf():
    assert build_session_context([]).messages == []
    tree = Tree()
    tree.msg("u1", user("hi"))
    empty = build_session_context(tree.entries, None)
    assert empty.messages == [] and empty.thinking_level == "off" and empty.model is None


def test_no_compaction_tracks_thinking_and_model():
    tree = Tree()
    tree.add("thinking_level_change", "t1", thinkingLevel="high")
    tree.add("model_change", "m1", provider="openai", modelId="gpt")
    tree.msg("u1", user("hi"))
    tree.msg("a1", assistant("yo", provider="anthropic", model="claude"))
    tree.msg("u2", user("more"))
    context = build_session_context(tree.entries)
    assert roles(context) == ["user", "assistant", "user"]
    assert context.thinking_level == "high"
    assert context.model == ModelRef("anthropic", "claude")  # an assistant overrides model_change
    tree.add("model_change", "m2", provider="openai", modelId="gpt-5")
    assert build_session_context(tree.entries).model == ModelRef("openai", "gpt-5")
    # the messages are the stored objects, not copies
    assert build_session_context(tree.entries).messages[0] is tree.entries[2]["message"]


def test_compaction_emits_summary_kept_and_newer():
    tree = Tree()
    tree.msg("u1", user("one"))
    tree.msg("a1", assistant("1"))
    tree.msg("u2", user("two"))
    tree.msg("a2", assistant("2"))
    tree.add("compaction", "c1", summary="S", firstKeptEntryId="u2", tokensBefore=100)
    tree.msg("u3", user("three"))
    tree.msg("a3", assistant("3"))
    context = build_session_context(tree.entries)
    assert roles(context) == ["compactionSummary", "user", "assistant", "user", "assistant"]
    assert context.messages[0] == {
        "role": "compactionSummary", "summary": "S", "tokensBefore": 100,
        "timestamp": ms_from_iso(tree.entries[4]["timestamp"]),
    }
    assert [m["content"][0]["text"] for m in context.messages[1:]] == ["two", "2", "three", "3"]


def test_only_the_latest_compaction_counts_and_kept_may_precede_the_older_one():
    tree = Tree()
    tree.msg("u1", user("one"))
    tree.msg("u2", user("two"))
    tree.add("compaction", "c1", summary="first", firstKeptEntryId="u2", tokensBefore=1)
    tree.msg("u3", user("three"))
    tree.add("compaction", "c2", summary="second", firstKeptEntryId="u2", tokensBefore=2)
    tree.msg("u4", user("four"))
    context = build_session_context(tree.entries)
    assert context.messages[0]["summary"] == "second"
    assert [m.get("summary") or m["content"][0]["text"] for m in context.messages] == [
        "second", "two", "three", "four",  # the older compaction entry itself adds nothing
    ]


def test_first_kept_equal_to_the_first_entry_keeps_everything():
    tree = Tree()
    tree.msg("u1", user("one"))
    tree.msg("a1", assistant())
    tree.add("compaction", "c1", summary="S", firstKeptEntryId="u1", tokensBefore=1)
    assert roles(build_session_context(tree.entries)) == ["compactionSummary", "user", "assistant"]


@pytest.mark.parametrize("kept", ["missing", "other"])
def test_first_kept_not_on_the_path_keeps_nothing_before_the_compaction(kept: str):
    tree = Tree()
    tree.msg("u1", user("one"))
    tree.msg("other", user("side branch"), parent=None)
    tree.msg("a1", assistant(), parent="u1")
    tree.add("compaction", "c1", summary="S", firstKeptEntryId=kept, tokensBefore=1)
    tree.msg("u2", user("after"))
    context = build_session_context(tree.entries)
    assert roles(context) == ["compactionSummary", "user"]
    assert context.messages[1]["content"][0]["text"] == "after"


def test_branches_follow_the_leaf_and_include_branch_summaries():
    tree = Tree()
    tree.msg("u1", user("root"))
    tree.msg("a1", assistant("a"))
    tree.msg("u2", user("left"))
    tree.msg("a2", assistant("left answer"))
    tree.add("branch_summary", "b1", parent="a1", fromId="a1", summary="we tried left")
    tree.msg("u3", user("right"))
    tree.add("branch_summary", "b2", parent="u3", fromId="u3", summary="")  # empty: no message
    right = build_session_context(tree.entries, "b2")
    assert roles(right) == ["user", "assistant", "branchSummary", "user"]
    assert right.messages[2] == {
        "role": "branchSummary", "summary": "we tried left", "fromId": "a1",
        "timestamp": ms_from_iso(tree.entries[4]["timestamp"]),
    }
    left = build_session_context(tree.entries, "a2")
    assert [m["content"][0]["text"] for m in left.messages] == ["root", "a", "left", "left answer"]


def test_unknown_leaf_falls_back_to_the_last_entry_and_an_orphan_is_a_root():
    tree = Tree()
    tree.msg("u1", user("one"))
    tree.msg("u2", user("two"))
    tree.msg("orphan", user("lost"), parent="gone")
    assert [m["content"][0]["text"] for m in build_session_context(tree.entries, "nope").messages] == ["lost"]
    assert roles(build_session_context(tree.entries, "u2")) == ["user", "user"]


def test_custom_messages_enter_and_other_entries_do_not():
    tree = Tree()
    tree.msg("u1", user("one"))
    tree.add("custom", "x1", customType="state", data={"a": 1})
    tree.add("label", "l1", targetId="u1", label="bookmark")
    tree.add("session_info", "s1", name="named")
    tree.add("custom_message", "cm", customType="note", content="remember", display=False, details={"k": 1})
    tree.add("future_type", "f1", payload=1)
    context = build_session_context(tree.entries)
    assert roles(context) == ["user", "custom"]
    assert context.messages[1] == {
        "role": "custom", "customType": "note", "content": "remember", "display": False, "details": {"k": 1},
        "timestamp": ms_from_iso(tree.entries[4]["timestamp"]),
    }


def test_a_parent_cycle_ends_the_path():
    tree = Tree()
    tree.msg("a", user("a"), parent="b")
    tree.msg("b", user("b"), parent="a")
    assert [m["content"][0]["text"] for m in build_session_context(tree.entries, "b").messages] == ["a", "b"]
    tree.msg("self", user("self"), parent="self")
    assert len(build_session_context(tree.entries, "self").messages) == 1


# --------------------------------------------------------------------------- equivalence


def reference_context(
    entries: list[dict], leaf_id: Any, by_id: dict[str, dict]
) -> tuple[list[dict], str, ModelRef | None]:
    """Spec §1.5 transcribed literally: forward walk over the whole path."""
    if leaf_id is None:
        return [], "off", None
    leaf = by_id.get(leaf_id) if isinstance(leaf_id, str) else None
    leaf = leaf or entries[-1]
    path, seen, current = [], set(), leaf
    while current is not None and current["id"] not in seen:
        seen.add(current["id"])
        path.append(current)
        current = by_id.get(current["parentId"]) if current["parentId"] else None
    path.reverse()
    thinking, model, compaction = "off", None, None
    for e in path:
        if e["type"] == "thinking_level_change":
            thinking = e["thinkingLevel"]
        elif e["type"] == "model_change":
            model = ModelRef(e["provider"], e["modelId"])
        elif e["type"] == "message" and e["message"]["role"] == "assistant":
            model = ModelRef(e["message"]["provider"], e["message"]["model"])
        elif e["type"] == "compaction":
            compaction = e

    def convert(e: dict) -> list[dict]:
        if e["type"] == "message":
            return [e["message"]]
        if e["type"] == "custom_message":
            return [{"role": "custom", "customType": e["customType"], "content": e["content"],
                     "display": e["display"], "timestamp": ms_from_iso(e["timestamp"])}]
        if e["type"] == "branch_summary" and e["summary"]:
            return [{"role": "branchSummary", "summary": e["summary"], "fromId": e["fromId"],
                     "timestamp": ms_from_iso(e["timestamp"])}]
        return []

    messages: list[dict] = []
    if compaction is None:
        for e in path:
            messages += convert(e)
    else:
        messages.append({"role": "compactionSummary", "summary": compaction["summary"],
                         "tokensBefore": compaction["tokensBefore"], "timestamp": ms_from_iso(compaction["timestamp"])})
        index = next(i for i, e in enumerate(path) if e is compaction)
        found = False
        for e in path[:index]:
            found = found or e["id"] == compaction["firstKeptEntryId"]
            if found:
                messages += convert(e)
        for e in path[index + 1 :]:
            messages += convert(e)
    return messages, thinking, model


def _generated(tmp_path: Path, count: int) -> list[dict]:
    spec = importlib.util.spec_from_file_location("gen_session", BENCH / "gen_session.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["gen_session"] = module
    spec.loader.exec_module(module)
    path = module.write_session(tmp_path / "gen.jsonl", count, seed=7)
    return read_session_file(path).entries[1:]


def test_fast_projection_equals_the_spec_on_a_generated_session(tmp_path: Path):
    entries = _generated(tmp_path, 4000)
    by_id = {e["id"]: e for e in entries}
    kinds = {e["type"] for e in entries}
    assert {"compaction", "branch_summary", "label", "model_change", "thinking_level_change"} <= kinds
    rng = random.Random(3)
    leaves: list[Any] = [None, LAST_ENTRY, "unknown", *(rng.choice(entries)["id"] for _ in range(80))]
    for leaf in leaves:
        fast = build_session_context(entries, leaf, by_id=by_id)
        messages, thinking, model = reference_context(entries, leaf, by_id)
        assert (fast.messages, fast.thinking_level, fast.model) == (messages, thinking, model), leaf
