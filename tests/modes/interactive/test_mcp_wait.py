"""The first prompt waits for MCP servers still starting (their tools are frozen with it): the
status line says which, and Esc lets the prompt go on without them — against a server that never
answers ``initialize`` with a minute to do so."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from pi_tui.modes.interactive.widgets.status import WorkingStatus
from pi_tui.testing.scripted import ScriptedProvider
from tests.mcp.conftest import hostile, write_servers
from tests.modes.interactive.conftest import ready, wait_for
from tests.modes.interactive.test_mcp_views import SIZE, submit


def status_text(app: Any) -> str:
    status = app.chat.query_one(WorkingStatus)
    return str(status.render()) if status.display else ""


async def test_the_wait_for_a_silent_server_is_shown_and_esc_sends_the_prompt_without_it(
        make_app: Any, agent_dir: Path) -> None:
    write_servers(agent_dir / "mcp.json", {"ok": hostile("normal"), "mute": hostile("silent", startupTimeoutMs=60_000)})
    provider = ScriptedProvider([{"text": "answered"}])
    app, session = make_app(provider=provider)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await wait_for(pilot, lambda: session.mcp.connections["ok"].status == "connected")
        await submit(pilot, "hello")
        await wait_for(pilot, lambda: "Waiting for MCP servers: mute… (Esc: go on without them)" in status_text(app))
        assert not provider.requests  # the prompt waits
        pressed = time.monotonic()
        await pilot.press("escape")
        await wait_for(pilot, lambda: len(provider.requests) == 1)
        assert time.monotonic() - pressed < 20  # not the 60 s startupTimeoutMs
        await wait_for(pilot, lambda: not app.chat.renderer.running and "Waiting" not in status_text(app))
        names = [t.name for t in provider.requests[0].tools]
        assert "mcp__ok__echo" in names and "mcp" in names
        assert not [n for n in names if n.startswith("mcp__mute__")]
        assert session.mcp.connections["mute"].status == "starting"  # still has its minute, for the mcp tool
        assert session.messages[-1]["role"] == "assistant"  # the prompt went out, not aborted
        assert session.messages[-1]["stopReason"] == "stop"
        await session.mcp.close()
