"""pi 0.73.1 and pi-tui continue each other's Anthropic sessions (issue 11, "Done when").

Each direction: agent A answers ``-p "run echo hi"`` (thinking, a bash call, the answer) against
the strict Anthropic fake; agent B resumes A's session file with ``--session FILE -p thanks``
against a fresh fake. The fake checks every replayed thinking signature (HMAC over the thinking
text, the same key in every instance), so B's request is accepted only if A stored the signature
as received and B replays it as pi does.

Skipped when pi is not installed (``PI_REF_BIN`` or ``/work/pi-ref/node_modules/.bin/pi``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pi_tui.providers.fake_anthropic_rules import sign_thinking
from pi_tui.providers.fake_anthropic_server import FakeAnthropicServer

PI = Path(os.environ.get("PI_REF_BIN", "/work/pi-ref/node_modules/.bin/pi"))
KEY = "sk-ant-api03-interop-key"
THOUGHT = "I will run echo hi."
FIRST = [{"thinking": THOUGHT, "text": "Running.", "tool_calls": [{"name": "bash", "arguments": {"command": "echo hi"}}]},
         {"thinking": "It printed hi.", "text": "It printed hi."}]
SECOND = [{"thinking": "They thank me.", "text": "You are welcome."}]

pytestmark = pytest.mark.skipif(not PI.exists(), reason="pi 0.73.1 is not installed")


def _command(agent: str) -> list[str]:
    return [str(PI)] if agent == "pi" else [sys.executable, "-m", "pi_tui"]


def _run(agent: str, turns: list[dict[str, Any]], agent_dir: Path, cwd: Path, *args: str) -> tuple[str, FakeAnthropicServer]:
    with FakeAnthropicServer(turns, api_key=KEY) as server:
        (agent_dir / "models.json").write_text(json.dumps({"providers": {"anthropic": {"baseUrl": server.base_url}}}))
        env = {**os.environ, "PI_CODING_AGENT_DIR": str(agent_dir), "ANTHROPIC_API_KEY": KEY, "PI_OFFLINE": "1"}
        result = subprocess.run([*_command(agent), "--model", "anthropic/claude-sonnet-4-5", *args], cwd=cwd, env=env,
                                stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=180)
    assert result.returncode == 0, f"{agent}: {result.stderr[-2000:]}"
    assert server.script.remaining == 0, f"{agent} did not finish the script: {result.stdout}{result.stderr[-2000:]}"
    return result.stdout.strip(), server


@pytest.mark.parametrize(("writer", "reader"), [("pi-tui", "pi"), ("pi", "pi-tui")])
def test_an_anthropic_session_resumes_in_the_other_agent(writer: str, reader: str, agent_dir: Path, project: Path) -> None:
    answer, _ = _run(writer, FIRST, agent_dir, project, "-p", "run echo hi")
    assert answer == "It printed hi."
    files = sorted((agent_dir / "sessions").rglob("*.jsonl"))
    assert len(files) == 1
    entries = [json.loads(line) for line in files[0].read_text().splitlines()]
    stored = next(e["message"] for e in entries if e["type"] == "message" and e["message"]["role"] == "assistant")
    assert stored["content"][0] == {"type": "thinking", "thinking": THOUGHT, "thinkingSignature": sign_thinking(THOUGHT)}
    assert (stored["api"], stored["provider"], stored["model"]) == ("anthropic-messages", "anthropic", "claude-sonnet-4-5")

    answer, server = _run(reader, SECOND, agent_dir, project, "--session", str(files[0]), "-p", "thanks")
    assert answer == "You are welcome."
    sent = server.requests[0]["messages"]
    assert sent[1]["content"][0] == {"type": "thinking", "thinking": THOUGHT, "signature": sign_thinking(THOUGHT)}
    assert sent[2]["content"][0]["type"] == "tool_result" and sent[2]["content"][0]["content"] == "hi\n"
