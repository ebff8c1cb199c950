"""Reliability tests: the ``fault`` fixture and the per-test results ``report.py`` aggregates.

Each module here must set ``FAULT_CLASS`` (collection fails otherwise). When the environment
variable ``PI_TUI_RELIABILITY_OUT`` names a file, one JSON line per test is appended to it:
module, fault class, outcome and the cases the test recorded (``record.py``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.reliability.record import CaseResult, FaultRecord, count_tracebacks

HERE = Path(__file__).resolve().parent
OUT_ENV = "PI_TUI_RELIABILITY_OUT"
_RECORD_KEY = pytest.StashKey[FaultRecord]()
_RESULT_KEY = pytest.StashKey[dict[str, object]]()


def _is_ours(item: pytest.Item) -> bool:
    return HERE in Path(str(item.path)).resolve().parents


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    missing = sorted(
        {
            str(Path(str(item.path)).relative_to(HERE.parent.parent))
            for item in items
            if _is_ours(item) and not isinstance(getattr(item.module, "FAULT_CLASS", None), str)  # type: ignore[attr-defined]
        }
    )
    if missing:
        raise pytest.UsageError(
            "every module under tests/reliability/ sets FAULT_CLASS = \"<short name>\" "
            f"(the row of docs/RELIABILITY.md it counts towards); missing in: {', '.join(missing)}"
        )


@pytest.fixture
def fault(request: pytest.FixtureRequest) -> Iterator[FaultRecord]:
    """Record the cases a test tries (see record.py)."""
    record = FaultRecord()
    request.node.stash[_RECORD_KEY] = record
    yield record


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    report = yield
    if not _is_ours(item):
        return report
    result = item.stash.setdefault(
        _RESULT_KEY,
        {"nodeid": item.nodeid, "outcome": "passed", "captured_tracebacks": 0},
    )
    if report.failed:
        result["outcome"] = "failed"
    elif report.skipped and result["outcome"] != "failed":
        result["outcome"] = "skipped"
    # Tracebacks printed by the code under test (captured stdout/stderr/log of this phase).
    # (report.sections repeats earlier phases' sections: count each phase's own once.)
    for name, text in report.sections:
        if not name.endswith(f" {report.when}"):
            continue
        result["captured_tracebacks"] = int(result["captured_tracebacks"]) + count_tracebacks(text)  # type: ignore[call-overload]
    if report.when == "teardown":
        _write(item, result)
    return report


def _write(item: pytest.Item, result: dict[str, object]) -> None:
    out = os.environ.get(OUT_ENV)
    if not out:
        return
    record = item.stash.get(_RECORD_KEY, None)
    cases: list[CaseResult] = list(record.cases) if record else []
    line = {
        **result,
        "module": item.module.__name__,  # type: ignore[attr-defined]
        "fault_class": item.module.FAULT_CLASS,  # type: ignore[attr-defined]
        "cases": [case.to_json() for case in cases],
    }
    with open(out, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(line) + "\n")
