"""The session's redaction choke point: every model call's error text, whatever the provider."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from pi_tui.core.redact import REDACTED
from pi_tui.sdk import create_agent_session
from pi_tui.testing.scripted import ScriptedProvider
from tests.session.conftest import MODEL

KEY = "sk-session-test-key-123456"


class RaisingProvider:
    """Breaks the provider contract: raises with the key in its text."""

    async def stream(self, request: Any) -> AsyncIterator[Any]:
        raise RuntimeError(f"connection refused for key {KEY}")
        yield  # pragma: no cover


async def test_an_error_message_and_a_raised_error_both_lose_the_key(project: Path, agent_dir: Path) -> None:
    for provider in (ScriptedProvider([{"error": {"status": 401, "message": f"bad key {KEY}"}}]), RaisingProvider()):
        session = create_agent_session(cwd=project, agent_dir=agent_dir, provider=provider, model=MODEL,
                                       api_key=KEY, settings={"retry": {"enabled": False}}, load_extensions=False)
        events: list[dict[str, Any]] = []
        session.subscribe(events.append)
        await session.prompt("hi")
        last = session.messages[-1]
        assert last["stopReason"] == "error" and REDACTED in last["errorMessage"]
        assert KEY not in str(events)
        assert session.session_manager.session_file is not None
        assert KEY not in session.session_manager.session_file.read_text()
        session.session_manager.close()


async def test_a_key_resolved_by_a_command_is_known_once_used(project: Path, agent_dir: Path) -> None:
    import json

    (agent_dir / "models.json").write_text(json.dumps({"providers": {"cmd": {
        "baseUrl": "http://127.0.0.1:9/v1", "api": "openai-completions", "apiKey": f"!echo {KEY}",
        "models": [{"id": "m"}]}}}))
    session = create_agent_session(cwd=project, agent_dir=agent_dir, model="cmd/m", settings={},
                                   provider=ScriptedProvider([{"error": {"status": 401, "message": f"key {KEY}"}}]),
                                   load_extensions=False, no_session=True)
    assert KEY not in session.redactor.values  # commands are not run just to learn keys
    await session.prompt("hi")
    assert KEY in session.redactor.values
    assert KEY not in session.messages[-1]["errorMessage"]


# --------------------------------------------------------------------------- what the model says

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from pi_tui.core.redact import Redactor  # noqa: E402
from pi_tui.session.redaction import ReplyRedactor  # noqa: E402

KEYS = [KEY, KEY + "-and-longer", "tok-ABCDEFGH"]


def _deltas(redactor: ReplyRedactor, text: str, cuts: list[int]) -> list[tuple[str, str]]:
    """Stream ``text`` cut at ``cuts`` as text deltas; (delta, partial text) per event shown."""
    shown, so_far, start = [], "", 0
    for end in [*sorted(set(cuts)), len(text)]:
        if end <= start:
            continue
        so_far += text[start:end]
        partial = {"role": "assistant", "content": [{"type": "text", "text": so_far}]}
        event = redactor.clean({"type": "text_delta", "contentIndex": 0, "delta": text[start:end], "partial": partial})
        shown.append((event["delta"], event["partial"]["content"][0]["text"]))  # type: ignore[typeddict-item]
        start = end
    return shown


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["a ", "\n", "sk-", "sk-session", "-test-key-", "123456", *KEYS]), max_size=25)
       .map("".join), st.lists(st.integers(0, 400), max_size=40))
def test_a_streamed_reply_never_shows_a_key_nor_its_beginning(text: str, cuts: list[int]) -> None:
    final = Redactor(KEYS).redact(text)
    redactor = ReplyRedactor(Redactor(KEYS))
    shown = _deltas(redactor, text, cuts)
    joined = ""
    for delta, partial in shown:
        joined += delta
        assert joined == partial  # the deltas add up to the partial
        assert final.startswith(partial)  # what shows is what the final text will say, so far
    end = redactor.clean({"type": "text_end", "contentIndex": 0, "content": text,
                          "partial": {"role": "assistant", "content": [{"type": "text", "text": text}]}})
    assert end["content"] == final  # type: ignore[typeddict-item]


async def test_a_tool_call_the_model_makes_with_a_key_runs_without_it(project: Path, agent_dir: Path) -> None:
    provider = ScriptedProvider([
        {"text": f"the key {KEY}", "thinking": f"it is {KEY}",
         "tool_calls": [{"name": "bash", "arguments": {"command": f"echo {KEY}-in-args"}}]},
        {"text": "done"}])
    session = create_agent_session(cwd=project, agent_dir=agent_dir, provider=provider, model=MODEL,
                                   api_key=KEY, settings={}, load_extensions=False)
    events: list[dict[str, Any]] = []
    session.subscribe(events.append)
    await session.prompt("hi")
    assert KEY not in str(events) and KEY not in str(session.messages)
    result = next(m for m in session.messages if m["role"] == "toolResult")
    assert result["content"][0]["text"] == f"{REDACTED}-in-args\n"
    assert session.session_manager.session_file is not None
    assert KEY not in session.session_manager.session_file.read_text()
    session.session_manager.close()
