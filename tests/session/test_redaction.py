"""The session's redaction choke point: every model call's error text, whatever the provider."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from pi_tui.core.redact import REDACTED
from pi_tui.providers.scripted import ScriptedProvider
from pi_tui.sdk import create_agent_session
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
