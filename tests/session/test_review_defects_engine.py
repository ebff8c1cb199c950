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
    from pi_tui.providers.scripted import ScriptedProvider
    from pi_tui.sdk import create_agent_session
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
