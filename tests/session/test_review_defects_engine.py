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
