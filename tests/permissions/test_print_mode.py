"""Print mode with the real permission defaults, as a subprocess (``pi-tui -p``) against the fake
HTTP model: what would ask is denied with one line on stderr and the file is not made; in
``auto`` mode bash runs in the sandbox; ``--mode json`` carries the denial as an event. The gate
is built at the first tool call there (tests/permissions/test_lazy_preflight.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pi_tui.permissions.sandbox import find_bwrap
from pi_tui.testing.fake_server import FakeServer
from tests.permissions.conftest import FakeWorld

pytestmark = pytest.mark.skipif(find_bwrap() is None, reason="NO SANDBOX TESTED: bwrap is not installed")
REPO = Path(__file__).resolve().parents[2]


def run(world: FakeWorld, *args: str, temp: Path | None = None) -> tuple[subprocess.CompletedProcess[str], FakeServer]:
    script = [{"tool_calls": [{"id": "b", "name": "bash", "arguments": {"command": "echo made > made.txt"}}]},
              {"text": "finished"}]
    with FakeServer(script) as server:
        (world.agent / "models.json").write_text(json.dumps({"providers": {"fake": {
            "baseUrl": server.base_url, "api": "openai-completions", "apiKey": "k",
            "models": [{"id": "fake-model", "contextWindow": 8000}]}}}))
        env = {**os.environ, "HOME": str(world.home), "PI_CODING_AGENT_DIR": str(world.agent), "PYTHONPATH": str(REPO)}
        env.pop("PI_PERMISSION_MODE", None)
        if temp is not None:  # as outside the tests: the run ends with os._exit (print_mode.run_print_mode)
            env.pop("PYTEST_CURRENT_TEST", None)
            env["TMPDIR"] = str(temp)
        done = subprocess.run([sys.executable, "-m", "pi_tui", "--model", "fake/fake-model", "--trust-project", *args,
                               "-p", "make it"], cwd=world.project, env=env, capture_output=True, text=True,
                              timeout=60, check=False)
    return done, server


def test_default_mode_denies_on_stderr(fake_world: FakeWorld) -> None:
    done, _ = run(fake_world, "--permission-mode", "default")
    assert done.returncode == 0, done.stderr
    assert ("pi-tui: permission denied (default mode): bash `echo made > made.txt`: bash asks first in default "
            "mode (it runs in the sandbox), and it was not asked (print mode: nobody is there to answer)") in done.stderr
    assert done.stdout.strip() == "finished" and not (fake_world.project / "made.txt").exists()


def test_auto_mode_runs_bash_in_the_sandbox(fake_world: FakeWorld) -> None:
    done, _ = run(fake_world)  # trusted, no mode: auto where the sandbox works
    assert done.returncode == 0, done.stderr
    assert "permission denied" not in done.stderr
    assert (fake_world.project / "made.txt").read_text() == "made\n"


def test_a_run_that_made_a_sandbox_leaves_no_temp_folder_behind(fake_world: FakeWorld, tmp_path: Path) -> None:
    """The sandbox's private /tmp is removed at exit. It was registered with ``atexit``, which the
    ``os._exit`` a CLI run ends with skips: each such run (and each TUI session) left one behind."""
    temp = tmp_path / "tmp"
    temp.mkdir()
    done, _ = run(fake_world, temp=temp)
    assert done.returncode == 0, done.stderr
    assert (fake_world.project / "made.txt").read_text() == "made\n"  # bash ran, in the sandbox
    assert list(temp.iterdir()) == []


def test_json_mode_carries_the_denial_as_an_event_and_plan_is_read_only(fake_world: FakeWorld) -> None:
    done, _ = run(fake_world, "--mode", "json", "--permission-mode", "dontAsk")
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert not any(e.get("type") == "permission_denied" for e in events)  # dontAsk: sandboxed bash runs
    assert (fake_world.project / "made.txt").exists()
    (fake_world.project / "made.txt").unlink()
    done, _ = run(fake_world, "--mode", "json", "--permission-mode", "plan")
    denied = [e for e in (json.loads(line) for line in done.stdout.splitlines() if line.startswith("{"))
              if e.get("type") == "tool_execution_end"]
    assert denied and denied[0]["isError"] and "Read-only file system" in json.dumps(denied[0])
    assert not (fake_world.project / "made.txt").exists()
    done, _ = run(fake_world, "--mode", "json", "--permission-mode", "default")
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    (event,) = [e for e in events if e.get("type") == "permission_denied"]
    assert event["toolCallId"] == "b" and event["mode"] == "default" and "it was not asked" in event["reason"]
    assert not (fake_world.project / "made.txt").exists()
