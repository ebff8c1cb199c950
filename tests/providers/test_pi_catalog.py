"""The built-in ``google`` and ``openai`` models carry pi 0.73.1's own facts (``pi_catalog.py``):
which think, their ``thinkingLevelMap``, windows, output limits and prices. The level map decides
the request: pi clamps the session's level with it (pi-behaviour.md §15.1, observed there: ``off``
on gpt-5-mini becomes ``minimal``, ``off`` on gemini-3-pro-preview becomes ``low``). With
litellm's catalog alone pi-tui sent ``reasoning.effort: "none"`` to gpt-5-mini (which the API
refuses) and no ``thinkingConfig`` at all to gemini-3-pro-preview (litellm says it does not think).

The wire tests run a real session against the strict fakes; the pi comparison (skipped without
pi) sends the same ``-p --thinking off`` through pi 0.73.1 and pi-tui and compares the keys.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pi_tui.providers.models import ModelRegistry
from pi_tui.sdk import create_agent_session
from pi_tui.session.restore import clamp_thinking_level
from pi_tui.testing.gemini_fake import GeminiFakeServer
from pi_tui.testing.pi_reference import PI_BIN
from pi_tui.testing.responses_fake import ResponsesFakeServer

PI = PI_BIN


@pytest.mark.parametrize(("ref", "levels"), [
    ("google/gemini-3-pro-preview", {"off": "low", "minimal": "low", "medium": "high", "xhigh": "high"}),
    ("gemini/gemini-3.1-pro-preview", {"off": "low", "medium": "high"}),
    ("google/gemini-3-flash-preview", {"off": "minimal", "medium": "medium"}),
    ("google/gemma-4-31b-it", {"off": "minimal", "low": "high", "medium": "high"}),
    ("google/gemini-2.5-pro", {"off": "off", "medium": "medium", "xhigh": "high"}),
    ("openai/gpt-5-mini", {"off": "minimal", "xhigh": "high"}),
    ("openai/gpt-5.2", {"off": "minimal", "xhigh": "xhigh"}),
    ("openai/o4-mini", {"off": "off", "xhigh": "high"}),
    ("openai/gpt-4o", {"medium": "off"}),
])
def test_the_session_level_is_clamped_with_pis_level_map(ref: str, levels: dict[str, str]) -> None:
    model = ModelRegistry(None, env={}).resolve(ref)
    assert {wanted: clamp_thinking_level(wanted, model) for wanted in levels} == levels


def test_windows_limits_and_prices_are_pis() -> None:
    registry = ModelRegistry(None, env={})
    pro = registry.resolve("google/gemini-3-pro-preview")
    assert (pro.api, pro.reasoning, pro.context_window, pro.max_tokens) == ("google-generative-ai", True, 1_000_000, 64000)
    assert (pro.cost.input, pro.cost.output, pro.cost.cache_read, pro.cost.cache_write) == (2, 12, 0.2, 0)
    mini = registry.resolve("openai/gpt-5-mini")
    assert (mini.api, mini.context_window, mini.max_tokens, mini.cost.input, mini.cost.cache_read) == ("openai-responses", 400000, 128000, 0.25, 0.025)
    # the gemini provider (litellm's name) gets the same facts; unknown ids fall back to litellm's catalog
    assert registry.resolve("gemini/gemini-3-pro-preview").thinking_level_map == pro.thinking_level_map
    assert registry.resolve("openai/gpt-4o-mini-2024-07-18").context_window_source == "litellm"


def _models_json(agent_dir: Path, **base_urls: str) -> None:
    agent_dir.mkdir(parents=True, exist_ok=True)
    (agent_dir / "models.json").write_text(json.dumps({"providers": {name: {"baseUrl": url} for name, url in base_urls.items()}}))


async def test_thinking_off_on_gemini_3_pro_is_low_on_the_wire(project: Path, agent_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", "gk")
    with GeminiFakeServer([{"thinking": "A little.", "text": "hi"}], api_key="gk") as server:
        _models_json(agent_dir, google=server.base_url)
        session = create_agent_session(cwd=project, agent_dir=agent_dir, model="google/gemini-3-pro-preview",
                                       thinking_level="off", load_extensions=False)
        await session.prompt("hello")
        body = server.requests[0]
    assert session.thinking_level == "low"
    assert body["generationConfig"] == {"maxOutputTokens": 32000, "thinkingConfig": {"includeThoughts": True, "thinkingLevel": "LOW"}}
    assert session.messages[-1]["stopReason"] == "stop"


async def test_thinking_off_on_gpt_5_mini_is_minimal_on_the_wire(project: Path, agent_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with ResponsesFakeServer([{"thinking": "A little.", "text": "hi"}]) as server:
        _models_json(agent_dir, openai=server.base_url)
        session = create_agent_session(cwd=project, agent_dir=agent_dir, model="openai/gpt-5-mini",
                                       thinking_level="off", load_extensions=False)
        await session.prompt("hello")
        body = server.requests[0]
    assert session.messages[-1]["stopReason"] == "stop", session.messages[-1].get("errorMessage")
    assert session.thinking_level == "minimal"
    assert (body["reasoning"], body["include"], body["max_output_tokens"]) == (
        {"effort": "minimal", "summary": "auto"}, ["reasoning.encrypted_content"], 32000)


def _keys_sent(agent: str, ref: str, home: Path) -> dict[str, Any]:
    agent_dir, cwd = home / "agent", home / "project"
    cwd.mkdir(parents=True)
    gemini = ref.startswith("google/")
    fake: Any = GeminiFakeServer([{"text": "hi"}], api_key="gk") if gemini else ResponsesFakeServer([{"text": "hi"}])
    with fake as server:
        _models_json(agent_dir, **{ref.split("/")[0]: server.base_url})
        env = {**os.environ, "PI_CODING_AGENT_DIR": str(agent_dir), "PI_OFFLINE": "1", "GEMINI_API_KEY": "gk", "OPENAI_API_KEY": "sk-test"}
        env.pop("PI_TUI_FORCE_LITELLM", None)
        command = [str(PI)] if agent == "pi" else [sys.executable, "-m", "pi_tui"]
        result = subprocess.run([*command, "--model", ref, "--thinking", "off", "-p", "hello"], cwd=cwd, env=env,
                                stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=180)
        assert result.returncode == 0, f"{agent}: {result.stderr[-2000:]}"
        body = server.requests[0]
    (path,) = sorted((agent_dir / "sessions").rglob("*.jsonl"))
    levels = [json.loads(line).get("thinkingLevel") for line in path.read_text().splitlines() if "thinking_level_change" in line]
    keys = ("generationConfig",) if gemini else ("reasoning", "include", "max_output_tokens")
    return {"levels": levels, **{key: body.get(key) for key in keys}}


@pytest.mark.skipif(not PI.exists(), reason="pi 0.73.1 is not installed")
@pytest.mark.parametrize("ref", ["google/gemini-3-pro-preview", "openai/gpt-5-mini"])
def test_thinking_off_sends_what_pi_sends(ref: str, tmp_path: Path) -> None:
    assert _keys_sent("pi-tui", ref, tmp_path / "pi-tui") == _keys_sent("pi", ref, tmp_path / "pi")
