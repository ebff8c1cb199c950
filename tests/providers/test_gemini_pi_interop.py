"""pi 0.73.1 and pi-tui continue each other's Gemini sessions, and send the same ``contents``.

Each direction: agent A answers ``-p "run echo hi"`` (signed thinking, a signed bash call, the
answer) against the strict Gemini fake (Gemini 3, placeholder signatures refused); then pi and
pi-tui each resume a copy of A's session file with ``--session FILE -p thanks`` against the same
fake, which refuses any signature it did not issue. Both requests must carry A's signatures on
the parts they came with, and their ``contents`` must be identical: pi-tui's replay is pi's.

Skipped when pi is not installed (``make pi-ref`` installs it; ``PI_REF`` names another install).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pi_tui.testing.gemini_fake import GeminiFakeServer
from pi_tui.testing.pi_reference import PI_BIN

PI = PI_BIN
MODEL = "gemini-3-pro-preview"
FIRST = [{"thinking": "I will run echo hi.", "text": "Running.", "thought_signature": True,
          "tool_calls": [{"name": "bash", "arguments": {"command": "echo hi"}}]},
         {"text": "It printed hi."}]
THANKS = {"text": "You are welcome.", "when": {"last_user_contains": "thanks"}}

pytestmark = pytest.mark.skipif(not PI.exists(), reason="pi 0.73.1 is not installed")


def _run(agent: str, agent_dir: Path, cwd: Path, *args: str) -> str:
    command = [str(PI)] if agent == "pi" else [sys.executable, "-m", "pi_tui"]
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(agent_dir), "PI_OFFLINE": "1"}
    env.pop("PI_TUI_FORCE_LITELLM", None)
    result = subprocess.run([*command, "--model", f"google/{MODEL}", *args], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                            capture_output=True, text=True, timeout=180)
    assert result.returncode == 0, f"{agent}: {result.stderr[-2000:]}"
    return result.stdout.strip()


@pytest.mark.parametrize("writer", ["pi-tui", "pi"])
def test_a_gemini_session_resumes_in_both_agents_with_the_same_contents(writer: str, agent_dir: Path, project: Path,
                                                                         tmp_path: Path) -> None:
    with GeminiFakeServer([*FIRST, THANKS, THANKS], placeholders_ok=False, api_key="gk") as server:
        providers = {"google": {"baseUrl": server.base_url, "api": "google-generative-ai", "apiKey": "gk",
                                "models": [{"id": MODEL, "reasoning": True, "contextWindow": 1048576, "maxTokens": 65536}]}}
        (agent_dir / "models.json").write_text(json.dumps({"providers": providers}))
        assert _run(writer, agent_dir, project, "-p", "run echo hi") == "It printed hi."
        thought_signature, call_signature, answer_signature = server.issued_signatures
        (written,) = sorted((agent_dir / "sessions").rglob("*.jsonl"))
        entries = [json.loads(line) for line in written.read_text().splitlines()]
        replies = [e["message"] for e in entries if e["type"] == "message" and e["message"]["role"] == "assistant"]
        assert replies[0]["content"][0] == {"type": "thinking", "thinking": "I will run echo hi.", "thinkingSignature": thought_signature}
        assert replies[0]["content"][-1]["thoughtSignature"] == call_signature
        assert replies[1]["content"] == [{"type": "text", "text": "It printed hi.", "textSignature": answer_signature}]
        contents: dict[str, Any] = {}
        for reader in ("pi", "pi-tui"):
            copy = tmp_path / reader / written.name
            copy.parent.mkdir()
            shutil.copy(written, copy)
            assert _run(reader, agent_dir, project, "--session", str(copy), "-p", "thanks") == "You are welcome."
            contents[reader] = server.requests[-1]["contents"]
    assert contents["pi-tui"] == contents["pi"]
    model_turns = [c["parts"] for c in contents["pi"] if c["role"] == "model"]
    assert model_turns[0][0] == {"text": "I will run echo hi.", "thought": True, "thoughtSignature": thought_signature}
    assert model_turns[0][-1]["thoughtSignature"] == call_signature
    assert model_turns[1] == [{"text": "It printed hi.", "thoughtSignature": answer_signature}]


def _skeleton(raw: bytes) -> str:
    """The body as compact JSON with the system prompt and the tools' texts and schemas set aside
    (the agents word them differently); everything else must be the same bytes."""
    body = json.loads(raw)
    body["systemInstruction"]["parts"][0]["text"] = "<system prompt>"
    for declaration in body["tools"][0]["functionDeclarations"]:
        declaration["description"] = declaration["parametersJsonSchema"] = "<text>"
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False)


@pytest.mark.parametrize("model", [MODEL, "gemini-2.5-flash"])
def test_pi_tui_sends_pis_gemini_bodies(model: str, tmp_path: Path) -> None:
    """A tool loop with signed thinking, two calls (one failing: ``{"error": ...}``) and the
    answer, through pi 0.73.1 and pi-tui against the same fake: every request the same JSON, keys in
    the same order, but for the prompt's and the tools' wording (thinkingConfig, maxOutputTokens, parts, signatures,
    functionResponse runs, key order)."""
    turns = [{"thinking": "I will run two commands.", "text": "Running both — é.", "thought_signature": True,
              "tool_calls": [{"name": "bash", "arguments": {"command": "echo hi"}},
                             {"name": "bash", "arguments": {"command": "echo oops >&2; exit 2"}}]},
             {"thinking": "One failed.", "text": "The first printed hi; the second failed."}]
    sent: dict[str, list[Any]] = {}
    for agent in ("pi", "pi-tui"):
        home = tmp_path / agent
        (home / "project").mkdir(parents=True)
        (home / "agent").mkdir()
        with GeminiFakeServer(turns, placeholders_ok=False, api_key="gk") as server:
            providers = {"google": {"baseUrl": server.base_url, "api": "google-generative-ai", "apiKey": "gk",
                                    "models": [{"id": model, "reasoning": True, "contextWindow": 1048576, "maxTokens": 65536}]}}
            (home / "agent" / "models.json").write_text(json.dumps({"providers": providers}))
            command = [str(PI)] if agent == "pi" else [sys.executable, "-m", "pi_tui"]
            env = {**os.environ, "PI_CODING_AGENT_DIR": str(home / "agent"), "PI_OFFLINE": "1"}
            env.pop("PI_TUI_FORCE_LITELLM", None)
            result = subprocess.run([*command, "--model", f"google/{model}", "-p", "run echo hi and a failing command"],
                                    cwd=home / "project", env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                                    timeout=180)
            assert result.returncode == 0, f"{agent}: {result.stderr[-2000:]}"
            sent[agent] = server.recorded
    assert len(sent["pi-tui"]) == len(sent["pi"]) == 2
    for theirs, ours in zip(sent["pi"], sent["pi-tui"], strict=True):
        assert ours.path == theirs.path and ours.headers["x-goog-api-key"] == theirs.headers["x-goog-api-key"]
        assert _skeleton(ours.raw) == _skeleton(theirs.raw)
