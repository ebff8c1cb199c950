"""tests/reliability's bookkeeping: cases recorded by the `fault` fixture become docs/RELIABILITY.md."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.reliability.record import TRACEBACK_MARK, FaultRecord, count_tracebacks
from tests.reliability.report import ROOT, aggregate, render


def test_a_case_that_lost_data_or_printed_a_traceback_did_not_survive() -> None:
    record = FaultRecord()
    with record.case("clean") as case:
        case.no_traceback("all good", b"fine")
    with pytest.raises(AssertionError, match="data lost: the header"), record.case("lost") as case:
        case.kept(False, "the header")
    with pytest.raises(AssertionError, match="1 traceback"), record.case("crashed") as case:
        case.no_traceback(f"oops\n{TRACEBACK_MARK}:\n  File x\nValueError\n")
    with pytest.raises(RuntimeError), record.case("raised"):
        raise RuntimeError("boom")
    assert [(c.name, c.survived, c.data_lost, c.tracebacks) for c in record.cases] == [
        ("clean", True, 0, 0),
        ("lost", False, 1, 0),
        ("crashed", False, 0, 1),
        ("raised", False, 0, 0),
    ]
    assert count_tracebacks(f"{TRACEBACK_MARK}\n{TRACEBACK_MARK}".encode()) == 2


def test_aggregate_counts_cases_tests_and_captured_tracebacks() -> None:
    lines: list[dict[str, object]] = [
        {"fault_class": "kills", "module": "tests.reliability.test_kills", "nodeid": "a", "outcome": "passed",
         "captured_tracebacks": 0, "cases": [
             {"name": "p1", "survived": True, "data_lost": 0, "tracebacks": 0},
             {"name": "p2", "survived": True, "data_lost": 0, "tracebacks": 0}]},
        {"fault_class": "kills", "module": "tests.reliability.test_kills", "nodeid": "b", "outcome": "failed",
         "captured_tracebacks": 0, "cases": [{"name": "p3", "survived": False, "data_lost": 2, "tracebacks": 0}]},
        # A test that records nothing is one case; a traceback in its captured output spoils it.
        {"fault_class": "tty", "module": "tests.reliability.test_tty", "nodeid": "c", "outcome": "passed",
         "captured_tracebacks": 1, "cases": []},
        {"fault_class": "tty", "module": "tests.reliability.test_tty", "nodeid": "d", "outcome": "skipped",
         "captured_tracebacks": 0, "cases": []},
    ]
    rows = aggregate(lines)
    kills, tty = rows["kills"], rows["tty"]
    assert (kills.tried, kills.survived, kills.data_lost, kills.tracebacks, kills.failed) == (3, 2, 2, 0, 1)
    assert (tty.tried, tty.survived, tty.tracebacks, tty.skipped, tty.tests) == (1, 0, 1, 1, 2)
    text = render(rows, exit_status=1, seconds=3.0, pytest_args=[])
    assert "| kills | 3 | 2 | 2 | 0 | 2 (1, 0) | `test_kills` |" in text
    assert "| **total** | 4 | 2 | 2 | 1 | 4 (1, 1) |" in text
    assert "- kills: `b`" in text


def test_report_runs_the_tests_and_writes_the_table(tmp_path: Path) -> None:
    out = tmp_path / "RELIABILITY.md"
    done = subprocess.run(
        [sys.executable, "-m", "tests.reliability.report", "--out", str(out), "--",
         "tests/reliability/test_supply_chain.py", "-k", "known_bad or every_entry"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    text = out.read_text()
    assert "| supply chain | 2 | 2 | 0 | 0 | 2 (0, 0) | `test_supply_chain` |" in text
    assert "Do not edit by hand" in text


def test_docs_reliability_lists_every_fault_class() -> None:
    """docs/RELIABILITY.md is regenerated when a fault class is added (make reliability)."""
    import ast

    classes = set()
    for module in sorted((ROOT / "tests" / "reliability").glob("test_*.py")):
        for node in ast.parse(module.read_text()).body:
            if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "FAULT_CLASS" for t in node.targets):
                classes.add(ast.literal_eval(node.value))
    doc = (ROOT / "docs" / "RELIABILITY.md").read_text()
    missing = sorted(c for c in classes if f"| {c} |" not in doc)
    assert not missing, f"docs/RELIABILITY.md has no row for {missing}: run make reliability"
