"""Whole sessions on Anthropic's Messages wire, against the strict Anthropic fake.

The agent dir's models.json points the built-in ``anthropic`` provider at the fake (``baseUrl``),
so everything runs as a user's setup would: model resolution, the default provider (our own
client), real tools, the session file. The fake refuses a tool-loop request whose assistant turn
does not start with the thinking block it signed, and any signature it did not issue, so every
request that passes proves the thinking survived the session (and the file, on resume).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pi_tui.resources.settings import SettingsManager
from pi_tui.sdk import create_agent_session
from pi_tui.session.agent_session import AgentSession
from pi_tui.testing.fake_anthropic_rules import sign_thinking
from pi_tui.testing.fake_anthropic_server import FakeAnthropicServer
from pi_tui.testing.fake_server import FakeServer

KEY = "sk-ant-api03-session-test-key"
MODEL = "anthropic/claude-sonnet-4-5"
THOUGHT = "The user wants me to run echo hi. I will call the bash tool."
TOOL_TURN = {"thinking": THOUGHT, "text": "Running it.", "when": {"last_user_contains": "echo"},
             "tool_calls": [{"id": "toolu_01A", "name": "bash", "arguments": {"command": "echo hi; exit 2"}}]}
SUMMARY_PROMPT = "summarize conversations"


class InstantClock:
    def __init__(self) -> None:
        self.sleeps: list[float] = []

    def now(self) -> float:
        return 0.0

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)


def _models_json(agent: Path, anthropic_url: str, *, window: int | None = None, openai_url: str | None = None) -> None:
    anthropic: dict[str, Any] = {"baseUrl": anthropic_url, "apiKey": KEY}
    if window:
        anthropic["modelOverrides"] = {"claude-sonnet-4-5": {"contextWindow": window}}
    providers: dict[str, Any] = {"anthropic": anthropic}
    if openai_url:
        providers["fake"] = {"baseUrl": openai_url, "api": "openai-completions", "apiKey": "fk",
                             "models": [{"id": "fake-model", "reasoning": True}]}
    (agent / "models.json").write_text(json.dumps({"providers": providers}))


@pytest.fixture
def fake(request: pytest.FixtureRequest, agent_dir: Path) -> Iterator[FakeAnthropicServer]:
    turns, window = request.param if isinstance(request.param, tuple) else (request.param, None)
    with FakeAnthropicServer(turns, api_key=KEY) as server:
        _models_json(agent_dir, server.base_url, window=window)
        yield server


def _session(project: Path, agent: Path, **kwargs: Any) -> tuple[AgentSession, list[dict[str, Any]]]:
    kwargs.setdefault("model", MODEL)
    kwargs.setdefault("clock", InstantClock())
    session = create_agent_session(cwd=project, agent_dir=agent, load_extensions=False, **kwargs)
    events: list[dict[str, Any]] = []
    session.subscribe(events.append)
    return session, events


def _entries(session: AgentSession) -> list[dict[str, Any]]:
    path = session.session_manager.session_file
    assert path is not None
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _assistants(session: AgentSession) -> list[dict[str, Any]]:
    return [e["message"] for e in _entries(session) if e["type"] == "message" and e["message"]["role"] == "assistant"]


def _markers(body: dict[str, Any]) -> list[str]:
    found = [f"tools[{i}]" for i, t in enumerate(body.get("tools", [])) if "cache_control" in t]
    found += [f"system[{i}]" for i, b in enumerate(body.get("system", [])) if "cache_control" in b]
    found += [f"messages[{i}].content[{j}]" for i, m in enumerate(body["messages"]) if isinstance(m["content"], list)
              for j, b in enumerate(m["content"]) if "cache_control" in b]
    return found


TOOL_LOOP = [TOOL_TURN, {"thinking": "It printed hi.", "text": "It printed hi and exited with 2."},
             {"text": "You are welcome.", "when": {"last_user_contains": "thanks"}},
             {"text": "Still here.", "when": {"last_user_contains": "again"}}]


@pytest.mark.parametrize("fake", [TOOL_LOOP], indirect=True)
async def test_tool_loop_with_thinking_second_prompt_and_resume(project: Path, agent_dir: Path, fake: FakeAnthropicServer) -> None:
    session, _ = _session(project, agent_dir)
    await session.prompt("run echo hi")
    await session.prompt("thanks")
    stored = _assistants(session)
    assert [m["stopReason"] for m in stored] == ["toolUse", "stop", "stop"], stored[-1].get("errorMessage")
    thinking = stored[0]["content"][0]
    assert thinking == {"type": "thinking", "thinking": THOUGHT, "thinkingSignature": sign_thinking(THOUGHT)}
    assert list(stored[0]) == ["role", "content", "api", "provider", "model", "usage", "stopReason", "timestamp", "responseId"]
    # request 2 (after the tool call) carries the signed thinking first, and the failed result as is_error
    after_tool = fake.requests[1]
    assert after_tool["thinking"] == {"type": "enabled", "budget_tokens": 8192, "display": "summarized"}
    assert after_tool["max_tokens"] == 40192
    assert [b["type"] for b in after_tool["messages"][1]["content"]] == ["thinking", "text", "tool_use"]
    result = after_tool["messages"][2]["content"][0]
    assert result["is_error"] is True and result["tool_use_id"] == "toolu_01A" and "hi" in result["content"]
    # three markers each time; the message marker moved to the newest user block
    assert _markers(after_tool) == ["tools[3]", "system[0]", "messages[2].content[0]"]
    assert _markers(fake.requests[2]) == ["tools[3]", "system[0]", "messages[4].content[0]"]
    # usage: input is the uncached part only; the second request reads the first one's prefix
    first, second = stored[0]["usage"], stored[1]["usage"]
    assert first["cacheWrite"] > 1000 and second["cacheRead"] >= first["cacheWrite"]
    assert second["input"] == fake.usages[1]["input_tokens"]
    assert first["cost"]["cacheWrite"] == pytest.approx(first["cacheWrite"] * 3.75e-6)

    path = session.session_manager.session_file
    session.session_manager.close()  # the first "process" ends, releasing the file's lock
    resumed, _ = _session(project, agent_dir, session=str(path))
    await resumed.prompt("again: are you there?")
    replayed = fake.requests[-1]["messages"][1]["content"][0]
    assert replayed == {"type": "thinking", "thinking": THOUGHT, "signature": sign_thinking(THOUGHT)}
    assert _assistants(resumed)[-1]["content"][-1] == {"type": "text", "text": "Still here."}


async def test_switching_between_the_openai_fake_and_the_anthropic_fake(project: Path, agent_dir: Path) -> None:
    openai_turns = [{"thinking": "Thinking about it.", "text": "Let me run it.", "reasoning_field": "reasoning_content",
                     "tool_calls": [{"id": "call_Zx9|fc_01", "name": "bash", "arguments": {"command": "echo one"}}]},
                    {"text": "It printed one."}, {"text": "Summary."}]
    anthropic_turns = [{"thinking": "Both ran.", "text": "Claude here."}, TOOL_TURN, {"text": "done"}]
    with FakeAnthropicServer(anthropic_turns, api_key=KEY) as claude, FakeServer(openai_turns) as other:
        _models_json(agent_dir, claude.base_url, openai_url=other.base_url)
        session, _ = _session(project, agent_dir, model="fake/fake-model")
        await session.prompt("run echo one")
        session.set_model(session.model_registry.resolve(MODEL))
        await session.prompt("and now on claude?")
        first_claude = claude.requests[0]
        history = first_claude["messages"]
        # the other model's thinking is plain text; its call id is sanitized, the result follows it
        assert history[1]["content"][0] == {"type": "text", "text": "Thinking about it."}
        assert history[1]["content"][2]["id"] == "call_Zx9_fc_01"
        assert history[2]["content"][0]["tool_use_id"] == "call_Zx9_fc_01"
        # a Claude tool loop after the switch, then back to the OpenAI-compatible model
        await session.prompt("run echo hi")
        session.set_model(session.model_registry.resolve("fake/fake-model"))
        await session.prompt("summarize")
    stored = _assistants(session)
    assert [m["stopReason"] for m in stored] == ["toolUse", "stop", "stop", "toolUse", "stop", "stop"], stored[-1].get("errorMessage")
    assert [m["provider"] for m in stored] == ["fake", "fake", "anthropic", "anthropic", "anthropic", "fake"]
    back = other.requests[-1]["messages"]
    claude_turn = next(m for m in back if m["role"] == "assistant" and "Claude here." in str(m.get("content")))
    assert "Both ran." in claude_turn["content"]  # Claude's signed thinking is only text for another model
    assert not any("signature" in json.dumps(m) for m in back)


@pytest.mark.parametrize("fake", [[{"text": "x" * 400, "chunk_size": 4, "chunk_delay_ms": 20}, {"text": "Fresh answer."}]],
                         indirect=True)
async def test_abort_mid_stream_then_continue(project: Path, agent_dir: Path, fake: FakeAnthropicServer) -> None:
    session, events = _session(project, agent_dir)
    run = asyncio.ensure_future(session.prompt("write a lot"))
    for _ in range(500):
        await asyncio.sleep(0.01)
        if any(e["type"] == "message_update" and "xxxx" in json.dumps(e.get("message")) for e in events):
            break
    await session.abort()
    await asyncio.wait_for(run, 5)
    await session.prompt("try again")
    stored = _assistants(session)
    assert [m["stopReason"] for m in stored] == ["aborted", "stop"]
    assert stored[0]["content"][0]["text"].startswith("xxxx")
    # the aborted answer stays in the file but is not replayed: two user turns in a row
    assert [m["role"] for m in fake.requests[-1]["messages"]] == ["user", "user"]


PROMPT_TOO_LONG = "prompt is too long: 213462 tokens > 200000 maximum"


@pytest.mark.parametrize("fake", [([
    {"text": "first answer", "usage": {"input_tokens": 1500, "output_tokens": 10}},
    {"text": "middle answer", "usage": {"input_tokens": 3000, "output_tokens": 10}},
    {"error": {"status": 400, "message": PROMPT_TOO_LONG}, "when": {"last_user_contains": "second"}},
    {"text": "## Goal\nCLAUDE-SUMMARY", "when": {"system_contains": SUMMARY_PROMPT}},
    {"text": "recovered", "usage": {"input_tokens": 900, "output_tokens": 10}},
], 8192)], indirect=True)
async def test_prompt_too_long_compacts_and_retries(project: Path, agent_dir: Path, fake: FakeAnthropicServer) -> None:
    settings = SettingsManager.in_memory({"compaction": {"reserveTokens": 2000, "keepRecentTokens": 1000}})
    session, events = _session(project, agent_dir, settings=settings)
    await session.prompt("first " + "f" * 6000)
    await session.prompt("middle " + "m" * 6000)
    await session.prompt("second question")
    end = next(e for e in events if e["type"] == "compaction_end")
    assert end["reason"] == "overflow" and end["willRetry"] is True
    failed = next(m for m in _assistants(session) if m["stopReason"] == "error")
    assert failed["errorKind"] == "context_overflow" and PROMPT_TOO_LONG in failed["errorMessage"]
    summarizer, retry = fake.requests[3], fake.requests[4]
    assert SUMMARY_PROMPT in summarizer["system"][0]["text"] and "tools" not in summarizer
    # §15.3/§15.6: the summary call thinks at the session level over its own budget, with 2 markers
    assert (summarizer["max_tokens"], summarizer["thinking"]["budget_tokens"]) == (1600 + 8192, 8192)
    assert _markers(summarizer) == ["system[0]", f"messages[{len(summarizer['messages']) - 1}].content[0]"]
    assert "CLAUDE-SUMMARY" in json.dumps(retry["messages"][0])
    assert _assistants(session)[-1]["content"][-1]["text"] == "recovered"


@pytest.mark.parametrize("fake", [[
    {"error": {"status": 529, "retry_after": 5}},
    {"text": "x", "stream_error": {"type": "overloaded_error", "message": "Overloaded", "after": 1}},
    {"error": {"status": 429, "retry_after_ms": 9000}},
    {"text": "after the waits"},
]], indirect=True)
async def test_overloaded_and_rate_limited_retry_after_the_servers_delay(project: Path, agent_dir: Path,
                                                                          fake: FakeAnthropicServer) -> None:
    clock = InstantClock()
    session, events = _session(project, agent_dir, clock=clock)
    await session.prompt("hello")
    starts = [e for e in events if e["type"] == "auto_retry_start"]
    assert [(s["attempt"], s["delayMs"]) for s in starts] == [(1, 5000), (2, 4000), (3, 9000)]
    assert "529" in starts[0]["errorMessage"] and "overloaded_error" in starts[1]["errorMessage"]
    assert clock.sleeps == pytest.approx([5.0, 4.0, 9.0])
    assert next(e for e in events if e["type"] == "auto_retry_end")["success"] is True
    assert [m["stopReason"] for m in _assistants(session)] == ["error", "error", "error", "stop"]
    assert len(fake.requests) == 4


def test_print_mode_round_trip_never_imports_litellm(project: Path, agent_dir: Path) -> None:
    with FakeAnthropicServer([{"thinking": "t", "text": "Hello from the fake."}], api_key=KEY) as server:
        _models_json(agent_dir, server.base_url)
        code = (f"import sys\nfrom pi_tui.cli import main\ncode = main(['--model', {MODEL!r}, '-p', 'hi'])\n"
                "print('LITELLM' if 'litellm' in sys.modules else 'NO-LITELLM')\nsys.exit(code)")
        env = {**os.environ, "PI_CODING_AGENT_DIR": str(agent_dir)}
        result = subprocess.run([sys.executable, "-c", code], cwd=project, env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["Hello from the fake.", "NO-LITELLM"]


async def test_a_models_json_anthropic_messages_provider_uses_the_native_client(project: Path, agent_dir: Path) -> None:
    """An Anthropic-compatible endpoint declared in models.json: our client, its key and headers."""
    with FakeAnthropicServer([{"text": "proxied"}], api_key="proxy-key-123") as server:
        providers = {"proxy": {"baseUrl": server.base_url, "api": "anthropic-messages", "apiKey": "proxy-key-123",
                               "headers": {"x-team": "core"}, "models": [{"id": "glm-4.6", "contextWindow": 128000}]}}
        (agent_dir / "models.json").write_text(json.dumps({"providers": providers}))
        session, _ = _session(project, agent_dir, model="proxy/glm-4.6")
        await session.prompt("hi")
        sent = server.recorded[-1]
    assert sent.path == "/v1/messages" and sent.headers["x-team"] == "core"
    assert sent.headers["user-agent"].startswith("pi-tui/")  # our client, not litellm's
    assert "thinking" not in sent.body and sent.body["max_tokens"] == 16384  # not a reasoning model; pi's default maxTokens
    stored = _assistants(session)[-1]
    assert (stored["api"], stored["provider"], stored["model"], stored["stopReason"]) == ("anthropic-messages", "proxy", "glm-4.6", "stop")


async def test_the_demo_tour_plays_on_the_strict_anthropic_wire(tmp_path: Path, agent_dir: Path) -> None:
    """``make demo`` with ``--wire anthropic``: every tour prompt (tool loops, /compact) is accepted."""
    from pi_tui.demo import TOUR_PROMPTS, demo_script, make_project

    project = make_project(tmp_path)
    with FakeAnthropicServer(demo_script(), api_key=KEY) as server:
        _models_json(agent_dir, server.base_url)
        session, _ = _session(project, agent_dir, settings=SettingsManager.in_memory({"compaction": {"keepRecentTokens": 80}}))
        for prompt in TOUR_PROMPTS:
            await session.prompt(prompt)
    stored = _assistants(session)
    assert stored and all(m["stopReason"] in ("stop", "toolUse") for m in stored), [m.get("errorMessage") for m in stored]
    assert "utf-8" in (project / "app.py").read_text() and (project / "tests" / "test_app.py").exists()


IN_PLACE_PAYLOAD_EDIT = '''
def register(pi):
    @pi.on("before_provider_request")
    def hide_commands(event):
        for message in event["payload"]["messages"]:
            for block in message["content"] if isinstance(message["content"], list) else []:
                if block.get("type") == "tool_use":
                    block["input"]["command"] = "[hidden]"
'''


@pytest.mark.parametrize("fake", [TOOL_LOOP], indirect=True)
async def test_a_handler_editing_the_body_in_place_leaves_the_history_alone(
    project: Path, agent_dir: Path, fake: FakeAnthropicServer
) -> None:
    """The loop hands the history's own messages to the provider (issue 12, preparation cache);
    a ``before_provider_request`` handler that edits the body in place changed the tool call's
    arguments in memory (the next request, /tree, compaction summaries, the export) while the
    session file kept the real command."""
    (project / "edit_body.py").write_text(IN_PLACE_PAYLOAD_EDIT)
    session, _ = _session(project, agent_dir, extension_paths=[str(project / "edit_body.py")])
    await session.prompt("run echo hi")
    await session.prompt("thanks")
    assert fake.requests[-1]["messages"][1]["content"][2]["input"] == {"command": "[hidden]"}  # the body: edited
    in_memory = next(m for m in session.messages if m["role"] == "assistant")
    assert in_memory["content"][2]["arguments"] == {"command": "echo hi; exit 2"}
    assert _assistants(session)[0]["content"][2]["arguments"] == {"command": "echo hi; exit 2"}
