"""Compaction edges from issue 12, each reproduced on a real SessionManager and the ScriptedProvider.

The pi strategy: what a summary must be before it replaces history, when automatic compaction
may start, what an abort leaves behind, and whose state the circuit breaker is.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pi_tui.core.errors import PiError
from pi_tui.core.messages import user_message
from tests.session.compaction_host import FakeHost, usage_assistant


def seed(host: FakeHost, turns: int = 3, size: int = 3000) -> None:
    for i in range(turns):
        host.add(user_message(f"question {i} " + "q" * size))
        host.add(usage_assistant(f"answer {i} " + "a" * 40, total=1000 * (i + 1)))


def compactions(host: FakeHost) -> list[dict[str, Any]]:
    return [e for e in host.session_manager.get_entries() if e["type"] == "compaction"]


EMPTY_ANSWERS = [
    pytest.param({"text": ""}, id="empty"),
    pytest.param({"text": "  \n\n "}, id="whitespace"),
    pytest.param({"thinking": "I should summarize " * 50, "finish_reason": "length"}, id="thinking-only-length"),
    pytest.param({"thinking": "done thinking", "text": ""}, id="thinking-only-stop"),
]


@pytest.mark.parametrize("answer", EMPTY_ANSWERS)
async def test_an_empty_summary_is_a_failure_and_writes_nothing_manual(tmp_path: Path, answer: dict[str, Any]) -> None:
    host = FakeHost(tmp_path, [answer])
    seed(host)
    before = list(host.agent.messages)
    with pytest.raises(PiError, match="Summarization failed: the summarizer returned no summary text"):
        await host.runner.compact()
    assert compactions(host) == []
    assert host.agent.messages == before
    end = host.events_of("compaction_end")[-1]
    assert end["result"] is None and end["errorMessage"].startswith("Compaction failed: Summarization failed:")


@pytest.mark.parametrize("answer", EMPTY_ANSWERS)
async def test_an_empty_summary_is_a_failure_and_writes_nothing_automatic(tmp_path: Path, answer: dict[str, Any]) -> None:
    host = FakeHost(tmp_path, [answer])
    seed(host)
    host.add(user_message("more " + "m" * 3000))
    last = usage_assistant("big", total=18_500)  # > 20,000 − 2,000
    host.add(last)
    await host.runner.check_after_run(last)
    assert compactions(host) == []
    end = host.events_of("compaction_end")[-1]
    assert end["result"] is None and "no summary text" in end["errorMessage"]


async def test_a_truncated_summary_is_a_failure(tmp_path: Path) -> None:
    """Cut off at max_tokens: the sections that come last (Next Steps, Critical Context) are lost."""
    host = FakeHost(tmp_path, [{"text": "## Goal\nHalf a summ", "finish_reason": "length"}])
    seed(host)
    with pytest.raises(PiError, match=r"cut off at its output limit \(1600 tokens\)"):
        await host.runner.compact()
    assert compactions(host) == []
