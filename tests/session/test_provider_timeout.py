"""``retry.provider.timeoutMs`` reaches every model call the session makes (it was parsed and never
used: a stalled stream waited until the server gave up)."""

from __future__ import annotations

import json
from pathlib import Path

from pi_tui.sdk import create_agent_session
from pi_tui.testing.scripted import ScriptedProvider


async def test_turns_and_compaction_summaries_carry_the_setting(project: Path, agent_dir: Path) -> None:
    (agent_dir / "settings.json").write_text(json.dumps({"retry": {"provider": {"timeoutMs": 1234}},
                                                         "compaction": {"keepRecentTokens": 10}}))
    turns = [{"text": "x" * 400, "usage": {"prompt_tokens": 100, "completion_tokens": 100}} for _ in range(3)]
    provider = ScriptedProvider([*turns, {"text": "## Goal\nsummary"}, {"text": "## Goal\nprefix summary"}])
    session = create_agent_session(cwd=project, agent_dir=agent_dir, provider=provider, load_extensions=False)
    for i in range(3):
        await session.prompt(f"step {i} " + "y" * 400)
    await session.compact()
    assert len(provider.requests) == 5  # three turns, the summary and the turn-prefix summary
    assert [r.timeout_ms for r in provider.requests] == [1234] * 5


async def test_without_the_setting_the_provider_keeps_its_default(project: Path, agent_dir: Path) -> None:
    provider = ScriptedProvider([{"text": "ok"}])
    session = create_agent_session(cwd=project, agent_dir=agent_dir, provider=provider, load_extensions=False)
    await session.prompt("hi")
    assert provider.requests[0].timeout_ms is None
