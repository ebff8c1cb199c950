"""Sessions that reach Gemini through pi-tui's own client only: a switch to Gemini in the middle of
a session begun on Anthropic's or OpenAI's wire (each against its strict fake), the ``google``
provider of pi's naming, and a ``-p`` run that never imports litellm.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pi_tui.providers.gemini_http import GeminiHttpProvider
from pi_tui.sdk import create_agent_session, default_provider_for
from pi_tui.testing.fake_anthropic_server import FakeAnthropicServer
from pi_tui.testing.gemini_fake import GeminiFakeServer
from pi_tui.testing.responses_fake import ResponsesFakeServer
from tests.session.conftest import FakeClock

PRO3 = "gemini-3-pro-preview"
GEMINI_MODEL = {"id": PRO3, "reasoning": True, "input": ["text", "image"], "contextWindow": 1_048_576, "maxTokens": 65536}
TOOL_TURN = {"thinking": "I will run it.", "text": "Running.", "when": {"last_user_contains": "echo"},
             "tool_calls": [{"name": "bash", "arguments": {"command": "echo hi"}}]}


def _write_models(agent: Path, gemini_url: str, **others: dict[str, Any]) -> None:
    providers = {"google": {"baseUrl": gemini_url, "api": "google-generative-ai", "apiKey": "gk", "models": [GEMINI_MODEL]}, **others}
    (agent / "models.json").write_text(json.dumps({"providers": providers}))


def _model_turns(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for c in body["contents"] if c["role"] == "model"]


@pytest.mark.parametrize("origin", ["anthropic", "openai-responses"])
async def test_a_session_switched_to_gemini_replays_the_other_wires_turns_without_their_signatures(
    origin: str, project: Path, agent_dir: Path,
) -> None:
    """The earlier turns carry Anthropic signatures or OpenAI's encrypted reasoning items and
    composite call ids: Gemini gets their thinking as text, no signature and no id, and the strict
    fake (Gemini 3, placeholders refused) accepts the request."""
    other: Any = FakeAnthropicServer([TOOL_TURN, {"text": "It printed hi."}], api_key="sk-ant-switch") if origin == "anthropic" \
        else ResponsesFakeServer([TOOL_TURN, {"text": "It printed hi."}])
    with other, GeminiFakeServer([{"text": "Gemini here."}], placeholders_ok=False, api_key="gk") as gemini:
        if origin == "anthropic":
            _write_models(agent_dir, gemini.base_url, anthropic={"baseUrl": other.base_url, "apiKey": "sk-ant-switch"})
            start = "anthropic/claude-sonnet-4-5"
        else:
            _write_models(agent_dir, gemini.base_url, openai={
                "baseUrl": other.base_url, "api": "openai-responses", "apiKey": "sk-switch",
                "models": [{"id": "o4-mini", "reasoning": True, "contextWindow": 200000, "maxTokens": 100000}]})
            start = "openai/o4-mini"
        session = create_agent_session(cwd=project, agent_dir=agent_dir, model=start, thinking_level="medium",
                                       load_extensions=False, clock=FakeClock())
        await session.prompt("run echo hi")
        first = session.messages[-3]
        assert first["stopReason"] == "toolUse" and first["content"][0]["thinkingSignature"]  # a signed turn of the other wire
        session.set_model(session.model_registry.resolve(f"google/{PRO3}"))
        await session.prompt("and now?")
        body = gemini.requests[0]
    assert session.messages[-1]["content"] == [{"type": "text", "text": "Gemini here.",
                                                "textSignature": gemini.issued_signatures[0]}]
    tool_turn, answer = _model_turns(body)
    assert tool_turn == {"parts": [{"text": "I will run it."}, {"text": "Running."},
                                   {"functionCall": {"args": {"command": "echo hi"}, "name": "bash"}}], "role": "model"}
    assert answer == {"parts": [{"text": "It printed hi."}], "role": "model"}
    assert body["contents"][2] == {"parts": [{"functionResponse": {"name": "bash", "response": {"output": "hi\n"}}}], "role": "user"}
    assert body["contents"][-1] == {"parts": [{"text": "and now?"}], "role": "user"}
    assert "thoughtSignature" not in json.dumps(body)


def test_gemini_and_google_models_take_the_native_client_unless_litellm_is_forced(agent_dir: Path,
                                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from pi_tui.providers.litellm_provider import LiteLLMProvider
    from pi_tui.providers.models import ModelRegistry

    registry = ModelRegistry.for_agent_dir(agent_dir, env={})
    google, gemini = registry.resolve("google/gemini-2.5-flash"), registry.resolve("gemini/gemini-2.5-pro")
    # pi's provider name works like litellm's, with litellm's catalog data
    assert (google.api, google.litellm_model, google.context_window, google.reasoning) == (
        "google-generative-ai", "gemini/gemini-2.5-flash", 1_048_576, True)
    assert isinstance(default_provider_for(google), GeminiHttpProvider) and isinstance(default_provider_for(gemini), GeminiHttpProvider)
    monkeypatch.setenv("PI_TUI_FORCE_LITELLM", "1")
    assert isinstance(default_provider_for(google), LiteLLMProvider)


def test_print_mode_round_trip_on_gemini_never_imports_litellm(project: Path, agent_dir: Path) -> None:
    turns = [TOOL_TURN, {"text": "It printed hi."}]
    with GeminiFakeServer([{**turns[0], "when": None}, turns[1]], placeholders_ok=False, api_key="gk") as server:
        _write_models(agent_dir, server.base_url)
        code = (f"import sys\nfrom pi_tui.cli import main\ncode = main(['--model', 'google/{PRO3}', '-p', 'run echo hi'])\n"
                "print('LITELLM' if 'litellm' in sys.modules else 'NO-LITELLM')\nsys.exit(code)")
        env = {**os.environ, "PI_CODING_AGENT_DIR": str(agent_dir)}
        env.pop("PI_TUI_FORCE_LITELLM", None)
        result = subprocess.run([sys.executable, "-c", code], cwd=project, env=env, capture_output=True, text=True, timeout=60)
        signature = server.issued_signatures[0]
        second = server.requests[1]
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["It printed hi.", "NO-LITELLM"]
    assert _model_turns(second)[0]["parts"][-1]["thoughtSignature"] == signature
