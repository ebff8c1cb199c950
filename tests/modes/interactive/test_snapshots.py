"""SVG snapshots of the main layouts at 120x40 and 80x24 (fixed clock, fixed durations, fixed paths).

Regenerate after an intended change with ``pytest tests/modes/interactive/test_snapshots.py
--snapshot-update`` and look at the report before committing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pi_tui.modes.interactive.app import PiApp
from pi_tui.modes.interactive.messages import AgentEventReceived
from pi_tui.modes.interactive.widgets.editor import PromptEditor
from pi_tui.modes.interactive.widgets.tool_call import ToolCallPanel
from pi_tui.sdk import create_agent_session
from pi_tui.testing.scripted import ScriptedProvider
from tests.modes.interactive.conftest import fixed_clock, ready

USAGE = {"prompt_tokens": 2400, "completion_tokens": 120}

CONVERSATION_TURNS: list[dict[str, Any]] = [
    {"thinking": "Look at the file first.", "text": "I'll run the tests first.", "usage": USAGE,
     "tool_calls": [{"id": "t1", "name": "bash", "arguments": {"command": "printf '1 failed, 118 passed\\n'"}}]},
    {"text": "One failure: `load()` ignores the encoding. Fixing it:", "usage": USAGE,
     "tool_calls": [{"id": "t2", "name": "edit", "arguments": {
         "path": "app.py", "edits": [{"oldText": "return json.loads(p.read_text())",
                                      "newText": 'return json.loads(p.read_text("utf-8"))'}]}}]},
    {"text": "Fixed. The suite should pass now:\n\n- **cause**: default locale encoding\n- **fix**: explicit UTF-8",
     "usage": USAGE},
]

CONTEXT_EVENTS: list[dict[str, Any]] = [
    {"type": "auto_retry_start", "attempt": 1, "maxAttempts": 3, "delayMs": 2000, "errorMessage": "429 rate limited"},
    {"type": "auto_retry_end", "success": True, "attempt": 1},
    {"type": "compaction_start", "reason": "threshold"},
    {"type": "compaction_end", "reason": "threshold", "aborted": False, "willRetry": False,
     "result": {"summary": "## Goal\nFix the failing test.", "firstKeptEntryId": "a3f9c0de", "tokensBefore": 7412},
     "tokensAfter": 1980, "durationMs": 3100},
    {"type": "artifact_saved", "toolCallId": "t9", "toolName": "read", "path": "s.artifacts/read-t9.txt",
     "originalBytes": 86016},
    {"type": "context_reduced", "step": "micro", "bytesBefore": 40000, "bytesAfter": 900, "tokensBefore": 12000,
     "tokensAfter": 2200, "detail": "6 results cleared"},
    {"type": "thinking_level_changed", "level": "high"},
]


def _app(home: Path, agent_dir: Path, turns: list[dict[str, Any]]) -> PiApp:
    project = home / "project"
    project.mkdir(exist_ok=True)
    (project / "app.py").write_text("import json\n\n\ndef load(p):\n    return json.loads(p.read_text())\n")
    # Checkpoints off: their events-pane line carries a duration in ms, which differs run to run
    # (tests/modes/interactive/test_event_lines_checkpoints.py has the line itself).
    session = create_agent_session(cwd=project, agent_dir=agent_dir, provider=ScriptedProvider(turns),
                                   settings={"checkpoints": {"enabled": False}}, load_extensions=False,
                                   no_session=True)
    return PiApp(session, cwd=project, agent_dir=agent_dir, clock=fixed_clock)


async def _normalise(pilot: Any) -> None:
    """Things that differ run to run: tool durations and the cursor blink."""
    for panel in pilot.app.screen.query(ToolCallPanel):
        panel.duration = 1.2
        panel.repaint()
    pilot.app.screen.query_one(PromptEditor).cursor_blink = False
    await pilot.pause()


async def _run_conversation(pilot: Any) -> None:
    await ready(pilot)
    await pilot.app.chat.submit("run the tests and fix what fails")
    await pilot.app.chat.workers.wait_for_complete()
    await pilot.pause()
    await _normalise(pilot)


async def _post_events(pilot: Any) -> None:
    await ready(pilot)
    for event in CONTEXT_EVENTS:
        pilot.app.chat.post_message(AgentEventReceived(event))
    await pilot.pause()
    await _normalise(pilot)


@pytest.mark.parametrize("size", [(120, 40), (80, 24)], ids=["120x40", "80x24"])
def test_conversation_layout(snap_compare, isolated_home, agent_dir, size):
    app = _app(isolated_home, agent_dir, CONVERSATION_TURNS)
    assert snap_compare(app, terminal_size=size, run_before=_run_conversation)


@pytest.mark.parametrize("size", [(120, 40), (80, 24)], ids=["120x40", "80x24"])
def test_events_pane_layout(snap_compare, isolated_home, agent_dir, size):
    app = _app(isolated_home, agent_dir, [])
    assert snap_compare(app, terminal_size=size, run_before=_post_events)


async def _slash_menu(pilot: Any) -> None:
    await ready(pilot)
    pilot.app.screen.query_one(PromptEditor).insert("/te")
    await pilot.pause()
    await pilot.pause()
    await _normalise(pilot)


def test_slash_completion_rows_stay_one_line(snap_compare, isolated_home, agent_dir):
    """The built-in ``/test`` template has a long hint and description: its row is cut with an
    ellipsis and keeps ``[template]`` at the end, on one line (it used to wrap)."""
    app = _app(isolated_home, agent_dir, [])
    assert snap_compare(app, terminal_size=(80, 24), run_before=_slash_menu)
