"""Pure compaction: cut points, preparation (0.73.1 boundary), budgets, pi's own fixtures."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pi_tui.core.context.compaction import (
    CompactionSettings,
    assemble_result,
    coerce_compaction_settings,
    context_messages,
    estimate_tokens_now_and_after,
    history_max_tokens,
    history_request,
    prepare_compaction,
    summary_reasoning,
    turn_prefix_max_tokens,
    turn_prefix_request,
)
from pi_tui.core.context.compaction_prompts import (
    SUMMARIZATION_SYSTEM_PROMPT,
    UPDATE_SUMMARIZATION_PROMPT,
)
from pi_tui.core.context.cut_point import find_cut_point
from pi_tui.core.tokens import count_tokens_exact
from tests.core.context.builders import PathBuilder, assistant, result, user

# pi's captures ran with reserveTokens 2000 (1600-token history requests, §14.3); the cut points
# in the fixtures are reproduced exactly with keepRecentTokens 1000.
FIXTURE_SETTINGS = CompactionSettings(reserve_tokens=2000, keep_recent_tokens=1000)


def load_entries(path: Path) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return lines[1:]


def path_until(entries: list[dict[str, Any]], last_id: str) -> list[dict[str, Any]]:
    ids = [e["id"] for e in entries]
    return entries[: ids.index(last_id) + 1]


def text_of_entry(entry: dict[str, Any]) -> str:
    return json.dumps(entry["message"]["content"])


# --------------------------------------------------------------------------- cut points


def test_cut_point_lands_on_user_and_keeps_everything_with_a_large_budget() -> None:
    p = PathBuilder()
    p.message(user("a" * 400))
    p.message(assistant("b" * 400))
    p.message(user("c" * 400))
    p.message(assistant("d" * 400))
    cut = find_cut_point(p.entries, 0, 4, keep_recent_tokens=150)
    assert (cut.first_kept_entry_index, cut.is_split_turn) == (2, False)
    everything = find_cut_point(p.entries, 0, 4, keep_recent_tokens=10_000)
    assert everything.first_kept_entry_index == 0


def test_cut_point_never_on_a_tool_result_and_flags_a_split_turn() -> None:
    p = PathBuilder()
    p.message(user("do it"))
    p.message(assistant(calls=[("c1", "bash", {"command": "x"})]))
    p.message(result("c1", "r" * 800))
    p.message(assistant(calls=[("c2", "bash", {"command": "y"})]))
    p.message(result("c2", "s" * 800))
    p.message(assistant("done"))
    cut = find_cut_point(p.entries, 0, 6, keep_recent_tokens=200)
    # the budget is hit at the second result (index 4); the first cut point at or after it is 5
    assert cut.first_kept_entry_index == 5
    assert cut.is_split_turn and cut.turn_start_index == 0


def test_cut_point_without_cut_points_returns_start() -> None:
    p = PathBuilder()
    p.add("model_change", provider="fake", modelId="m")
    cut = find_cut_point(p.entries, 0, 1, keep_recent_tokens=1)
    assert (cut.first_kept_entry_index, cut.turn_start_index, cut.is_split_turn) == (0, -1, False)


def test_cut_extends_over_state_entries_and_then_counts_as_split_turn() -> None:
    p = PathBuilder()
    p.message(user("old " * 200))
    p.message(assistant("old answer"))
    p.add("thinking_level_change", thinkingLevel="high")
    p.message(user("new " * 200))
    p.message(assistant("new answer"))
    cut = find_cut_point(p.entries, 0, 5, keep_recent_tokens=100)
    assert cut.first_kept_entry_index == 2  # extended onto the thinking-level change
    assert cut.is_split_turn and cut.turn_start_index == 0  # pi's quirk (§2.3)


# --------------------------------------------------------------------------- preparation


def test_prepare_returns_none_when_the_path_ends_in_a_compaction() -> None:
    p = PathBuilder()
    first = p.message(user("x"))
    p.compaction("s", first["id"])
    assert prepare_compaction(p.entries, CompactionSettings()) is None
    assert prepare_compaction([], CompactionSettings()) is None


def test_second_compaction_summarizes_what_the_first_one_kept() -> None:
    p = PathBuilder()
    p.message(user("one " * 300))
    p.message(assistant("first answer"))
    kept = p.message(user("two " * 300))
    p.message(assistant("second answer"))
    p.compaction("SUMMARY-1", kept["id"], details={"readFiles": ["a.txt"], "modifiedFiles": ["b.txt"]})
    p.message(user("three " * 300))
    p.message(assistant("third answer", calls=[("c9", "read", {"path": "c.txt"})]))
    p.message(result("c9", "content of c", name="read"))
    p.message(user("four " * 300))
    p.message(assistant("fourth answer"))
    prep = prepare_compaction(p.entries, CompactionSettings(keep_recent_tokens=300))
    assert prep is not None
    texts = [json.dumps(m) for m in prep.messages_to_summarize]
    assert "two two" in texts[0]  # kept by compaction 1, summarized now (0.73.1)
    assert not any("SUMMARY-1" in t for t in texts)  # the old summary only as <previous-summary>
    assert prep.previous_summary == "SUMMARY-1"
    assert prep.first_kept_entry_id == p.entries[8]["id"]
    assert prep.file_ops.lists() == (["a.txt", "c.txt"], ["b.txt"])
    request = history_request(prep, custom_instructions="keep the numbers")
    assert request.prompt_text.startswith("<conversation>\n[User]: two two")
    assert "\n</conversation>\n\n<previous-summary>\nSUMMARY-1\n</previous-summary>\n\n" in request.prompt_text
    assert request.prompt_text.endswith(UPDATE_SUMMARIZATION_PROMPT + "\n\nAdditional focus: keep the numbers")
    assert request.system_prompt == SUMMARIZATION_SYSTEM_PROMPT
    assert request.max_tokens == 13107


def test_hook_made_compaction_details_are_not_carried_over() -> None:
    p = PathBuilder()
    kept = p.message(user("x " * 100))
    p.compaction("S", kept["id"], details={"readFiles": ["secret.txt"], "modifiedFiles": []}, from_hook=True)
    p.message(user("y " * 100))
    prep = prepare_compaction(p.entries, CompactionSettings(keep_recent_tokens=10))
    assert prep is not None
    assert prep.file_ops.lists() == ([], [])


def test_nothing_to_summarize_is_reported_not_sent() -> None:
    p = PathBuilder()
    p.message(user("short"))
    p.message(assistant("short"))
    prep = prepare_compaction(p.entries, CompactionSettings())
    assert prep is not None and prep.nothing_to_summarize


def test_budgets_and_reasoning() -> None:
    settings = CompactionSettings(reserve_tokens=2000)
    assert (history_max_tokens(settings), turn_prefix_max_tokens(settings)) == (1600, 1000)
    assert history_max_tokens(CompactionSettings()) == 13107
    assert turn_prefix_max_tokens(CompactionSettings()) == 8192
    assert summary_reasoning(True, "medium") == "medium"
    assert summary_reasoning(True, "off") is None
    assert summary_reasoning(False, "high") is None


def test_settings_coercion_accepts_pi_json_and_objects() -> None:
    assert coerce_compaction_settings({"reserveTokens": 10, "keepRecentTokens": 5, "enabled": False}) == CompactionSettings(
        enabled=False, reserve_tokens=10, keep_recent_tokens=5
    )
    assert coerce_compaction_settings(None) == CompactionSettings()


def test_oversized_conversation_is_trimmed_to_fit_the_window() -> None:
    p = PathBuilder()
    p.message(user("task"))
    for i in range(30):
        p.message(assistant(calls=[(f"c{i}", "bash", {"command": "cat big"})]))
        p.message(result(f"c{i}", "x" * 5000))
    p.message(user("next " * 400))
    p.message(assistant("ok"))
    prep = prepare_compaction(p.entries, CompactionSettings(reserve_tokens=2000, keep_recent_tokens=400))
    assert prep is not None
    untrimmed = history_request(prep)
    assert "[... 3000 more characters truncated]" in untrimmed.prompt_text
    fitted = history_request(prep, context_window=8000)
    assert count_tokens_exact(fitted.system_prompt + fitted.prompt_text) + fitted.max_tokens < 8000
    assert "[Tool result]:" in fitted.prompt_text and "[User]: task" in fitted.prompt_text


def test_split_turn_result_joins_history_and_prefix() -> None:
    p = PathBuilder()
    p.message(user("earlier"))
    p.message(assistant("earlier answer"))
    p.message(user("big task"))
    p.message(assistant(calls=[("c1", "edit", {"path": "src/a.py", "edits": []})]))
    p.message(result("c1", "r" * 4000))
    p.message(assistant("almost done " * 50))
    prep = prepare_compaction(p.entries, CompactionSettings(keep_recent_tokens=100))
    assert prep is not None and prep.is_split_turn
    assert [m["role"] for m in prep.turn_prefix_messages] == ["user", "assistant", "toolResult"]
    assert "[User]: big task" in turn_prefix_request(prep).prompt_text
    res = assemble_result(prep, "HISTORY", "PREFIX")
    assert res.summary == "HISTORY\n\n---\n\n**Turn Context (split turn):**\n\nPREFIX\n\n<modified-files>\nsrc/a.py\n</modified-files>"
    assert res.details == {"readFiles": [], "modifiedFiles": ["src/a.py"]}
    assert assemble_result(prep, None, "PREFIX").summary.startswith("No prior history.\n\n---")


def test_estimate_after_compaction_is_smaller_only_for_a_short_summary() -> None:
    p = PathBuilder()
    p.message(user("a " * 2000))
    p.message(assistant("b " * 2000))
    p.message(user("c"))
    prep = prepare_compaction(p.entries, CompactionSettings(keep_recent_tokens=1))
    assert prep is not None
    now, after = estimate_tokens_now_and_after(p.entries, prep.first_kept_index, "short summary")
    assert after < now
    _, bloated = estimate_tokens_now_and_after(p.entries, prep.first_kept_index, "z" * 20_000)
    assert bloated >= now


# --------------------------------------------------------------------------- pi's own fixtures


def test_manual_fixture_cut_points_and_tokens_match_pi(pi_fixtures: Path) -> None:
    entries = load_entries(pi_fixtures / "v3-compact-manual.jsonl")
    first = prepare_compaction(path_until(entries, "d856995f"), FIXTURE_SETTINGS)
    assert first is not None
    assert (first.first_kept_entry_id, first.tokens_before) == ("fcb770f4", 2993)
    assert first.file_ops.lists() == (["README.txt"], ["out.txt"])
    assert first.previous_summary is None
    second = prepare_compaction(path_until(entries, "98014f97"), FIXTURE_SETTINGS)
    assert second is not None
    # the second cut lands before the first compaction entry, among what it kept (§13.2)
    assert (second.first_kept_entry_id, second.tokens_before) == ("49cf868a", 3868)
    assert [m["role"] for m in second.messages_to_summarize] == ["user", "assistant"]
    assert "Turn 2 (large prompt) alpha" in json.dumps(second.messages_to_summarize[0])
    assert second.previous_summary is not None and second.previous_summary.startswith("## Goal\nFake summary")
    assert second.file_ops.lists() == (["README.txt"], ["out.txt"])


def test_threshold_fixture_is_a_split_turn(pi_fixtures: Path) -> None:
    entries = load_entries(pi_fixtures / "v3-compact-threshold.jsonl")
    prep = prepare_compaction(path_until(entries, "46a6079e"), FIXTURE_SETTINGS)
    assert prep is not None
    assert (prep.first_kept_entry_id, prep.tokens_before, prep.is_split_turn) == ("ec9c86d4", 7050, True)
    assert [m["role"] for m in prep.messages_to_summarize] == ["user", "assistant", "toolResult", "assistant"]
    assert [m["role"] for m in prep.turn_prefix_messages] == ["user", "assistant", "toolResult"]
    stored = next(e for e in entries if e["type"] == "compaction")
    assert "\n\n---\n\n**Turn Context (split turn):**\n\n" in stored["summary"]


def test_overflow_fixture_counts_the_failed_prompt(pi_fixtures: Path) -> None:
    entries = load_entries(pi_fixtures / "v3-compact-overflow.jsonl")
    prep = prepare_compaction(path_until(entries, "ca1d18a3"), FIXTURE_SETTINGS)
    assert prep is not None
    assert (prep.first_kept_entry_id, prep.tokens_before) == ("4fb410cd", 2777)


@pytest.mark.parametrize(
    ("name", "expected_ids"),
    [
        ("v3-compact-manual.jsonl", ["49cf868a", "b6845fcf", "7f73ed6c", "d856995f", "473c2e6b", "69f3e69e", "fa9f10a7", "98014f97", "e948c599", "fd9ceca3"]),
        ("v3-compact-threshold.jsonl", ["ec9c86d4", "6e4ea2ad", "46a6079e", "d9e7ff07", "36246a66"]),
        ("v3-compact-overflow.jsonl", ["4fb410cd", "2a0f6de9", "7f7b67bd", "ca1d18a3", "8613ea51", "c333dd1c", "ff2412f3", "e269049d", "471d5b5d"]),
    ],
)
def test_fixture_projection_is_summary_then_kept_then_newer(pi_fixtures: Path, name: str, expected_ids: list[str]) -> None:
    entries = load_entries(pi_fixtures / name)
    by_id = {e["id"]: e for e in entries}
    messages = context_messages(entries)
    last_compaction = [e for e in entries if e["type"] == "compaction"][-1]
    assert messages[0] == {
        "role": "compactionSummary",
        "summary": last_compaction["summary"],
        "tokensBefore": last_compaction["tokensBefore"],
        "timestamp": messages[0]["timestamp"],
    }
    assert messages[1:] == [by_id[i]["message"] for i in expected_ids]


def test_fit_to_window_scales_settings_that_cannot_fit_a_small_window() -> None:
    from pi_tui.core.context.compaction import CompactionSettings, fit_to_window

    defaults = CompactionSettings()
    small = fit_to_window(defaults, 8192)
    assert (small.reserve_tokens, small.keep_recent_tokens) == (2048, 3072)  # keep: half of 8192 − 2048
    # A reserve below the window is a deliberate choice and stays; keep-recent is at most half the threshold.
    chosen = fit_to_window(CompactionSettings(reserve_tokens=6000, keep_recent_tokens=20000), 8192)
    assert (chosen.reserve_tokens, chosen.keep_recent_tokens) == (6000, 1096)
    # 32k with pi's defaults: threshold 15,616, so keep 20,000 would leave every compaction above it.
    assert fit_to_window(defaults, 32_000).keep_recent_tokens == 7808
    assert fit_to_window(defaults, 200_000) is defaults
