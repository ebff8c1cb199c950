"""Two processes, one new session file (issue 13): they must never both write a header into it.

Real processes race over many fresh paths, each reaching the same round at the same instant.
Per round the file must hold exactly one session: one header (line 1), every entry of one
writer, each acknowledged append on disk; the other writer is refused with a clear message
(it never wrote a line) or opened the finished session after the first one closed it.
Rounds: ``PI_TUI_RELIABILITY_ROUNDS`` (default 60; ``make reliability`` runs more).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pi_tui.core.errors import SessionLockedError
from pi_tui.core.session.manager import SessionManager
from tests.reliability.record import FaultRecord

from .race_writer import _assistant

FAULT_CLASS = "concurrent writers"

ROOT = Path(__file__).resolve().parents[2]
ROUNDS = int(os.environ.get("PI_TUI_RELIABILITY_ROUNDS", "60"))


def _objects(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_two_managers_on_one_missing_path_write_one_header(tmp_path: Path) -> None:
    """The sequence behind the race, without timing: both open before either writes."""
    path = tmp_path / "new.jsonl"
    first = SessionManager.open(path, cwd=tmp_path)
    try:
        second = SessionManager.open(path, cwd=tmp_path)
    except SessionLockedError as error:
        assert str(path) in str(error)  # refused at once: the first holds the (new) file
        second = None
    first.append_message({"role": "user", "content": "one", "timestamp": 1})
    first.append_message(_assistant("first"))  # type: ignore[arg-type]
    first.close()
    if second is not None:
        second.append_message({"role": "user", "content": "two", "timestamp": 1})
        second.append_message(_assistant("second"))  # type: ignore[arg-type]
        second.close()
    objects = _objects(path)
    assert [o["type"] for o in objects].count("session") == 1
    assert [o["message"]["content"] for o in objects[1:] if o["message"]["role"] == "user"] == ["one"]


def test_racing_processes_never_share_a_new_session_file(fault: FaultRecord, tmp_path: Path) -> None:
    writers = ("alpha", "beta")
    step = 0.03
    start = time.time() + 2.0  # both children imported and waiting before round 0
    children = [
        subprocess.Popen([sys.executable, "-m", "tests.reliability.race_writer", name, str(tmp_path), str(ROUNDS),
                          str(start), str(step)], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for name in writers
    ]
    reports: dict[str, list[dict]] = {}
    errors: list[str] = []
    for name, child in zip(writers, children, strict=True):
        out, err = child.communicate(timeout=120 + ROUNDS * step)
        assert child.returncode == 0, err
        errors.append(err)
        reports[name] = [json.loads(line) for line in out.splitlines()]
    for index in range(ROUNDS):
        with fault.case(f"two processes create round-{index}.jsonl at once") as case:
            if index == 0:
                case.no_traceback(*errors)
            path = tmp_path / f"round-{index}.jsonl"
            objects = _objects(path)
            headers = [n for n, o in enumerate(objects) if o.get("type") == "session"]
            assert headers == [0], f"round {index}: headers at {headers} in {path}"
            written = {o["id"] for o in objects[1:]}
            winners = [reports[name][index] for name in writers if reports[name][index]["ok"]]
            assert winners, f"round {index}: nobody wrote"
            for report in winners:  # every acknowledged append is on disk, in this one session
                case.kept(set(report["ids"]) <= written, f"round {index}: acknowledged entries")
            for name in writers:
                report = reports[name][index]
                if not report["ok"]:
                    assert "in use by another pi-tui process" in report["error"], report
                    assert not any(f"{name} " in str(o.get("message", {}).get("content")) for o in objects[1:])
            # two winners: the second opened the finished file after the first closed it, and appended
            case.note("refused" if len(winners) == 1 else "handed over")


def test_a_new_session_never_writes_into_a_file_that_appeared_at_its_path(tmp_path: Path) -> None:
    """A generated name cannot collide in practice; if the file is there anyway (a copy, another
    tool), the first write refuses it rather than append a second session to it."""
    # The first write is the first user message (a prompt is never lost: it reaches the disk before
    # the first request), so the stranger's file appears before it.
    manager = SessionManager.create(tmp_path, tmp_path / "sessions")
    path = manager.session_file
    assert path is not None
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("someone else's\n")
    with pytest.raises(FileExistsError):
        manager.append_message({"role": "user", "content": "q", "timestamp": 1})
    manager.close()
    assert path.read_text() == "someone else's\n"
    assert len(manager.get_entries()) == 1  # kept in memory (reported as a failed save by the session)
