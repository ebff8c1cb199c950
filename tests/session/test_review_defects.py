"""Defects found in review, each reproduced through the real session, files and ScriptedProvider."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from tests.session.conftest import FakeClock

SLOW_AGENT_END = '''
import asyncio

def register(pi):
    @pi.on("agent_end")
    async def slow(event):
        await asyncio.sleep(0.05)
'''


async def test_abort_while_run_winds_down_stops_the_retry(make_session, project: Path, clock: FakeClock) -> None:
    """Esc pressed after the error reply arrived but before the retry wait began (here: while an
    extension's agent_end handler runs) must cancel the retry, not be forgotten."""
    folder = project / ".pi" / "extensions"
    folder.mkdir(parents=True)
    (folder / "slow.py").write_text(SLOW_AGENT_END)
    session, provider, _ = make_session([{"error": {"status": 503}}, {"text": "never"}], load_extensions=True)
    aborts: list[asyncio.Future[Any]] = []

    def on_event(event: dict[str, Any]) -> None:
        if event["type"] == "turn_end" and event["message"].get("stopReason") == "error" and not aborts:
            aborts.append(asyncio.ensure_future(session.abort()))

    session.subscribe(on_event)
    await asyncio.wait_for(session.prompt("hi"), 5)
    await asyncio.gather(*aborts)
    assert len(provider.requests) == 1
    assert not session.is_streaming
