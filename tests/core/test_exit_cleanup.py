"""``core/exit_cleanup``: what must run however the process ends, ``os._exit`` included."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from pi_tui.core import exit_cleanup

PROGRAM = """
import sys
from pathlib import Path
from pi_tui.core.exit_cleanup import at_exit, exit_now
log = Path(sys.argv[1])
def note(word):
    with log.open("a") as fh:
        fh.write(word + "\\n")
def broken():
    raise RuntimeError("a cleanup that fails")
at_exit(note, "first")
at_exit(broken)
at_exit(note, "last")
if sys.argv[2] == "os._exit":
    exit_now(3)
sys.exit(4)
"""


@pytest.mark.parametrize(("how", "code"), [("os._exit", 3), ("normal", 4)])
def test_cleanups_run_once_newest_first_past_one_that_fails(tmp_path: Path, how: str, code: int) -> None:
    log = tmp_path / "log"
    done = subprocess.run([sys.executable, "-c", PROGRAM, str(log), how], capture_output=True, text=True, timeout=30,
                          check=False)
    assert done.returncode == code, done.stderr
    assert log.read_text() == "last\nfirst\n"  # once each, though atexit runs the list again at a normal exit


def test_a_cleanup_runs_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(exit_cleanup, "_PENDING", [])
    calls: list[int] = []
    exit_cleanup.at_exit(calls.append, 1)
    exit_cleanup.run_exit_cleanups()
    exit_cleanup.run_exit_cleanups()
    assert calls == [1]


def test_a_bounded_exit_does_not_wait_for_a_cleanup_that_hangs(tmp_path: Path) -> None:
    program = ("import time\nfrom pi_tui.core.exit_cleanup import at_exit, exit_now\n"
               "at_exit(time.sleep, 60)\nexit_now(7, within=0.2)\n")
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=20, check=False)
    assert done.returncode == 7, done.stderr
