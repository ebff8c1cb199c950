"""``pi-tui -p``: what happens on the way to the answer is said on stderr, one line each (JSON
mode reports the same as events): automatic retries and a failed automatic compaction."""

from __future__ import annotations

import json
from pathlib import Path

from pi_tui.testing.fake_server import FakeServer
from tests.modes.test_print_mode import _agent_dir, _run


def test_each_retry_is_one_line_on_stderr_and_the_answer_stays_alone_on_stdout(tmp_path: Path, project: Path) -> None:
    turns = [
        {"text": "A partial answer that will be cut.", "fault": {"kind": "cut", "at": "text", "style": "clean"}},
        {"error": {"status": 503, "message": "upstream overloaded"}},
        {"text": "The real answer."},
    ]
    with FakeServer(turns) as server:
        agent = _agent_dir(tmp_path, server.base_url)
        (agent / "settings.json").write_text(json.dumps({"retry": {"baseDelayMs": 1}}))
        result = _run(["-p", "--no-tools", "hi"], agent, project)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "The real answer.\n"
    assert result.stderr.splitlines() == [
        "pi-tui: retrying in 0.001 s (attempt 1 of 3) after: Connection error: the stream ended before it was "
        "complete (no [DONE]), during the text",
        "pi-tui: retrying in 0.002 s (attempt 2 of 3) after: 503 upstream overloaded",
    ]


def test_a_failed_automatic_compaction_is_one_line_on_stderr(tmp_path: Path, project: Path) -> None:
    turns = [
        {"text": "The first answer.", "usage": {"prompt_tokens": 500, "completion_tokens": 10}},
        {"text": "A long session's answer.", "usage": {"prompt_tokens": 19_500, "completion_tokens": 10}},
        {"when": {"system_contains": "summar"}, "error": {"status": 400, "message": "summaries are off today"}},
    ]
    with FakeServer(turns) as server:
        agent = _agent_dir(tmp_path, server.base_url)
        models = json.loads((agent / "models.json").read_text())
        models["providers"]["fake"]["models"][0]["contextWindow"] = 20_000
        (agent / "models.json").write_text(json.dumps(models))
        (agent / "settings.json").write_text(json.dumps({"compaction": {"reserveTokens": 1000, "keepRecentTokens": 10}}))
        result = _run(["-p", "--no-tools", "first question", "second question"], agent, project)
        summary_requests = server.requests[2:]
    assert result.returncode == 0, result.stderr
    assert result.stdout == "A long session's answer.\n"
    assert len(summary_requests) == 1
    assert result.stderr.splitlines() == ["pi-tui: Auto-compaction failed: Summarization failed: 400 summaries are off today"]
