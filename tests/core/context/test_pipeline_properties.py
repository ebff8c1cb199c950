"""Property: over random session trees (branches, partial tool batches, compactions), no projected
request holds a tool result without its call, or a call without its result — for both strategies."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pi_tui.core.context.compaction import CompactionSettings, prepare_compaction
from pi_tui.core.context.pipeline import PipelineConfig, tool_pairing_problems
from pi_tui.core.context.pipeline_cache import RequestPreparer
from pi_tui.core.session import SessionManager
from tests.core.context.builders import assistant, result, user

Op = tuple[str, int, int]
OPS = st.lists(
    st.tuples(st.sampled_from(["user", "text", "tools", "tools", "partial", "branch", "compact"]), st.integers(0, 10_000), st.integers(1, 4)),
    min_size=1,
    max_size=60,
)
CONFIGS = [
    ("pi", PipelineConfig()),
    ("pipeline", PipelineConfig(snip_max_groups=6, snip_keep_first=2, snip_keep_last=3, micro_keep_recent=1)),
    ("pipeline", PipelineConfig(variant="cache-aware", snip_max_groups=6, snip_keep_first=2, snip_keep_last=3,
                                micro_keep_recent=1, cache_aware_snip_batch=2, summary_threshold_bytes=800)),
]


def apply(sm: SessionManager, ops: list[Op]) -> None:
    for kind, seed, n in ops:
        if kind == "user":
            sm.append_message(user("u" * (seed % 300)))
        elif kind == "text":
            sm.append_message(assistant("a" * (seed % 300)))
        elif kind in ("tools", "partial"):
            ids = [f"c{len(sm.get_entries())}_{k}" for k in range(n)]  # unique across the session
            sm.append_message(assistant(calls=[(i, "bash", {"command": "x"}) for i in ids]))
            answered = ids if kind == "tools" else ids[: seed % n]
            for i in answered:
                sm.append_message(result(i, "r" * (seed % 500)))
        elif kind == "branch":
            entries = sm.get_entries()
            if entries:
                sm.branch(entries[seed % len(entries)]["id"])
        elif kind == "compact":
            prep = prepare_compaction(sm.get_branch(), CompactionSettings(keep_recent_tokens=seed % 200 + 1))
            if prep is not None and not prep.nothing_to_summarize:
                sm.append_compaction("summary", prep.first_kept_entry_id, prep.tokens_before, None, False)


def orphan_results(messages: list[Any]) -> list[str]:
    return [p for p in tool_pairing_problems(messages) if "without its call" in p]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=OPS)
def test_no_projected_request_breaks_tool_pairing(tmp_path: Path, ops: list[Op]) -> None:
    sm = SessionManager.in_memory(tmp_path)
    preparers = [RequestPreparer(config, strategy=strategy) for strategy, config in CONFIGS]
    for end in range(1, len(ops) + 1):
        apply(sm, ops[end - 1 : end])
        projected = list(sm.build_session_context().messages)
        # a compaction never cuts a group: the projection itself has no result without its call
        assert orphan_results(projected) == []
        for preparer in preparers:
            request = preparer.prepare(projected).messages
            assert tool_pairing_problems(request) == [], (preparer.strategy, preparer.config.variant)
            fresh = RequestPreparer(preparer.config, strategy=preparer.strategy).prepare(projected).messages
            assert request == fresh  # the cache never changes the answer
