"""pi 0.73.1 and pi-tui continue each other's Anthropic sessions (issue 11, "Done when").

Each direction: agent A answers ``-p "run echo hi"`` (thinking, a bash call, the answer) against
the strict Anthropic fake; agent B resumes A's session file with ``--session FILE -p thanks``
against a fresh fake. The fake checks every replayed thinking signature (HMAC over the thinking
text, the same key in every instance), so B's request is accepted only if A stored the signature
as received and B replays it as pi does.

Skipped when pi is not installed (``make pi-ref`` installs it; ``PI_REF`` names another install).
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pi_tui.testing.fake_anthropic_rules import sign_thinking
from pi_tui.testing.fake_anthropic_server import FakeAnthropicServer
from pi_tui.testing.fake_server import FakeServer
from pi_tui.testing.pi_reference import PI_BIN

PI = PI_BIN
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


# --------------------------------------------------------------------------- the same bodies as pi

BODY_TURNS = [
    {"thinking": "I will run two commands: one that works and one that fails.", "text": "Running both — café ☃.",
     "redacted_thinking": True,
     "tool_calls": [{"name": "bash", "arguments": {"command": "echo hi"}},
                    {"name": "bash", "arguments": {"command": "echo oops >&2; exit 2"}}]},
    {"thinking": "The second one failed.", "text": "The first printed hi; the second failed."},
]
OTHER_MODEL_TURNS = [
    {"thinking": "Thinking on another model.", "text": "Let me run it.",
     "tool_calls": [{"id": "call_Zx9|fc_0123456789abcdef0123456789abcdef0123456789abcdef0123456789",
                     "name": "bash", "arguments": {"command": "echo one"}}]},
    {"text": "It printed one."},
]
IMAGE_TURNS = [{"thinking": "Read it.", "text": "Reading.", "tool_calls": [{"name": "read", "arguments": {"path": "dot.png"}}]},
               {"thinking": "A dot.", "text": "A single pixel."}]
PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==")
THANKS = [{"thinking": "They thank me.", "text": "You are welcome."}]
WIRE_HEADERS = ("x-api-key", "anthropic-version", "anthropic-beta", "content-type", "accept",
                "anthropic-dangerous-direct-browser-access")
"""The headers that mean something to the API (pi's SDK adds its User-Agent and X-Stainless-*)."""


def _skeleton(raw: bytes) -> tuple[str, list[dict[str, Any]]]:
    """The body as compact JSON with the system prompt and the tools set aside: the two agents
    word their prompts and tool texts differently; everything else must be the same bytes. The
    tools come back with their descriptions removed (nested schemas are each tool's own
    definition, compared as objects)."""
    body = json.loads(raw)
    assert raw.decode() == json.dumps(body, separators=(",", ":"), ensure_ascii=False)  # compact, raw UTF-8, as JS writes it
    assert [list(block) for block in body["system"]] == [["type", "text", "cache_control"]]
    body["system"][0]["text"] = "<system prompt>"
    tools = body.pop("tools")
    body["tools"] = "<tools>"

    def strip(schema: Any) -> Any:
        if isinstance(schema, dict):
            return {k: strip(v) for k, v in schema.items() if k != "description"}
        return [strip(v) for v in schema] if isinstance(schema, list) else schema

    shapes = [{"keys": list(tool), "name": tool["name"], "input_schema": strip(tool["input_schema"]),
               **{k: v for k, v in tool.items() if k not in ("name", "description", "input_schema")}} for tool in tools]
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False), shapes


def _conversation(agent: str, home: Path, first: str) -> tuple[list[Any], list[dict[str, Any]]]:
    """``-p`` on ``first`` (the Anthropic fake, or the OpenAI-compatible fake for ``other``), then
    ``-c --thinking off`` with long cache retention on the Anthropic fake; every request recorded."""
    agent_dir, cwd = home / "agent", home / "project"
    cwd.mkdir(parents=True)
    recorded: list[Any] = []
    runs = [("anthropic/claude-sonnet-4-5", BODY_TURNS, ["-p", "run echo hi and a failing command, é ☃"], {})]
    if first == "other":
        runs = [("other/fake-model", OTHER_MODEL_TURNS, ["-p", "run echo one"], {})]
    if first == "image":
        (cwd / "dot.png").write_bytes(PNG)
        runs = [("anthropic/claude-sonnet-4-5", IMAGE_TURNS, ["-p", "what is in dot.png?"], {})]
    runs.append(("anthropic/claude-sonnet-4-5", THANKS, ["--thinking", "off", "-c", "-p", "thanks"], {"PI_CACHE_RETENTION": "long"}))
    for model, turns, args, extra in runs:
        fake: Any = FakeServer(turns) if model.startswith("other/") else FakeAnthropicServer(turns, api_key=KEY)
        with fake as server:
            providers: dict[str, Any] = {"anthropic": {"baseUrl": server.base_url}}
            if model.startswith("other/"):
                providers["other"] = {"baseUrl": server.base_url, "api": "openai-completions", "apiKey": "sk-other",
                                      "compat": {"supportsDeveloperRole": False},
                                      "models": [{"id": "fake-model", "reasoning": True, "contextWindow": 128000, "maxTokens": 16000}]}
            agent_dir.mkdir(parents=True, exist_ok=True)
            (agent_dir / "models.json").write_text(json.dumps({"providers": providers}))
            env = {**os.environ, "PI_CODING_AGENT_DIR": str(agent_dir), "ANTHROPIC_API_KEY": KEY, "PI_OFFLINE": "1", **extra}
            env.pop("PI_TUI_FORCE_LITELLM", None)
            result = subprocess.run([*_command(agent), "--model", model, *args], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                                    capture_output=True, text=True, timeout=180)
            assert result.returncode == 0, f"{agent}: {result.stderr[-2000:]}"
            assert server.script.remaining == 0, f"{agent}: {result.stdout}{result.stderr[-2000:]}"
            if isinstance(server, FakeAnthropicServer):
                recorded += server.recorded
    (path,) = sorted((agent_dir / "sessions").rglob("*.jsonl"))
    entries = [json.loads(line) for line in path.read_text().splitlines()]
    replies = [e["message"] for e in entries if e["type"] == "message" and e["message"]["role"] == "assistant"]
    return recorded, replies


@pytest.mark.parametrize("first", ["anthropic", "other", "image"])
def test_pi_tui_sends_pis_anthropic_bodies_byte_for_byte(first: str, tmp_path: Path) -> None:
    """The same conversation through pi 0.73.1 and pi-tui against the same fakes: thinking on
    (medium: budget, max_tokens, display), signed and redacted thinking replayed, two tool calls
    in one turn, a failed result (is_error), the marker moving to the newest user block, a resume
    with thinking off (signed thinking still replayed) and ``PI_CACHE_RETENTION=long`` (ttl on
    all three markers); or, with ``other``, a history from another model (thinking as text, the
    call id sanitized to Anthropic's pattern); or, with ``image``, a read of a PNG (a tool result
    carrying an image). Every request is the same bytes but for the
    prompt's and the tools' wording, with the same API headers."""
    sent = {agent: _conversation(agent, tmp_path / agent, first) for agent in ("pi", "pi-tui")}
    (pi_requests, pi_replies), (our_requests, our_replies) = sent["pi"], sent["pi-tui"]
    assert len(our_requests) == len(pi_requests) == {"anthropic": 3, "other": 1, "image": 3}[first]
    for theirs, ours in zip(pi_requests, our_requests, strict=True):
        assert (ours.path, int(ours.headers["content-length"])) == (theirs.path, len(ours.raw))
        assert {h: ours.headers.get(h) for h in WIRE_HEADERS} == {h: theirs.headers.get(h) for h in WIRE_HEADERS}
        assert _skeleton(ours.raw) == _skeleton(theirs.raw)
    # the stored replies: same keys in the same order, same blocks (signatures, redacted data)
    assert [list(m) for m in our_replies] == [list(m) for m in pi_replies]
    assert [m["content"] for m in our_replies] == [m["content"] for m in pi_replies]
    last = json.loads(our_requests[-1].raw)
    assert last["thinking"] == {"type": "disabled"}
    assert last["messages"][-1]["content"][-1]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    if first == "anthropic":
        assert [b["type"] for b in last["messages"][1]["content"]] == ["redacted_thinking", "thinking", "text", "tool_use", "tool_use"]
        assert [b["is_error"] for b in last["messages"][2]["content"]] == [False, True]
    elif first == "image":  # a tool result with an image: text and image blocks, not a string (§15.7)
        assert [b["type"] for b in last["messages"][2]["content"][0]["content"]] == ["text", "image"]
    else:
        assert last["messages"][1]["content"][0] == {"type": "text", "text": "Thinking on another model."}
        assert last["messages"][1]["content"][-1]["id"] == last["messages"][2]["content"][0]["tool_use_id"]
