"""Replacing the session (resume/new/fork): file locks, extension events, the re-resolved model."""

from __future__ import annotations

import pytest

from pi_tui.core.errors import SessionLockedError
from pi_tui.core.session.manager import SessionManager
from tests.session.conftest import entries_of


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
