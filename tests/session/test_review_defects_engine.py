"""Engine defects found in a second review, each reproduced through the real session, real files
and the ScriptedProvider."""

from __future__ import annotations

import asyncio
from pathlib import Path

SYNC_ABORTING_GATE = '''
def register(pi):
    @pi.on("tool_call")
    def gate(event, ctx):
        ctx.abort()
'''


async def test_sync_extension_handler_calling_ctx_abort_stops_the_run(make_session, project: Path) -> None:
    """pi's ``ctx.abort()`` is synchronous: a plain ``def`` handler calling it got a coroutine
    that was never awaited, so the abort was dropped and the tool and the next turn ran."""
    folder = project / ".pi" / "extensions"
    folder.mkdir(parents=True)
    (folder / "gate.py").write_text(SYNC_ABORTING_GATE)
    (project / "x").write_text("content of x")
    turns = [{"tool_calls": [{"name": "read", "arguments": {"path": "x"}}]}, {"text": "never"}]
    session, provider, _ = make_session(turns, load_extensions=True)
    await asyncio.wait_for(session.prompt("go"), 5)
    assert len(provider.requests) == 1
    assert session.messages[-1]["role"] == "assistant" and session.messages[-1]["stopReason"] == "aborted"
    assert not session.is_streaming


class _BrokenResources:
    """An SDK caller's resources object whose prompt builder fails (the constructor calls it)."""

    def build_system_prompt(self, tools: object) -> str:
        raise RuntimeError("resources broken")


async def test_failed_create_agent_session_releases_the_session_file_lock(make_session, project: Path, agent_dir: Path) -> None:
    """When the AgentSession constructor raised after the SessionManager was opened, the file
    stayed locked: the next open in this process got SessionLockedError."""
    import pytest

    from pi_tui.core.session.manager import SessionManager
    from pi_tui.sdk import create_agent_session
    from pi_tui.testing.scripted import ScriptedProvider
    from tests.session.conftest import MODEL

    first, _, _ = make_session([{"text": "hello"}])
    await first.prompt("hi")
    path = first.session_manager.session_file
    assert path is not None
    first.session_manager.close()
    with pytest.raises(RuntimeError, match="resources broken"):
        create_agent_session(cwd=project, agent_dir=agent_dir, provider=ScriptedProvider([]), model=MODEL,
                             load_extensions=False, session=str(path), resources=_BrokenResources())
    with SessionManager.open(path, cwd=project) as reopened:
        assert reopened.session_file == path


async def test_send_message_trigger_turn_after_a_prompt_ran_first_raises_nothing_in_the_background(make_session) -> None:
    """The continue() scheduled by ``send_message(trigger_turn=True)`` ran after a prompt had
    already answered: it raised ``Cannot continue from message role: assistant`` in a task no
    one awaited ("Task exception was never retrieved")."""
    import gc

    session, provider, events = make_session([{"text": "answer"}, {"text": "unexpected continue"}])
    unhandled: list[dict[str, object]] = []
    loop = asyncio.get_running_loop()
    loop.set_exception_handler(lambda _loop, context: unhandled.append(context))
    try:
        await session.start()
        session.send_message({"customType": "note", "content": "a note"}, trigger_turn=True)
        await session.prompt("hi")  # runs at once, before the scheduled continuation
        for _ in range(20):
            await asyncio.sleep(0)
        await session.agent.wait_for_idle()
        gc.collect()
        await asyncio.sleep(0)
    finally:
        loop.set_exception_handler(None)
    assert unhandled == []
    assert len(provider.requests) == 1  # the prompt's run already answered the note
    assert not session.is_streaming
    assert not [e for e in events if e["type"] == "notify" and e.get("level") == "error"]


async def test_send_message_trigger_turn_failure_is_an_error_event(make_session) -> None:
    """A scheduled continuation that fails (here: no model selected) is reported as an error
    ``notify`` event instead of an exception in a task no one awaits."""
    session, provider, events = make_session([{"text": "unused"}])
    session._model = None  # as after starting without any model configured
    unhandled: list[dict[str, object]] = []
    loop = asyncio.get_running_loop()
    loop.set_exception_handler(lambda _loop, context: unhandled.append(context))
    try:
        session.send_message({"customType": "note", "content": "a note"}, trigger_turn=True)
        for _ in range(20):
            await asyncio.sleep(0)
    finally:
        loop.set_exception_handler(None)
    assert unhandled == []
    errors = [e["message"] for e in events if e["type"] == "notify" and e.get("level") == "error"]
    assert len(errors) == 1 and "No model selected" in errors[0], errors
    assert provider.requests == [] and not session.is_streaming


class _DiskFullOs:
    """The ``os`` module as the session store sees it, with a full disk: every write fails."""

    def __init__(self) -> None:
        import os

        self._os = os

    def __getattr__(self, name: str) -> object:
        return getattr(self._os, name)

    def write(self, fd: int, data: object) -> int:
        import errno

        raise OSError(errno.ENOSPC, "No space left on device")


async def test_disk_full_during_a_run_is_a_clear_error_and_pending_entries_are_written_later(
    make_session, monkeypatch
) -> None:
    """A full disk during a run escaped prompt() as a raw OSError (the loop's attempt to save
    its own failure message failed too). It must be a SessionError naming the file and what
    failed, the session must not stay streaming, and what is pending must reach the file once
    the disk has room."""
    import json

    import pytest

    from pi_tui.core.errors import SessionError
    from pi_tui.core.session import store

    turns = [{"text": "first answer"}, {"text": "second answer"}, {"text": "third answer"}]
    session, _, _ = make_session(turns)
    await session.prompt("first")
    path = session.session_manager.session_file
    assert path is not None
    monkeypatch.setattr(store, "os", _DiskFullOs())
    with pytest.raises(SessionError) as raised:
        await session.prompt("second")
    message = str(raised.value)
    assert str(path) in message and "No space left on device" in message, message
    assert not session.is_streaming
    assert [m["role"] for m in session.messages] == ["user", "assistant", "user", "assistant"]
    monkeypatch.undo()
    await session.prompt("third")
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    texts = [e["message"]["content"][0]["text"] if isinstance(e["message"]["content"], list) else e["message"]["content"]
             for e in lines if e["type"] == "message"]
    assert texts == ["first", "first answer", "second", "second answer", "third", "third answer"]
