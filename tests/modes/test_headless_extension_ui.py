"""Without a person to ask (``--mode json`` / ``-p``), ``ctx.ui`` dialogs answer "cancelled" at
once: the permission-gate example blocks the dangerous command with its no-UI reason and the run
ends normally. A real subprocess against the fake server."""

from __future__ import annotations

import json
from pathlib import Path

from pi_tui.testing.fake_server import FakeServer
from tests.modes.test_print_mode import _agent_dir, _run

GATE = Path(__file__).resolve().parents[2] / "examples" / "extensions" / "permission_gate.py"
RM_THEN_TEXT = [
    {"tool_calls": [{"id": "call_1", "name": "bash", "arguments": {"command": "rm -rf victim"}}]},
    {"text": "I could not delete it."},
]


def test_json_mode_blocks_at_once_and_says_there_is_no_ui(tmp_path: Path, project: Path) -> None:
    (project / "victim").mkdir()
    with FakeServer(RM_THEN_TEXT) as server:
        agent = _agent_dir(tmp_path, server.base_url)
        # _run allows 60 s; the example's question would wait 120 s if it were asked.
        result = _run(["--mode", "json", "--no-session", "-e", str(GATE), "-p", "clean up"], agent, project)
        requests = server.requests
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    end = next(e for e in events if e.get("type") == "tool_execution_end")
    reason = "Dangerous command (rm -rf) blocked: no UI to ask for permission"
    assert end["isError"] is True and reason in end["result"]["content"][0]["text"]
    assert reason in json.dumps(requests[1]["messages"][-1])  # the model was told why
    assert (project / "victim").is_dir()
    assert not any(e.get("type") == "extension_ui_request" for e in events)
