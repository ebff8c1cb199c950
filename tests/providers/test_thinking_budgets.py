"""pi's ``thinkingBudgets`` setting reaches the wire of every client that thinks by budget (§15.1):
Anthropic's budget models (``budget_tokens``, and ``max_tokens`` grown by it, §15.3) and Gemini
2.x (``thinkingBudget``, §15.15), on the native clients and through litellm. Like pi, only the
agent's own calls carry it: a compaction summary thinks with the default budgets.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pi_tui.sdk import create_agent_session
from pi_tui.testing.fake_anthropic_server import FakeAnthropicServer
from pi_tui.testing.gemini_fake import GeminiFakeServer
from pi_tui.testing.gemini_fake_rules import normalized
from tests.session.conftest import FakeClock

SETTINGS = {"thinkingBudgets": {"low": 1500, "medium": 3000}, "compaction": {"keepRecentTokens": 10}}
TURNS = [{"text": "first answer"}, {"text": "second answer"}, {"text": "## Goal\nSUMMARY"}]


async def _prompt_then_compact(project: Path, agent: Path, model: str) -> None:
    (agent / "settings.json").write_text(json.dumps(SETTINGS))
    session = create_agent_session(cwd=project, agent_dir=agent, model=model, thinking_level="medium", load_extensions=False,
                                   clock=FakeClock())
    await session.prompt("first question " + "x" * 400)
    await session.prompt("second question")
    await session.compact()
    assert session.messages[0]["role"] == "compactionSummary", session.messages[0]


@pytest.mark.parametrize("route", ["native", "litellm"])
async def test_gemini_main_calls_think_with_the_settings_budget_and_summaries_with_the_default(
    route: str, project: Path, agent_dir: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    if route == "litellm":
        monkeypatch.setenv("PI_TUI_FORCE_LITELLM", "1")
    with GeminiFakeServer(TURNS) as server:
        providers = {"google": {"baseUrl": server.base_url, "api": "google-generative-ai", "apiKey": "gk",
                                "models": [{"id": "gemini-2.5-flash", "reasoning": True, "contextWindow": 1_048_576, "maxTokens": 65536}]}}
        (agent_dir / "models.json").write_text(json.dumps({"providers": providers}))
        await _prompt_then_compact(project, agent_dir, "google/gemini-2.5-flash")
        configs = [normalized(body)["generationConfig"]["thinkingConfig"] for body in server.requests]
        agents = {r.headers["user-agent"].split("/")[0] for r in server.recorded}
    assert (agents == {"pi-tui"}) is (route == "native")
    assert [c["thinkingBudget"] for c in configs] == [3000, 3000, 8192]  # main, main, summary (pi's 2.5 Flash medium)


async def test_anthropic_main_calls_think_with_the_settings_budget_and_summaries_with_the_default(project: Path,
                                                                                                 agent_dir: Path) -> None:
    with FakeAnthropicServer(TURNS, api_key="sk-ant-budgets") as server:
        (agent_dir / "models.json").write_text(json.dumps({"providers": {"anthropic": {"baseUrl": server.base_url,
                                                                                      "apiKey": "sk-ant-budgets"}}}))
        await _prompt_then_compact(project, agent_dir, "anthropic/claude-sonnet-4-5")
        bodies: list[dict[str, Any]] = server.requests
    main, summary = bodies[0], bodies[2]
    assert main["thinking"] == {"type": "enabled", "budget_tokens": 3000, "display": "summarized"}
    assert main["max_tokens"] == 32000 + 3000  # the answer keeps its room above the budget (§15.3)
    assert bodies[1]["thinking"]["budget_tokens"] == 3000
    assert summary["thinking"]["budget_tokens"] == 8192
