"""``kill -9`` at random points (issue 13): nothing acknowledged is lost, the file still loads.

A real ``pi-tui --mode json`` process runs several prompts against the fake server: slow streamed
answers, ``bash`` tool calls that take a while, automatic compactions with a slow summary. The
test reads its events as they come and sends SIGKILL after a randomly chosen event (plus a random
few milliseconds), so kills land while streaming, while a tool runs, while compacting and while
entries are appended. Then:

* every ``message_end`` the process announced (once the session had an assistant reply; the
  first prompt alone has its own test below) is in the file, exactly as announced, and every
  ``compaction_end`` with a result has its compaction entry: data lost must be 0;
* the file loads with at most one problem, a torn last line, reported as such;
* pi-tui resumes the file (``--session``), answers, and the file then loads cleanly apart from that
  one skipped line.

Rounds: ``PI_TUI_KILL_ROUNDS`` (default 4, one per kind of moment; ``PI_TUI_KILL_ROUNDS=50`` for a long run). Each round's
phase at the kill is recorded in the test's output (``-s``).
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from pi_tui.core.session.loading import load_session_readonly
from pi_tui.testing.fake_server import FakeServer
from tests.reliability.record import Case, FaultRecord

FAULT_CLASS = "process kills"

ROUNDS = int(os.environ.get("PI_TUI_KILL_ROUNDS", "4"))
PROMPTS = 4
TORN = "incomplete last line skipped"


def _turns() -> list[dict[str, Any]]:
    turns: list[dict[str, Any]] = []
    for index in range(PROMPTS):
        turns.append({"when": {"has_tools": True}, "chunk_delay_ms": 15,
                      "tool_calls": [{"id": f"call_{index}", "name": "bash", "chunks": 6,
                                      "arguments": {"command": f"sleep 0.25; echo tool-{index}"}}],
                      "usage": {"prompt_tokens": 400, "completion_tokens": 12}})
        # long answers (so a summary shrinks the context); every other one reports a context past
        # the threshold, so an automatic compaction follows it
        turns.append({"when": {"has_tools": True}, "chunk_delay_ms": 6, "chunk_size": 64,
                      "text": f"answer {index}: " + "a long explanation " * 120,
                      "usage": {"prompt_tokens": 19_500 if index % 2 else 700, "completion_tokens": 600}})
    for index in range(PROMPTS):
        turns.append({"when": {"system_contains": "summar"}, "chunk_delay_ms": 25, "chunk_size": 4,
                      "text": f"## Goal\nSummary {index}: all answered.",
                      "usage": {"prompt_tokens": 900, "completion_tokens": 20}})
    return turns


def _agent_dir(root: Path, base_url: str) -> Path:
    agent = root / "agent"
    agent.mkdir(exist_ok=True)
    models = {"providers": {"fake": {
        "baseUrl": base_url, "api": "openai-completions", "apiKey": "fake-key",
        "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
        "models": [{"id": "fake-model", "contextWindow": 20_000, "maxTokens": 1000}],
    }}}
    (agent / "models.json").write_text(json.dumps(models))
    (agent / "settings.json").write_text(json.dumps({"compaction": {"reserveTokens": 1000, "keepRecentTokens": 50}}))
    return agent


def _env(agent: Path) -> dict[str, str]:
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(agent)}
    env.pop("PYTEST_CURRENT_TEST", None)
    return env


KILL_PLANS = ("streaming", "compacting", "running a tool", "appending")
"""Round ``n`` kills by plan ``n % 4``: after a random event (mostly mid-stream), during the
automatic compaction, during a ``bash`` call, or right after a message was announced (while the
next entries are being appended)."""


def _kill_round(rng: random.Random, plan: str, agent: Path, project: Path, session: Path) -> dict[str, Any]:
    """Run until the plan's moment, SIGKILL, and return what had been announced."""
    trigger, nth, pause = {
        "streaming": (None, rng.randint(3, 260), rng.uniform(0, 0.02)),  # most events are deltas
        "compacting": ("compaction_start", 1, rng.uniform(0, 0.3)),
        "running a tool": ("tool_execution_start", rng.randint(1, PROMPTS), rng.uniform(0, 0.25)),
        "appending": ("message_end", rng.randint(2, 4 * PROMPTS), rng.uniform(0, 0.004)),
    }[plan]
    process = subprocess.Popen(
        [sys.executable, "-m", "pi_tui", "--mode", "json", "--session", str(session),
         *[f"question {i}" for i in range(PROMPTS)]],
        cwd=project, env=_env(agent), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True)
    assert process.stdout is not None
    announced: list[dict[str, Any]] = []
    compactions: list[dict[str, Any]] = []
    seen = matched = 0
    for line in process.stdout:
        event = json.loads(line)
        kind = event.get("type")
        if kind == "message_end":
            announced.append(event["message"])
        elif kind == "compaction_end" and event.get("result"):
            compactions.append(event["result"])
        seen += 1
        matched += trigger is None or kind == trigger
        if matched >= nth:
            break
    time.sleep(pause)
    finished = process.poll() is not None
    process.send_signal(signal.SIGKILL)
    _, stderr = process.communicate(timeout=30)
    return {"announced": announced, "compactions": compactions, "events": seen, "stderr": stderr,
            "phase": "after the run ended" if finished or matched < nth else plan}


def _check_nothing_lost(session: Path, round_info: dict[str, Any], case: Case) -> int:
    """Returns how many announced items are on disk; fails (a data loss) if any is missing."""
    announced = round_info["announced"]
    if not any(m.get("role") == "assistant" for m in announced):
        return 0  # deferred persistence: nothing is written (or promised) before the first answer
    loaded = load_session_readonly(session)
    problems = [w for w in loaded.warnings if TORN not in w]
    assert problems == [], problems
    assert len(loaded.warnings) <= 1
    stored = [e["message"] for e in loaded.entries if e["type"] == "message"]
    for message in announced:
        if message.get("role") in ("user", "assistant", "toolResult"):
            case.kept(message in stored, f"an announced {message.get('role')} message")
    summaries = {e["summary"] for e in loaded.entries if e["type"] == "compaction"}
    for result in round_info["compactions"]:
        case.kept(result["summary"] in summaries, "an announced compaction")
    return len(announced) + len(round_info["compactions"])


RESUME = [{"when": {"has_tools": True}, "text": "resumed fine"},
          {"when": {"system_contains": "summar"}, "text": "## Goal\nresumed summary"}]


@pytest.mark.parametrize("round_number", range(ROUNDS), ids=lambda n: f"kill while {KILL_PLANS[n % len(KILL_PLANS)]} #{n}")
def test_kill_9_at_a_random_point_loses_nothing_acknowledged(fault: FaultRecord, tmp_path: Path, project: Path,
                                                             round_number: int) -> None:
    rng = random.Random(f"kill-{round_number}-{os.environ.get('PI_TUI_KILL_SEED', '')}")
    plan = KILL_PLANS[round_number % len(KILL_PLANS)]
    session = project / "killed.jsonl"
    with fault.case(f"kill -9 while {plan}") as case:
        with FakeServer(_turns()) as server:
            info = _kill_round(rng, plan, _agent_dir(tmp_path, server.base_url), project, session)
        case.no_traceback(info["stderr"])
        kept = _check_nothing_lost(session, info, case)
        case.note(f"killed while {info['phase']} after {info['events']} events; {kept} announced items on disk")
        print(f"round {round_number}: killed while {info['phase']} after {info['events']} events; "
              f"{kept} announced items all on disk")
        torn_before = session.exists() and session.read_bytes()[-1:] not in (b"", b"\n")
        with FakeServer(RESUME) as server:
            resumed = subprocess.run([sys.executable, "-m", "pi_tui", "-p", "--session", str(session), "go on"],
                                     cwd=project, env=_env(_agent_dir(tmp_path, server.base_url)),
                                     capture_output=True, text=True, timeout=90)
        case.no_traceback(resumed.stdout, resumed.stderr)
        assert resumed.returncode == 0, resumed.stderr
        assert "resumed fine" in resumed.stdout
        after = load_session_readonly(session)  # the torn line is an ordinary skipped line by now
        assert [w for w in after.warnings if "line skipped" not in w] == []
        assert len(after.warnings) <= (1 if torn_before else 0)
        assert session.read_bytes().endswith(b"\n")


STALLED = [{"text": "never sent", "fault": {"kind": "stall", "at": "start"}}]


def _wait_for_request(server: FakeServer, process: subprocess.Popen[str], seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not server.requests:
        assert process.poll() is None, process.communicate()[1]
        assert time.monotonic() < deadline, "the first request never reached the server"
        time.sleep(0.02)


@pytest.mark.parametrize("where", ["--session-dir", "--session"])
def test_kill_9_during_the_first_request_keeps_the_prompt(fault: FaultRecord, tmp_path: Path, project: Path,
                                                          where: str) -> None:
    """pi writes a new session only with its first answer, so a kill during the first request
    loses the prompt; pi-tui writes the header and the prompt before that request."""
    sessions = tmp_path / "sessions"
    target = [where, str(sessions if where == "--session-dir" else project / "new.jsonl")]
    with fault.case(f"kill -9 during the first request of a new session ({where})") as case:
        with FakeServer(STALLED) as server:
            process = subprocess.Popen(
                [sys.executable, "-m", "pi_tui", *target, "-p", "remember the milk"], cwd=project,
                env=_env(_agent_dir(tmp_path, server.base_url)), stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            _wait_for_request(server, process)
            process.send_signal(signal.SIGKILL)
            _, stderr = process.communicate(timeout=30)
        case.no_traceback(stderr)
        (session,) = sessions.glob("*.jsonl") if where == "--session-dir" else [project / "new.jsonl"]
        loaded = load_session_readonly(session)
        assert loaded.warnings == [] and loaded.header["cwd"] == str(project)
        users = [e["message"] for e in loaded.entries if e["type"] == "message"]
        case.kept([m["role"] for m in users] == ["user"] and users[0]["content"][0]["text"] == "remember the milk",
                  "the prompt of the first request")
        shown = subprocess.run([sys.executable, "-m", "pi_tui", "context", str(session)], cwd=project,
                               capture_output=True, text=True, timeout=60)
        assert shown.returncode == 0 and "remember the milk" in shown.stdout, shown.stderr
        with FakeServer([{"text": "milk noted"}]) as server:
            resumed = subprocess.run([sys.executable, "-m", "pi_tui", "-p", "--session", str(session), "and eggs"],
                                     cwd=project, env=_env(_agent_dir(tmp_path, server.base_url)),
                                     capture_output=True, text=True, timeout=90)
            sent = [m["content"] for m in server.requests[0]["messages"] if m["role"] == "user"]
        assert resumed.returncode == 0 and "milk noted" in resumed.stdout, resumed.stderr
        assert "remember the milk" in json.dumps(sent) and "and eggs" in json.dumps(sent)


def test_inspecting_a_reserved_session_file_is_no_error(fault: FaultRecord, tmp_path: Path, project: Path) -> None:
    """``--session NEW.jsonl`` creates the file empty and locks it until the first prompt;
    ``pi-tui context`` / ``tree`` on it meanwhile say so instead of failing."""
    session = project / "reserved.jsonl"
    with fault.case("context and tree on a session reserved by a running pi-tui") as case, FakeServer([]) as server:
        process = subprocess.Popen([sys.executable, "-m", "pi_tui", "--mode", "rpc", "--session", str(session)],
                                   cwd=project, env=_env(_agent_dir(tmp_path, server.base_url)),
                                   stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + 60
            while not session.exists():
                assert process.poll() is None and time.monotonic() < deadline
                time.sleep(0.02)
            assert session.read_bytes() == b""
            for command in ("context", "tree"):
                done = subprocess.run([sys.executable, "-m", "pi_tui", command, str(session)], cwd=project,
                                      capture_output=True, text=True, timeout=60)
                case.no_traceback(done.stderr)
                assert done.returncode == 0, done.stderr
                assert "reserved by pi-tui" in done.stderr
        finally:
            process.kill()
            process.communicate(timeout=30)
