"""Pipeline steps at their exact thresholds, repairs, the preparation cache, the cache-aware variant."""

from __future__ import annotations

from typing import Any

from pi_tui.core.context.pipeline import (
    MICRO_PLACEHOLDER,
    PipelineConfig,
    build_units,
    message_bytes,
    reduce_units,
    tool_pairing_problems,
)
from pi_tui.core.context.pipeline_cache import RequestPreparer
from tests.core.context.builders import assistant, result, user


def group(i: int, size: int = 10, calls: int = 1) -> list[dict[str, Any]]:
    ids = [f"g{i}c{k}" for k in range(calls)]
    return [assistant(calls=[(cid, "bash", {"command": f"cmd {i}"}) for cid in ids]), *[result(cid, f"{i}:" + "x" * size) for cid in ids]]


def history(groups: int, size: int = 10) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [user("task")]
    for i in range(groups):
        messages.extend(group(i, size))
    return messages


def result_texts(messages: list[dict[str, Any]]) -> list[str]:
    return [m["content"][0]["text"] for m in messages if m["role"] == "toolResult"]


def test_a_tool_group_is_one_unit_with_all_its_results() -> None:
    units, orphans = build_units([user("go"), *group(0, calls=3), assistant("done")])
    assert [len(u.messages) for u in units] == [1, 4, 1]
    assert [u.is_tool_group for u in units] == [False, True, False] and orphans == 0


def test_missing_results_are_synthesized_and_orphans_left_out() -> None:
    messages = [user("go"), assistant(calls=[("a", "bash", {}), ("b", "bash", {})]), result("a", "ok"), user("branched here"), result("zz", "orphan")]
    units, orphans = build_units(messages)
    flat = [m for u in units for m in u.messages]
    assert orphans == 1
    assert [(m["role"], m.get("toolCallId")) for m in flat] == [("user", None), ("assistant", None), ("toolResult", "a"), ("toolResult", "b"), ("user", None)]
    assert flat[3]["content"][0]["text"] == "No result provided" and flat[3]["isError"] is True
    assert tool_pairing_problems(flat) == []
    assert tool_pairing_problems(messages) != []


def test_snip_applies_above_fifty_units_exactly() -> None:
    config = PipelineConfig()
    fifty = build_units(history(49))[0]  # the task + 49 groups = 50 units
    assert len(fifty) == 50
    assert reduce_units(fifty, config).snipped_units == 0
    units = build_units(history(50))[0]  # 51 units
    reduction = reduce_units(units, config)
    assert reduction.snipped_units == 2
    out = reduction.messages
    marker = out[1 + 2 * 2]  # task + two groups of (call, result), then the marker
    assert marker["role"] == "user"
    assert marker["content"][0]["text"] == "[Compacted: 2 earlier message groups were omitted from this request.]"
    kept_calls = [m["content"][0]["id"] for m in out if m["role"] == "assistant"]
    assert kept_calls == ["g0c0", "g1c0"] + [f"g{i}c0" for i in range(4, 50)]
    assert reduction.bytes_after_snip < reduction.bytes_before
    assert tool_pairing_problems(out) == []


def test_micro_keeps_the_results_of_the_three_newest_groups() -> None:
    config = PipelineConfig()
    three = reduce_units(build_units(history(3, size=5000))[0], config)
    assert three.micro_units == 0
    four = reduce_units(build_units(history(4, size=5000))[0], config)
    texts = result_texts(four.messages)
    assert texts[0] == MICRO_PLACEHOLDER and all(t.startswith(("1:", "2:", "3:")) for t in texts[1:])
    assert four.micro_units == 1 and four.bytes_after < four.bytes_before
    calls = [m["content"][0] for m in four.messages if m["role"] == "assistant"]
    assert [c["id"] for c in calls] == ["g0c0", "g1c0", "g2c0", "g3c0"]  # calls and ids unchanged
    assert [m["toolCallId"] for m in four.messages if m["role"] == "toolResult"] == ["g0c0", "g1c0", "g2c0", "g3c0"]


def test_micro_can_make_short_results_longer_as_the_spec_warns() -> None:
    reduction = reduce_units(build_units(history(4, size=1))[0], PipelineConfig())
    assert reduction.bytes_after > reduction.bytes_before


def test_identical_input_returns_the_same_object_and_appends_reuse_the_prefix() -> None:
    preparer = RequestPreparer(PipelineConfig())
    messages = history(10, size=2000)
    first = preparer.prepare(messages)
    assert preparer.prepare(list(messages)) is first and first.reused == "identical"
    longer = messages + group(10, 2000)
    appended = preparer.prepare(longer)
    assert appended.reused == "append"
    assert appended.messages == RequestPreparer(PipelineConfig()).prepare(longer).messages
    branched = [*messages[:5], user("another way")]
    assert preparer.prepare(branched).reused == "none"


def test_an_open_tool_group_is_rebuilt_when_its_results_arrive() -> None:
    preparer = RequestPreparer(PipelineConfig())
    messages = [user("go"), assistant(calls=[("a", "bash", {}), ("b", "bash", {})]), result("a", "one")]
    partial = preparer.prepare(messages)
    assert result_texts(partial.messages) == ["one", "No result provided"]
    complete = preparer.prepare([*messages, result("b", "two")])
    assert complete.reused == "append" and result_texts(complete.messages) == ["one", "two"]


def test_events_report_bytes_and_tokens_before_and_after() -> None:
    preparer = RequestPreparer(PipelineConfig())
    prepared = preparer.prepare(history(60, size=3000))
    steps = {e["step"]: e for e in prepared.events}
    assert set(steps) == {"snip", "micro"}
    snip, micro = steps["snip"], steps["micro"]
    assert snip["bytesBefore"] > snip["bytesAfter"] == micro["bytesBefore"] > micro["bytesAfter"]
    assert micro["bytesAfter"] == sum(message_bytes(m) for m in prepared.messages)
    assert snip["tokensBefore"] > snip["tokensAfter"] >= micro["tokensAfter"]
    assert preparer.prepare(history(60, size=3000)).events == []  # nothing changed: no new event


def test_cache_aware_micro_moves_in_batches_and_is_deterministic() -> None:
    config = PipelineConfig(variant="cache-aware", cache_aware_protect_tokens=3000, cache_aware_min_gain_tokens=2500)
    preparer = RequestPreparer(config)
    messages = history(0)
    frontiers = []
    prefixes_changed = 0
    previous: list[dict[str, Any]] | None = None
    for i in range(40):
        messages = messages + group(i, 2000)
        prepared = preparer.prepare(messages)
        frontiers.append(preparer.frontier)
        if previous is not None and prepared.messages[: len(previous)] != previous:
            prefixes_changed += 1
        previous = prepared.messages
        assert prepared.messages == RequestPreparer(config).prepare(messages).messages  # same history, same request
    assert frontiers == sorted(frontiers)
    assert 0 < prefixes_changed <= 40 // 5  # batched: far fewer prefix breaks than requests
    exact = RequestPreparer(PipelineConfig())
    breaks = 0
    previous = None
    messages = history(0)
    for i in range(40):
        messages = messages + group(i, 2000)
        out = exact.prepare(messages).messages
        if previous is not None and out[: len(previous)] != previous:
            breaks += 1
        previous = out
    assert breaks > prefixes_changed


def test_cache_aware_snip_drops_in_batches() -> None:
    config = PipelineConfig(variant="cache-aware", cache_aware_snip_batch=16)
    dropped = [reduce_units(build_units(history(n))[0], config).snipped_units for n in (49, 50, 60, 64, 65)]
    assert dropped == [0, 16, 16, 16, 32]  # units = n + 1 (the task message)
    assert all(len(build_units(history(n))[0]) - d <= 50 for n, d in zip((49, 50, 60, 64, 65), dropped, strict=True))


def test_pi_strategy_passes_a_well_formed_history_through_untouched() -> None:
    preparer = RequestPreparer(strategy="pi")
    messages = history(5)
    assert preparer.prepare(messages).messages is messages
    broken = [*messages, assistant(calls=[("dangling", "bash", {})]), user("moved on")]
    repaired = preparer.prepare(broken).messages
    assert tool_pairing_problems(repaired) == []
