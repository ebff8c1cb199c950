"""A file whose read never answers: a hung network/FUSE mount, ``/proc/kmsg`` (``hung_mount.py``).

``open`` succeeds and ``fstat`` says "regular file", so the FIFO/device refusal does not apply;
the first ``read`` blocks in the kernel. Abort must still end the call, nothing may wait on that
thread at exit (RPC mode closing, print mode ending), and where nobody can abort (print mode)
the read gives up after ``STALLED_AFTER_SECONDS`` without progress, saying why.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pi_tui.core.errors import ToolError
from pi_tui.core.tool import ToolContext
from pi_tui.testing.fake_server import FakeServer
from tests.reliability.broken_streams import write_agent_dir
from tests.reliability.hung_mount import ENV, HUNG_NAME, SITE, install, restore
from tests.reliability.record import FaultRecord
from tests.reliability.test_tool_abort import GIVE_UP, RETURNS_WITHIN, call_then_abort, run_tool

FAULT_CLASS = "tools that never return"

READ_HUNG = [{"tool_calls": [{"id": "call_1", "name": "read", "arguments": {"path": HUNG_NAME}}]},
             {"text": "gave up on it"}]


@pytest.fixture
def hung(tmp_path: Path) -> Iterator[tuple[ToolContext, threading.Event]]:
    """A tool context whose cwd holds the hung file; (context, set when a read is blocked)."""
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / HUNG_NAME).write_text("never seen\n")
    from pi_tui.core import cancellable_thread

    release, reading = threading.Event(), threading.Event()
    bound = cancellable_thread.STALLED_AFTER_SECONDS
    patched = install(release, reading, stalled_after=0.5)
    try:
        yield ToolContext(cwd=tmp_path / "work", artifact_dir=tmp_path / "artifacts"), reading
    finally:
        release.set()  # let the blocked threads of this test end
        restore(patched)
        assert bound == cancellable_thread.STALLED_AFTER_SECONDS  # nothing of this test's bound is left


async def test_abort_ends_a_read_that_never_answers(fault: FaultRecord, hung: tuple[ToolContext, threading.Event]) -> None:
    from pi_tui.core import cancellable_thread

    # the abort, not the bound, ends it; ``hung`` puts the real bound back afterwards. (A
    # monkeypatch here, undone after ``hung``'s own restore, left 0.5 s to every later test of the
    # run: a slow image re-encode in test_read was then "a file that gave no data".)
    cancellable_thread.STALLED_AFTER_SECONDS = 60.0
    ctx, reading = hung
    with fault.case("abort read on a hung mount"):
        took = await call_then_abort("read", {"path": HUNG_NAME}, ctx, after=0.3)
        assert reading.is_set()
        assert took < RETURNS_WITHIN, f"read did not return for {took:.1f} s after the abort"


async def test_a_read_that_never_answers_gives_up_and_says_why(fault: FaultRecord,
                                                              hung: tuple[ToolContext, threading.Event]) -> None:
    ctx, reading = hung
    with fault.case("read on a hung mount, nobody aborts"):
        started = time.monotonic()
        with pytest.raises(ToolError) as error:
            import asyncio

            await asyncio.wait_for(run_tool("read", {"path": HUNG_NAME}, ctx), GIVE_UP)
        took = time.monotonic() - started
        assert reading.is_set()
        assert took < 0.5 + 2.0, f"gave up after {took:.1f} s (bound 0.5 s)"
        assert f"Cannot read {HUNG_NAME}: the file gave no data for 0.5 s" in str(error.value)


def _pi(args: list[str], project: Path, agent: Path, stalled_after: float) -> subprocess.Popen[str]:
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(agent), ENV: str(stalled_after),
           "PYTHONPATH": os.pathsep.join(p for p in (str(SITE), os.environ.get("PYTHONPATH", "")) if p)}
    env.pop("PYTEST_CURRENT_TEST", None)
    return subprocess.Popen([sys.executable, "-m", "pi_tui", *args], cwd=project, env=env, text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    (project / HUNG_NAME).write_text("never seen\n")
    return project


def test_print_mode_gives_up_on_a_read_that_never_answers(fault: FaultRecord, tmp_path: Path) -> None:
    project = _project(tmp_path)
    with fault.case("pi-tui -p: read on a hung mount") as case, FakeServer(READ_HUNG) as server:
        ref = write_agent_dir(tmp_path / "agent", "openai", server.base_url)
        process = _pi(["-p", "--model", ref, "read it"], project, tmp_path / "agent", stalled_after=1.0)
        try:
            out, err = process.communicate("", timeout=40)
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()
            raise AssertionError("pi-tui -p hung on a read that never answers") from None
        case.no_traceback(out, err)
        assert process.returncode == 0 and out == "gave up on it\n", err
        tool_message = next(m for m in server.requests[1]["messages"] if m["role"] == "tool")
        assert "gave no data for 1 s" in str(tool_message["content"])


def test_rpc_mode_exits_after_an_aborted_read_that_never_answers(fault: FaultRecord, tmp_path: Path) -> None:
    """The client aborts the read, then closes stdin: the process leaves (it waited forever on
    the blocked thread at exit)."""
    project = _project(tmp_path)
    with fault.case("RPC: abort a read on a hung mount, then close") as case, FakeServer(READ_HUNG) as server:
        ref = write_agent_dir(tmp_path / "agent", "openai", server.base_url)
        process = _pi(["--mode", "rpc", "--model", ref], project, tmp_path / "agent", stalled_after=600.0)
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(json.dumps({"id": "1", "type": "prompt", "message": "read it"}) + "\n")
        process.stdin.flush()
        frames: list[dict[str, object]] = []
        for line in process.stdout:  # until the read has started
            frames.append(json.loads(line))
            if frames[-1].get("type") == "tool_execution_start":
                break
        time.sleep(0.3)
        process.stdin.write(json.dumps({"id": "2", "type": "abort"}) + "\n")
        process.stdin.close()  # (the rest of the output is a few frames: no pipe fills up meanwhile)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            raise AssertionError("pi-tui --mode rpc still running 10 s after stdin closed (an aborted read "
                                 "held it)") from None
        out, err = process.stdout.read(), process.stderr.read() if process.stderr else ""
        case.no_traceback(out, err)
        assert process.returncode == 0, err
        frames += [json.loads(line) for line in out.splitlines()]
        assert any(f.get("type") == "response" and f.get("command") == "abort" for f in frames), frames[-5:]
        assert len(server.requests) == 1  # aborted: no further model call
