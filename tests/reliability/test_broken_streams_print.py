"""Broken streams through ``pi-tui -p`` as a real subprocess: exit status 1, nothing on stdout
(the answer channel), on stderr one line per retry and then the error naming what happened and
where; no tool ran; the session file holds errors only.

Every fault × place on the direct OpenAI-compatible, Anthropic, Gemini and Responses wires; on the wires
through litellm (whose import costs seconds per process) one case per kind of fault.
"""

from __future__ import annotations

import copy
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.reliability.broken_streams import (
    CUT,
    NOT_RUN,
    Fault,
    answer_turn,
    assert_no_answer_and_nothing_ran,
    expected_place,
    fake_for,
    session_messages,
    stream_faults,
    write_agent_dir,
)
from tests.reliability.record import FaultRecord

FAULT_CLASS = "broken streams"

SAMPLED = ("cut-clean@tool_args", "cut-reset@text", "stall@between_tool_calls", "keepalive-stall@text", "garbage-body",
           "html-502")
CASES = [pytest.param(wire, fault, id=f"print-{wire}-{fault.name}")
         for wire in ("openai", "anthropic", "gemini", "responses") for fault in stream_faults(wire)]
CASES += [pytest.param(wire, fault, id=f"print-{wire}-{fault.name}")
          for wire in ("openai-litellm", "anthropic-litellm", "gemini-litellm") for fault in stream_faults(wire) if fault.name in SAMPLED]


@pytest.mark.parametrize(("wire", "broken"), CASES)
def test_print_mode_exits_1_with_the_error_on_stderr_and_runs_nothing(wire: str, broken: Fault, tmp_path: Path,
                                                                     project: Path, fault: FaultRecord) -> None:
    turn = answer_turn(fault=broken.fault)
    agent = tmp_path / "agent"
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(agent)}
    env.pop("PYTEST_CURRENT_TEST", None)
    if wire.endswith("litellm"):
        env["PI_TUI_FORCE_LITELLM"] = "1"
    with fake_for(wire, [turn, copy.deepcopy(turn)]) as server:
        ref = write_agent_dir(agent, wire, server.base_url)
        result = subprocess.run([sys.executable, "-m", "pi_tui", "-p", "--model", ref, "--thinking", "medium",
                                 "run both commands"], cwd=project, env=env, capture_output=True, text=True,
                                stdin=subprocess.DEVNULL, timeout=120)
        requests = len(server.requests)
    with fault.case(f"pi-tui -p, {wire} wire, {broken.name}") as case:
        case.no_traceback(result.stdout, result.stderr)
        (path,) = sorted((agent / "sessions").rglob("*.jsonl"))
        messages = session_messages(path)
        case.kept(messages[0]["content"] == [{"type": "text", "text": "run both commands"}], "the prompt in the session file")
        assert result.returncode == 1, result.stderr
        assert result.stdout == ""
        lines = result.stderr.splitlines()
        error = lines[-1]
        assert error.startswith(broken.cause) and expected_place(wire, broken.where) in error, result.stderr
        # (litellm never shows Gemini's half-received call: nothing of it to name)
        unseen = wire == "anthropic" or (wire == "gemini-litellm" and broken.where == "tool_args")
        if broken.cause == CUT and broken.where in ("tool_args", "between_tool_calls") and not unseen:
            assert NOT_RUN in error
        retries = [line for line in lines if line.startswith("pi-tui: retrying in ")]
        assert len(retries) == (1 if broken.retried else 0) == requests - 1, result.stderr
        assert messages[-1]["errorMessage"] == error
        assert_no_answer_and_nothing_ran(messages, project)
