"""Summarizer requests on the wire (fake OpenAI-compatible server): pi's §14.3 fields."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from pi_tui.core.context.compaction_prompts import SUMMARIZATION_SYSTEM_PROMPT
from pi_tui.core.messages import user_message
from pi_tui.providers.openai_http import OpenAIHttpProvider
from pi_tui.testing.fake_server import FakeServer
from tests.session.compaction_host import MODEL, FakeHost, usage_assistant


async def test_compaction_and_branch_summary_bodies(tmp_path: Path) -> None:
    with FakeServer([{"text": "## Goal\nWIRE"}, {"text": "BRANCH"}]) as server:
        host = FakeHost(tmp_path, [])
        host.model = replace(MODEL, base_url=server.base_url)
        host.provider = OpenAIHttpProvider()  # type: ignore[assignment]
        first = host.add(user_message("q" * 6000))
        host.add(usage_assistant("a", total=1500))
        host.add(user_message("r" * 6000))
        host.add(usage_assistant("b", total=3000))
        await host.runner.compact()
        await host.runner.navigate_tree(first, summarize=True)
        compaction, branch = server.requests[0], server.requests[1]
    assert compaction["max_completion_tokens"] == 1600  # floor(0.8 × reserve), explicit, not capped at maxTokens
    assert compaction["messages"][0] == {"role": "system", "content": SUMMARIZATION_SYSTEM_PROMPT}
    assert [m["role"] for m in compaction["messages"]] == ["system", "user"]
    assert "tools" not in compaction and "prompt_cache_key" not in compaction
    assert list(compaction)[:3] == ["model", "messages", "stream"]
    assert branch["max_completion_tokens"] == 2048 and "tools" not in branch
