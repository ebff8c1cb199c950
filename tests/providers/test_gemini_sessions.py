"""Whole sessions on Gemini against the strict Gemini fake, on both routes: pi-tui's own client
(``native``, the default) and litellm (``litellm``, ``PI_TUI_FORCE_LITELLM=1``).

The agent dir's models.json declares a ``google-generative-ai`` provider whose ``baseUrl`` is the
fake, so everything runs as a user's setup would: model resolution, the default provider, real
tools, the session file. The fake refuses Gemini 3 function-call turns replayed without their
real thought signature (placeholders included), so every request that passes proves the
signatures survived the session file. Bodies are compared after ``normalized`` (litellm sends
``snake_case`` field names, the API takes both); what only the native route keeps is asserted
for it alone.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pi_tui.resources.settings import SettingsManager
from pi_tui.sdk import create_agent_session
from pi_tui.session.agent_session import AgentSession
from pi_tui.testing.gemini_fake import GeminiFakeServer
from pi_tui.testing.gemini_fake_rules import normalized
from tests.session.conftest import FakeClock

PRO3, FLASH = "gemini-3-pro-preview", "gemini-2.5-flash"
TOOL_TURN = {"thinking": "The user wants echo.", "tool_calls": [{"name": "bash", "arguments": {"command": "echo hi"}}],
             "thought_signature": True, "when": {"last_user_contains": "echo"}}
SUMMARY_PROMPT = "summarize conversations"


def _models_json(agent: Path, base_url: str, *, window: int = 1_048_576) -> None:
    model = {"reasoning": True, "contextWindow": window, "maxTokens": 65536, "cost": {"input": 2, "output": 12, "cacheRead": 0.2}}
    providers = {"google": {"baseUrl": base_url, "api": "google-generative-ai", "apiKey": "gk",
                            "models": [{"id": PRO3, **model}, {"id": FLASH, **model}]}}
    (agent / "models.json").write_text(json.dumps({"providers": providers}))


@pytest.fixture(params=["native", "litellm"])
def route(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "litellm":
        monkeypatch.setenv("PI_TUI_FORCE_LITELLM", "1")
    return str(request.param)


@pytest.fixture
def fake(request: pytest.FixtureRequest, agent_dir: Path, route: str) -> Iterator[GeminiFakeServer]:
    turns, window = request.param if isinstance(request.param, tuple) else (request.param, 1_048_576)
    with GeminiFakeServer(turns, placeholders_ok=False, api_key="gk") as server:
        _models_json(agent_dir, server.base_url, window=window)
        yield server
        # every request came over the route under test: our client, or litellm's
        agents = {r.headers.get("user-agent", "").split("/")[0] for r in server.recorded}
        assert agents == ({"pi-tui"} if route == "native" else agents - {"pi-tui"}) and agents


def _session(project: Path, agent: Path, **kwargs: Any) -> tuple[AgentSession, list[dict[str, Any]]]:
    kwargs.setdefault("model", f"google/{PRO3}")
    session = create_agent_session(cwd=project, agent_dir=agent, load_extensions=False, clock=FakeClock(), **kwargs)
    events: list[dict[str, Any]] = []
    session.subscribe(events.append)
    return session, events


def _entries(session: AgentSession) -> list[dict[str, Any]]:
    path = session.session_manager.session_file
    assert path is not None
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _assistants(session: AgentSession) -> list[dict[str, Any]]:
    return [e["message"] for e in _entries(session) if e["type"] == "message" and e["message"]["role"] == "assistant"]


def _model_parts(body: dict[str, Any]) -> list[list[dict[str, Any]]]:
    return [c["parts"] for c in normalized(body)["contents"] if c["role"] == "model"]


def _call_signatures(body: dict[str, Any]) -> list[str | None]:
    return [p.get("thoughtSignature") for parts in _model_parts(body) for p in parts if "functionCall" in p]


def _contents(body: dict[str, Any]) -> list[dict[str, Any]]:
    contents: list[dict[str, Any]] = normalized(body)["contents"]
    return contents


TOOL_LOOP = [TOOL_TURN, {"text": "It printed hi.", "when": {"request_contains": "hi\\n"}},
             {"text": "You are welcome.", "when": {"last_user_contains": "thanks"}},
             {"text": "Still here.", "when": {"last_user_contains": "again"}}]


@pytest.mark.parametrize("fake", [TOOL_LOOP], indirect=True)
async def test_tool_loop_second_prompt_and_resume_keep_the_signature(project: Path, agent_dir: Path, fake: GeminiFakeServer,
                                                                     route: str) -> None:
    session, _ = _session(project, agent_dir)
    await session.prompt("run echo hi")
    await session.prompt("thanks")
    thought_signature, signature = fake.issued_signatures[:2]  # the thought part's, the function call's
    stored = _assistants(session)
    assert [m["stopReason"] for m in stored] == ["toolUse", "stop", "stop"]
    call = stored[0]["content"][-1]
    assert call["type"] == "toolCall" and call["thoughtSignature"] == signature
    assert stored[0]["content"][0] == {"type": "thinking", "thinking": "The user wants echo.", "thinkingSignature": thought_signature}
    assert (stored[0]["provider"], stored[0]["api"], stored[0]["model"]) == ("google", "google-generative-ai", PRO3)
    results = [e["message"] for e in _entries(session) if e["type"] == "message" and e["message"]["role"] == "toolResult"]
    assert results[0]["toolCallId"] == call["id"] and results[0]["content"][0]["text"] == "hi\n"
    # request 2 answers the call; request 3 replays the whole tool turn with its signature
    after_tool, second_prompt = fake.requests[1], fake.requests[2]
    assert _call_signatures(after_tool) == [signature] and _call_signatures(second_prompt) == [signature]
    (answer,) = _contents(after_tool)[-1]["parts"]
    assert answer["functionResponse"]["name"] == "bash" and answer["functionResponse"]["response"] == {"output": "hi\n"}
    if route == "native":  # pi's exact parts: no call id for Gemini models, our own client
        assert answer == {"functionResponse": {"name": "bash", "response": {"output": "hi\n"}}}
        assert fake.recorded[1].headers["user-agent"].startswith("pi-tui/")
    # the thinking block goes back as a thought part; only the native route can send its signature
    thought = _model_parts(second_prompt)[0][0]
    assert thought == ({"text": "The user wants echo.", "thought": True, "thoughtSignature": thought_signature} if route == "native"
                       else {"thought": True, "text": "The user wants echo."})

    # resume the file in a new process-like session: the signature comes back from disk
    path = session.session_manager.session_file
    session.session_manager.close()  # the first "process" ends, releasing the file's lock
    resumed, _ = _session(project, agent_dir, session=str(path))
    await resumed.prompt("again: are you there?")
    assert _call_signatures(fake.requests[-1])[0] == signature
    assert _assistants(resumed)[-1]["content"] == [{"type": "text", "text": "Still here.",
                                                     "textSignature": fake.issued_signatures[-1]}]


@pytest.mark.parametrize("fake", [[TOOL_TURN, {"text": "Done on pro."}, {"text": "Flash here."}]], indirect=True)
async def test_switching_model_mid_session_drops_signatures_and_thinking(project: Path, agent_dir: Path, fake: GeminiFakeServer,
                                                                         route: str) -> None:
    session, _ = _session(project, agent_dir)
    await session.prompt("run echo hi")
    flash = session.model_registry.resolve(f"google/{FLASH}")
    session.set_model(flash)
    await session.prompt("and now?")
    last = fake.recorded[-1]
    assert last.path.startswith(f"/v1beta/models/{FLASH}:streamGenerateContent")
    assert _call_signatures(last.body) == [None]  # another model's signatures are not sent
    assert _model_parts(last.body)[0][0] == {"text": "The user wants echo."}  # its thinking is plain text
    assert _assistants(session)[-1]["model"] == FLASH


@pytest.mark.parametrize("fake", [[{"text": "x" * 400, "chunk_size": 4, "chunk_delay_ms": 20}, {"text": "Fresh answer."}]], indirect=True)
async def test_abort_mid_stream_then_continue(project: Path, agent_dir: Path, fake: GeminiFakeServer, route: str) -> None:
    session, events = _session(project, agent_dir)
    run = asyncio.ensure_future(session.prompt("write a lot"))
    for _ in range(500):  # abort once some text has streamed
        await asyncio.sleep(0.01)
        if any(e["type"] == "message_update" for e in events):
            break
    await session.abort()
    await asyncio.wait_for(run, 5)
    await session.prompt("try again")
    stored = _assistants(session)
    assert [m["stopReason"] for m in stored] == ["aborted", "stop"]
    assert stored[0]["content"][0]["text"].startswith("xxxx")
    # the aborted answer stays in the file but is not replayed: two user turns in a row
    contents = _contents(fake.requests[-1])
    if route == "litellm":  # litellm merges the two user turns into one
        assert [c["role"] for c in contents] == ["user"]
        assert [p["text"] for p in contents[0]["parts"]] == ["write a lot", "try again"]
    else:  # pi sends them as they are: two user turns in a row (§14.6 item 6)
        assert contents == [{"parts": [{"text": "write a lot"}], "role": "user"}, {"parts": [{"text": "try again"}], "role": "user"}]


OVERFLOW = "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576)."


@pytest.mark.parametrize("fake", [([
    {"text": "first answer", "usage": {"prompt_tokens": 1500, "completion_tokens": 10}},
    {"text": "middle answer", "usage": {"prompt_tokens": 3000, "completion_tokens": 10}},
    {"error": {"status": 400, "message": OVERFLOW}, "when": {"last_user_contains": "second"}},
    {"text": "## Goal\nGEMINI-SUMMARY", "when": {"system_contains": SUMMARY_PROMPT}},
    {"text": "recovered", "usage": {"prompt_tokens": 900, "completion_tokens": 10}},
], 8192)], indirect=True)
async def test_overflow_compacts_and_retries(project: Path, agent_dir: Path, fake: GeminiFakeServer) -> None:
    settings = SettingsManager.in_memory({"compaction": {"reserveTokens": 2000, "keepRecentTokens": 1000}})
    session, events = _session(project, agent_dir, settings=settings)
    await session.prompt("first " + "f" * 6000)
    await session.prompt("middle " + "m" * 6000)
    await session.prompt("second question")
    end = next(e for e in events if e["type"] == "compaction_end")
    assert end["reason"] == "overflow" and end["willRetry"] is True
    overflowed, summarizer, retry = fake.requests[2], fake.requests[3], fake.requests[4]
    assert _contents(overflowed)[-1]["parts"][-1] == {"text": "second question"}
    assert SUMMARY_PROMPT in normalized(summarizer)["systemInstruction"]["parts"][0]["text"]
    assert "GEMINI-SUMMARY" in json.dumps(_contents(retry)[0])
    assert _assistants(session)[-1]["content"][0]["text"] == "recovered"


@pytest.mark.parametrize("fake", [[{"error": {"status": 429, "message": "Resource has been exhausted (e.g. check quota).", "retry_after": 7}},
                                   {"text": "after the wait"}]], indirect=True)
async def test_rate_limit_retries_after_the_servers_delay(project: Path, agent_dir: Path, fake: GeminiFakeServer) -> None:
    clock = FakeClock()
    session = create_agent_session(cwd=project, agent_dir=agent_dir, model=f"google/{PRO3}", load_extensions=False, clock=clock)
    events: list[dict[str, Any]] = []
    session.subscribe(events.append)
    await session.prompt("hello")
    start = next(e for e in events if e["type"] == "auto_retry_start")
    assert start["attempt"] == 1 and start["delayMs"] == 7000  # the server's RetryInfo, above the 2 s base
    assert clock.sleeps and clock.sleeps[0] == pytest.approx(7.0)
    assert [m["stopReason"] for m in _assistants(session)] == ["error", "stop"]
    assert len(fake.requests) == 2


@pytest.mark.parametrize("fake", [[{"text": "From the proxy."}]], indirect=True)
async def test_a_base_url_override_sends_litellms_own_gemini_models_to_a_proxy(project: Path, agent_dir: Path,
                                                                                fake: GeminiFakeServer) -> None:
    (agent_dir / "models.json").write_text(json.dumps({"providers": {"gemini": {"baseUrl": fake.base_url, "apiKey": "gk"}}}))
    session, _ = _session(project, agent_dir, model="gemini/gemini-2.5-flash")
    assert session.model is not None and session.model.context_window == 1_048_576  # litellm's catalog still applies
    await session.prompt("hello")
    assert fake.recorded[0].path == "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    assert _assistants(session)[-1]["content"][0]["text"] == "From the proxy."
