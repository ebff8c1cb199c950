"""One usage type for the session's own totals and for what subagents used (issue 23): the
session's ``state.totals``, a task result's ``details.usage`` and the footer's/``/session``'s
"subagents" line are all ``core.usage.UsageTotals``."""

from __future__ import annotations

from typing import Any

from pi_tui.core.usage import UsageTotals, usage_totals
from pi_tui.session import state as session_state
from pi_tui.subagents import child


def assistant(inp: int, out: int, read: int = 0, write: int = 0, cost: float = 0.0) -> dict[str, Any]:
    return {"role": "assistant", "content": [], "usage": {
        "input": inp, "output": out, "cacheRead": read, "cacheWrite": write, "cost": {"total": cost}}}


def task_result(usage: dict[str, Any]) -> dict[str, Any]:
    return {"role": "toolResult", "toolName": "task", "toolCallId": "t", "content": [], "details": {"usage": usage}}


def test_the_session_and_the_subagents_share_one_type() -> None:
    assert session_state.UsageTotals is UsageTotals
    assert session_state.usage_totals is usage_totals
    assert not hasattr(child, "ChildUsage")
    assert type(child.subagent_usage([])) is UsageTotals
    assert type(child.usage_of([assistant(1, 2)])) is UsageTotals


def test_sums_count_turns_and_every_kind_of_token() -> None:
    messages = [{"role": "user", "content": "hi"}, assistant(100, 10, 50, 5, 0.25), assistant(7, 3, cost=0.5)]
    totals = usage_totals(messages)
    assert totals == UsageTotals(turns=2, input=107, output=13, cache_read=50, cache_write=5, cost=0.75)
    assert totals.total_tokens == 175


def test_json_round_trip_and_a_task_result_rolls_up() -> None:
    used = UsageTotals(turns=3, input=10, output=20, cache_read=30, cache_write=40, cost=0.125)
    assert used.to_json() == {"turns": 3, "input": 10, "output": 20, "cacheRead": 30, "cacheWrite": 40,
                              "totalTokens": 100, "cost": 0.125}
    assert UsageTotals.from_json(used.to_json()) == used
    assert UsageTotals.from_json({"turns": True, "input": "9", "cost": None}) == UsageTotals()
    assert UsageTotals.from_json(None) == UsageTotals()
    # a child that delegated in turn: its own call plus its own task's result
    messages = [assistant(5, 5), task_result(used.to_json())]
    assert child.usage_of(messages) == used.plus(UsageTotals(turns=1, input=5, output=5))
    assert child.subagent_usage(messages) == used
