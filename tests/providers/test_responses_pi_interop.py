"""pi 0.73.1 and pi-tui on OpenAI's Responses wire (§15.14): the same requests, and each resumes
the other's session.

Against the strict Responses fake (``store: false``: a reasoning item must come back whole, its
``encrypted_content`` verified, before the message and calls it produced). The fake's encrypted
content verifies on any instance, as OpenAI's does, so a session written against one fake resumes
against another.

Skipped when pi is not installed (``make pi-ref`` installs it; ``PI_REF`` names another install).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pi_tui.testing.pi_reference import PI_BIN
from pi_tui.testing.responses_fake import ResponsesFakeServer

PI = PI_BIN
MODEL = "openai/gpt-5-mini"
KEY = "sk-responses-interop"
FIRST = [{"thinking": "I will run two commands.", "text": "Running both — café ☃.",
          "tool_calls": [{"name": "bash", "arguments": {"command": "echo hi"}},
                         {"name": "bash", "arguments": {"command": "echo oops >&2; exit 2"}}]},
         {"thinking": "The second one failed.", "text": "The first printed hi; the second failed."}]
THANKS = [{"thinking": "They thank me.", "text": "You are welcome."}]

pytestmark = pytest.mark.skipif(not PI.exists(), reason="pi 0.73.1 is not installed")


def _run(agent: str, turns: list[dict[str, Any]], agent_dir: Path, cwd: Path, *args: str, **env_extra: str) -> list[Any]:
    """One ``-p`` run against a fresh fake; every request it received."""
    with ResponsesFakeServer(turns, api_key=KEY) as server:
        agent_dir.mkdir(parents=True, exist_ok=True)
        (agent_dir / "models.json").write_text(json.dumps({"providers": {"openai": {"baseUrl": server.base_url}}}))
        env = {**os.environ, "PI_CODING_AGENT_DIR": str(agent_dir), "OPENAI_API_KEY": KEY, "PI_OFFLINE": "1", **env_extra}
        env.pop("PI_TUI_FORCE_LITELLM", None)
        command = [str(PI)] if agent == "pi" else [sys.executable, "-m", "pi_tui"]
        result = subprocess.run([*command, "--model", MODEL, *args], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                                capture_output=True, text=True, timeout=180)
        assert result.returncode == 0, f"{agent}: {result.stderr[-2000:]}"
        assert server.script.remaining == 0, f"{agent}: {result.stdout}{result.stderr[-2000:]}"
        return server.recorded


def _skeleton(recorded: Any) -> tuple[str, list[Any], dict[str, Any]]:
    """The body as compact JSON with what the agents word differently set aside (the system
    prompt, the tools' texts and schemas) and the session id (a fresh uuid per session) checked
    and replaced; the tools' shapes; the headers that mean something to the API."""
    body = json.loads(recorded.raw)
    session_id = body.pop("prompt_cache_key")
    assert recorded.headers["session_id"] == recorded.headers["x-client-request-id"] == session_id
    assert body["input"][0]["role"] == "developer"
    body["input"][0]["content"] = "<system prompt>"
    tools = body.pop("tools")
    shapes = [{"keys": list(t), "type": t["type"], "name": t["name"], "strict": t["strict"]} for t in tools]
    headers = {h: recorded.headers.get(h) for h in ("authorization", "content-type")}
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False), shapes, headers


def test_pi_tui_sends_pis_responses_bodies(tmp_path: Path) -> None:
    """A tool loop with reasoning (two calls, one failing) and a resumed second prompt with long
    cache retention: each request is pi's, byte for byte, but for the prompt's and the tools'
    wording and the session id."""
    sent: dict[str, list[Any]] = {}
    for agent in ("pi", "pi-tui"):
        home = tmp_path / agent
        (home / "project").mkdir(parents=True)
        sent[agent] = _run(agent, FIRST, home / "agent", home / "project", "-p", "run echo hi and a failing command, é")
        sent[agent] += _run(agent, THANKS, home / "agent", home / "project", "-c", "-p", "thanks", PI_CACHE_RETENTION="long")
    assert len(sent["pi-tui"]) == len(sent["pi"]) == 3
    for theirs, ours in zip(sent["pi"], sent["pi-tui"], strict=True):
        assert _skeleton(ours) == _skeleton(theirs)
    last = json.loads(sent["pi-tui"][-1].raw)
    assert last["prompt_cache_retention"] == "24h"
    assert [i.get("type", "message") for i in last["input"]][1:7] == [
        "message", "reasoning", "message", "function_call", "function_call", "function_call_output"]


@pytest.mark.parametrize(("writer", "reader"), [("pi-tui", "pi"), ("pi", "pi-tui")])
def test_a_responses_session_resumes_in_the_other_agent(writer: str, reader: str, tmp_path: Path) -> None:
    agent_dir, cwd = tmp_path / "agent", tmp_path / "project"
    cwd.mkdir()
    _run(writer, FIRST, agent_dir, cwd, "-p", "run echo hi")
    (path,) = sorted((agent_dir / "sessions").rglob("*.jsonl"))
    entries = [json.loads(line) for line in path.read_text().splitlines()]
    stored = next(e["message"] for e in entries if e["type"] == "message" and e["message"]["role"] == "assistant")
    item = json.loads(stored["content"][0]["thinkingSignature"])
    assert (item["type"], stored["api"]) == ("reasoning", "openai-responses") and item["encrypted_content"]
    requests = _run(reader, THANKS, agent_dir, cwd, "--session", str(path), "-p", "thanks")
    replayed = json.loads(requests[0].raw)["input"]
    assert next(i for i in replayed if i.get("type") == "reasoning") == item  # verbatim, and the fake verified it
