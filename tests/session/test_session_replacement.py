"""Replacing the session (resume/new/fork): file locks, extension events, the re-resolved model."""

from __future__ import annotations

import json

import pytest

from pi_tui.core.errors import SessionLockedError
from pi_tui.core.provider import ModelInfo
from pi_tui.core.session.manager import SessionManager
from tests.session.conftest import MODEL, entries_of


async def test_resuming_the_session_that_is_already_open_works(make_session) -> None:
    session, _, _ = make_session([{"text": "first answer"}, {"text": "second answer"}])
    await session.prompt("hi")
    path = session.session_manager.session_file
    assert path is not None
    await session.switch_session(path)
    assert session.session_manager.session_file == path
    assert [m["role"] for m in session.messages] == ["user", "assistant"]
    await session.prompt("again")
    assert [e["message"]["role"] for e in entries_of(session) if e["type"] == "message"] == [
        "user", "assistant", "user", "assistant",
    ]


async def test_a_failed_resume_keeps_the_current_session_and_its_lock(make_session, project) -> None:
    session, _, _ = make_session([{"text": "first answer"}, {"text": "still here"}])
    await session.prompt("hi")
    current = session.session_manager
    other = SessionManager.create(project, project / "elsewhere")
    other.append_message({"role": "user", "content": "x", "timestamp": 1})
    other.append_message({"role": "assistant", "content": [], "api": "a", "provider": "p", "model": "m",
                          "usage": {}, "stopReason": "stop", "timestamp": 2})
    assert other.session_file is not None
    with other, pytest.raises(SessionLockedError):
        await session.switch_session(other.session_file)
    assert session.session_manager is current
    assert current.session_file is not None
    with pytest.raises(SessionLockedError):  # we hold our own file again
        SessionManager.open(current.session_file, cwd=project)
    await session.prompt("next")
    assert entries_of(session)[-1]["message"]["content"][0]["text"] == "still here"


OTHER = ModelInfo(provider="fake", id="other-model", context_window=100_000, reasoning=True)


async def test_new_session_starts_from_the_cli_choices_again(make_session) -> None:
    """§13.1: /new re-resolves model and thinking level from the CLI flags (kept on the session)
    and the settings, and records both in the new file."""
    session, _, _ = make_session([{"text": "ok"}], thinking_level="low")
    await session.prompt("hi")
    session.set_model(OTHER)
    session.set_thinking_level("high")
    assert await session.new_session() is True
    assert session.model == MODEL and session.thinking_level == "low"
    entries = entries_of_new(session)
    assert [e["type"] for e in entries] == ["session", "model_change", "thinking_level_change"]
    assert (entries[1]["provider"], entries[1]["modelId"]) == ("fake", "fake-model")
    assert entries[2]["thinkingLevel"] == "low"


async def test_new_session_without_cli_model_takes_the_settings_default(make_session, agent_dir, project) -> None:
    models = {"providers": {"local": {"baseUrl": "http://127.0.0.1:9", "api": "openai-completions", "apiKey": "k",
                                      "models": [{"id": "m1", "reasoning": True}, {"id": "m2", "reasoning": True}]}}}
    (agent_dir / "models.json").write_text(json.dumps(models))
    session, _, _ = make_session([], model=None, settings={"defaultProvider": "local", "defaultModel": "m2",
                                                           "defaultThinkingLevel": "minimal"})
    assert session.model is not None and session.model.id == "m2"
    session.set_model(session.model_registry.resolve("local/m1"))  # /model saves m1 as the default
    session.set_thinking_level("high")  # and, as in pi, a chosen level becomes the default level
    await session.new_session()
    assert session.model is not None and session.model.id == "m1" and session.thinking_level == "high"
    assert session.settings.default_thinking_level == "high"
    session.settings.set_global("defaultModel", "m2")  # the settings changed meanwhile: they win
    await session.new_session()
    assert session.model is not None and session.model.id == "m2"


def entries_of_new(session) -> list[dict]:
    """The new session's entries (in memory: nothing is written before the first answer)."""
    return [session.session_manager.header, *session.session_manager.get_entries()]
