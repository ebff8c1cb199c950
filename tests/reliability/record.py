"""What a reliability test reports about each fault it injects (read by ``report.py``).

Every module under ``tests/reliability/`` sets ``FAULT_CLASS = "<short name>"``: the row of
docs/RELIABILITY.md its tests count towards. A test that injects one fault needs nothing more:
it is one case, survived when it passes. A test that tries several faults (kill points, fuzzed
files, hostile inputs) records each through the ``fault`` fixture::

    def test_kill_while_streaming(fault, tmp_path):
        for point in kill_points:
            with fault.case(f"kill at {point}") as case:
                result = run_and_kill(point)
                case.no_traceback(result.stderr)            # counts, then asserts none
                case.kept(entries_before <= read_entries(), "entries written before the kill")

A case survives when its block finishes without an exception, with nothing lost and no
traceback seen. Tracebacks are counted from the texts handed to ``no_traceback`` and from the
test's own captured stdout/stderr (the conftest scans those), so a crash printed by the code under
test shows up in the table even when the test did not look for it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field

TRACEBACK_MARK = "Traceback (most recent call last)"
# The marker as Python prints it and as a JSON string holds it ("\n" escaped or not).
_TRACEBACK_RE = re.compile(re.escape(TRACEBACK_MARK))


def count_tracebacks(text: str | bytes | None) -> int:
    if text is None:
        return 0
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    return len(_TRACEBACK_RE.findall(text))


@dataclass
class CaseResult:
    name: str
    survived: bool = False
    data_lost: int = 0
    tracebacks: int = 0
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, object]:
        return asdict(self)


class Case:
    """One injected fault: what the test saw of it."""

    def __init__(self, name: str) -> None:
        self.result = CaseResult(name)

    def no_traceback(self, *texts: str | bytes | None) -> None:
        """Count Python tracebacks in what the program printed or wrote; assert there were none."""
        found = sum(count_tracebacks(text) for text in texts)
        self.result.tracebacks += found
        if found:
            shown = next(t for t in texts if count_tracebacks(t))
            if isinstance(shown, bytes):
                shown = shown.decode("utf-8", "replace")
            raise AssertionError(f"{found} traceback(s) in the output:\n{shown[-2000:]}")

    def kept(self, ok: bool, what: str) -> None:
        """Assert that ``what`` survived the fault; record a data loss when it did not."""
        if not ok:
            self.result.data_lost += 1
            self.result.notes.append(f"lost: {what}")
            raise AssertionError(f"data lost: {what}")

    def note(self, text: str) -> None:
        self.result.notes.append(text)


class FaultRecord:
    """The cases one test tried (the ``fault`` fixture)."""

    def __init__(self) -> None:
        self.cases: list[CaseResult] = []

    @contextmanager
    def case(self, name: str) -> Iterator[Case]:
        case = Case(name)
        try:
            yield case
        except BaseException:
            case.result.survived = False
            self.cases.append(case.result)
            raise
        case.result.survived = case.result.data_lost == 0 and case.result.tracebacks == 0
        self.cases.append(case.result)
