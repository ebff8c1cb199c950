"""Issue 19, found by the compaction state machine: after a switch to a small model, a previous
summary larger than the window never fits the summary request, so compaction can never succeed
again. The previous summary is capped for the request (``core/context/summary_cap.py``); the
session file keeps it whole.

A real SessionManager, the CompactionRunner and the ScriptedProvider refusing by real tokens.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pi_tui.core.context.compaction_prompts import SPLIT_TURN_SEPARATOR
from pi_tui.core.context.pipeline_summary import PIPELINE_SUMMARY_PREFIX, SUMMARY_FIELDS
from pi_tui.core.context.summary_cap import cap_previous_summary
from pi_tui.core.messages import text_of, user_message
from pi_tui.core.provider import ModelInfo
from pi_tui.core.tokens import count_tokens_exact
from pi_tui.testing.scripted import request_tokens
from tests.session.compaction_host import FakeHost, summary_turn, usage_assistant
from tests.session.test_compaction_split_turns import tool_call, tool_result

PREFIX_PROMPT = {"last_user_contains": "PREFIX of a single turn"}


def long_summary(steps: int = 900) -> str:
    """A pi-format summary of ~60,000 characters (~14k tokens): a long Done list and context."""
    done = "".join(f"- [x] step {i}: edited src/mod{i}.py and ran the tests\n" for i in range(steps))
    context = "".join(f"- finding {i}: the cache key of table t{i} is the row id\n" for i in range(steps // 3))
    return (
        "## Goal\nFix the parser (src/parse.py) without changing its public API.\n\n"
        "## Constraints & Preferences\n- keep the public API\n\n"
        f"## Progress\n### Done\n{done}\n### In Progress\n- [ ] STILL-IN-PROGRESS the lexer\n\n"
        "### Blocked\n- (none)\n\n## Key Decisions\n- **Use a table**: faster\n\n"
        "## Next Steps\n1. NEXT-STEP run the fuzzer\n\n"
        f"## Critical Context\n{context}"
        "\n\n<read-files>\nsrc/a.py\n</read-files>"
    )


def small_host(tmp_path: Path, turns: list[dict[str, Any]]) -> FakeHost:
    model = ModelInfo(provider="fake", id="m8k", context_window=8192, max_tokens=4096)
    host = FakeHost(tmp_path, turns, settings={"compaction": {}}, model=model)  # pi's defaults
    host.provider.refuse_beyond_window = True
    return host


def compactions(host: FakeHost) -> list[dict[str, Any]]:
    return [e for e in host.session_manager.get_entries() if e["type"] == "compaction"]


def cap_notices(host: FakeHost) -> list[str]:
    return [e["message"] for e in host.events_of("notify") if "the previous summary (" in e["message"]]


async def test_a_previous_summary_larger_than_a_small_window_is_capped_for_the_request(tmp_path: Path) -> None:
    """Without the cap the request is ~15k tokens on an 8k model whatever is dropped of the
    conversation: refused on every try (``Summarization failed: … maximum context length``)."""
    host = small_host(tmp_path, [summary_turn("## Goal\nNEW-SUMMARY")])
    old = long_summary()
    assert count_tokens_exact(old) > 8192
    first = host.add(user_message("question 0 " + "q" * 400))
    host.add(usage_assistant("answer 0", total=0))
    host.session_manager.append_compaction(old, first, 20_000, {"readFiles": ["src/a.py"], "modifiedFiles": []}, False)
    for i in range(1, 9):
        host.add(user_message(f"question {i} " + "q" * 2000))
        host.add(usage_assistant(f"answer {i}", total=0))

    result = await host.runner.compact()

    assert result.summary.startswith("## Goal\nNEW-SUMMARY")
    (request,) = host.provider.requests
    assert request_tokens(request) + (request.max_tokens or 0) <= 8192
    prompt = text_of(request.messages[0]["content"])
    previous = prompt.split("<previous-summary>\n")[1].split("\n</previous-summary>")[0]
    # every heading stays, short sections whole, long ones keep their newest end
    for heading in ("## Goal", "## Constraints & Preferences", "### Done", "### In Progress", "## Key Decisions",
                    "## Next Steps", "## Critical Context"):
        assert heading in previous
    assert "STILL-IN-PROGRESS the lexer" in previous and "NEXT-STEP run the fuzzer" in previous
    assert "- [x] step 899: edited src/mod899.py" in previous and "- [x] step 0:" not in previous
    assert "earlier characters cut to fit the summary request" in previous
    assert "<read-files>" not in previous  # re-added from the entry's details
    assert "src/a.py" in result.summary
    assert "[User]: question 1 " in prompt  # the new messages are in the request too
    (notice,) = cap_notices(host)
    assert notice.startswith("Compaction: the previous summary (") and "m8k's 8,192-token window" in notice
    assert "The session file keeps the whole previous summary" in notice
    # nothing lost in the canonical history: the old summary entry is still there, whole
    assert compactions(host)[0]["summary"] == old
    assert len(compactions(host)) == 2


async def test_a_summary_that_fits_is_sent_whole(tmp_path: Path) -> None:
    host = small_host(tmp_path, [summary_turn()])
    old = long_summary(steps=20)
    first = host.add(user_message("question 0"))
    host.add(usage_assistant("answer 0", total=0))
    host.session_manager.append_compaction(old, first, 2_000, {"readFiles": ["src/a.py"], "modifiedFiles": []}, False)
    for i in range(1, 9):
        host.add(user_message(f"question {i} " + "q" * 2000))
        host.add(usage_assistant(f"answer {i}", total=0))
    await host.runner.compact()
    (request,) = host.provider.requests
    assert f"<previous-summary>\n{old}\n</previous-summary>" in text_of(request.messages[0]["content"])
    assert cap_notices(host) == []


async def test_a_split_turn_carrying_a_summary_too_large_for_the_window_summarizes_it_again(tmp_path: Path) -> None:
    """A split turn starting where the previous compaction kept from carries the previous summary
    as its history part. Carried whole on an 8k model, a 14k-token summary keeps the context
    above the window for good; it is summarized again (capped) instead."""
    host = small_host(tmp_path, [summary_turn("## Goal\nRE-SUMMARIZED"),
                                 {**summary_turn("## Original Request\nPREFIX-TWO"), "when": PREFIX_PROMPT}])
    host.add(user_message("question 0"))
    host.add(usage_assistant("answer 0", total=0))
    turn_start = host.add(user_message("fix the parser " + "t" * 2000))
    host.session_manager.append_compaction(long_summary(), turn_start, 20_000, {"readFiles": [], "modifiedFiles": []}, False)
    for n in range(6):
        host.add(tool_call(f"c{n}", "read", {"path": f"f{n}.py"}))
        host.add(tool_result(f"c{n}", "read", "r" * 4000))
    host.add(usage_assistant("almost there", total=0))

    result = await host.runner.compact()

    assert len(host.provider.requests) == 2
    history = next(r for r in host.provider.requests if "<previous-summary>" in text_of(r.messages[0]["content"]))
    assert request_tokens(history) + (history.max_tokens or 0) <= 8192
    assert result.summary.startswith("## Goal\nRE-SUMMARIZED")
    assert "**Turn Context (split turn):**\n\n## Original Request\nPREFIX-TWO" in result.summary
    assert "step 899" not in result.summary  # not carried whole
    assert count_tokens_exact(result.summary) < 1000
    assert len(cap_notices(host)) == 1


def test_a_pipeline_summary_keeps_its_five_fields_and_their_newest_end() -> None:
    fields = {name: f"{name} short" for name in SUMMARY_FIELDS}
    fields["key_findings"] = "".join(f"finding {i}; " for i in range(6000)) + "NEWEST-FINDING"
    summary = PIPELINE_SUMMARY_PREFIX + json.dumps(fields, indent=2, ensure_ascii=False)
    capped = cap_previous_summary(summary, 2000)
    assert capped.kept_tokens <= 2000 and count_tokens_exact(capped.text) == capped.kept_tokens
    assert capped.text.startswith(PIPELINE_SUMMARY_PREFIX)
    kept = json.loads(capped.text[len(PIPELINE_SUMMARY_PREFIX):])
    assert list(kept) == list(SUMMARY_FIELDS)
    assert kept["current_goal"] == "current_goal short"  # within its share: whole
    assert kept["key_findings"].endswith("NEWEST-FINDING") and "finding 0;" not in kept["key_findings"]
    assert capped.cut_chars > 50_000


def test_text_without_structure_keeps_its_newest_end() -> None:
    text = "".join(f"line {i}\n" for i in range(20_000))
    capped = cap_previous_summary(text, 500)
    assert capped.kept_tokens <= 500 and capped.text.endswith("line 19999")
    assert capped.text.startswith("[... ") and capped.cut_chars > 0


async def test_a_stranded_summary_is_summarized_again_when_nothing_else_can_be_cut(tmp_path: Path) -> None:
    """Found by the state machine: after a switch to 8k the 14k-token summary alone overflows
    every request, and everything after it is among the kept messages. "Nothing to compact"
    left the session stuck; the summary itself is summarized again (capped)."""
    host = small_host(tmp_path, [summary_turn("## Goal\nCONDENSED")])
    first = host.add(user_message("question 0"))
    host.session_manager.append_compaction(long_summary(), first, 20_000, {"readFiles": [], "modifiedFiles": []}, False)
    host.add(usage_assistant("answer 0", total=0))

    result = await host.runner.compact()

    assert result.summary.startswith("## Goal\nCONDENSED") and result.first_kept_entry_id == first
    (request,) = host.provider.requests
    prompt = text_of(request.messages[0]["content"])
    assert prompt.startswith("<conversation>\n\n</conversation>") and "<previous-summary>" in prompt
    assert request_tokens(request) + (request.max_tokens or 0) <= 8192
    assert len(cap_notices(host)) == 1 and compactions(host)[0]["summary"] == long_summary()


def pipeline_summary(key_findings: str = "the lexer drops CRLF") -> str:
    fields = {name: f"{name} short" for name in SUMMARY_FIELDS}
    fields["key_findings"] = key_findings
    return PIPELINE_SUMMARY_PREFIX + json.dumps(fields, indent=2, ensure_ascii=False)


def test_a_pipeline_summary_with_a_turn_context_keeps_its_json_and_the_turn_context_when_cut() -> None:
    """A pi compaction of a split turn that carried a pipeline summary stores the JSON and then
    pi's turn context. Cut as plain sections, the JSON lost its head and was JSON no more."""
    big = "".join(f"finding {i}; " for i in range(6000)) + "NEWEST-FINDING"
    turn_context = "## Original Request\nTURN-REQUEST fix the lexer\n\n## Early Progress\n" + "- read f.py\n" * 400
    summary = pipeline_summary(big) + SPLIT_TURN_SEPARATOR + turn_context + "\n\n<read-files>\nf.py\n</read-files>"
    capped = cap_previous_summary(summary, 2000)
    assert capped.kept_tokens <= 2000
    head, separator, tail = capped.text.partition(SPLIT_TURN_SEPARATOR)
    assert separator, "the turn context is kept after the split separator"
    kept = json.loads(head[len(PIPELINE_SUMMARY_PREFIX):])
    assert list(kept) == list(SUMMARY_FIELDS) and kept["key_findings"].endswith("NEWEST-FINDING")
    assert "## Original Request\nTURN-REQUEST fix the lexer" in tail and "## Early Progress" in tail


async def test_a_split_turn_carrying_a_pipeline_summary_keeps_its_json_whole(tmp_path: Path) -> None:
    """Found by the compaction state machine: a threshold compaction (pi's summarizer) of a split
    turn that starts where a pipeline summary kept from carries that JSON as its history part, whole
    and still strict JSON, and puts pi's turn context after the split separator."""
    host = small_host(tmp_path, [{**summary_turn("## Original Request\nPREFIX-TWO"), "when": PREFIX_PROMPT}])
    host.add(user_message("question 0"))
    host.add(usage_assistant("answer 0", total=0))
    turn_start = host.add(user_message("fix the parser " + "t" * 2000))
    carried = pipeline_summary()
    host.session_manager.append_compaction(carried, turn_start, 20_000, {"readFiles": [], "modifiedFiles": []}, False)
    for n in range(6):
        host.add(tool_call(f"c{n}", "read", {"path": f"f{n}.py"}))
        host.add(tool_result(f"c{n}", "read", "r" * 4000))
    host.add(usage_assistant("almost there", total=0))

    result = await host.runner.compact()

    assert len(host.provider.requests) == 1  # the turn prefix only: the history part is carried
    head, separator, tail = result.summary.partition(SPLIT_TURN_SEPARATOR)
    assert head == carried and separator
    assert tail.startswith("## Original Request\nPREFIX-TWO")
    assert list(json.loads(head[len(PIPELINE_SUMMARY_PREFIX):])) == list(SUMMARY_FIELDS)
