"""Session files that are valid JSON with wrong types and shapes (issue 13).

Hypothesis damages well-formed sessions (every entry type, every message role and block kind)
with values of the wrong type deep inside entries, then every reader runs on the file. Nothing
may raise; every entry nobody damaged loads exactly as written; every damaged entry that does
not load as written is named in a warning with its file and line; the file never changes.

Examples per test: ``PI_TUI_FUZZ_EXAMPLES`` (default 60; ``PI_TUI_FUZZ_EXAMPLES=2000`` for a long
run). A sample of damaged files also goes through the real ``pi-tui`` process.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from pi_tui.core.session.message_checks import check_message
from pi_tui.core.session.well_formed import message_ok
from tests.reliability.record import Case, FaultRecord

from .session_readers import read_everything, write_damaged_sample
from .session_strategies import (
    MESSAGES,
    WRONG,
    DamagedSession,
    damaged_sessions,
    paths_of,
    sessions,
)

FAULT_CLASS = "session files: wrong types"

EXAMPLES = int(os.environ.get("PI_TUI_FUZZ_EXAMPLES", "60"))
EXPLORE = "PI_TUI_FUZZ_EXAMPLES" in os.environ
"""The default run is the same examples every time (a shared suite must not fail at random);
setting the count explores new ones."""
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=not EXPLORE,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.large_base_example,
                                       HealthCheck.function_scoped_fixture])  # ``fault`` collects every example


def warned_lines(path: Path, warnings: list[str]) -> set[int]:
    pattern = re.compile(re.escape(str(path)) + r":(\d+): ")
    return {int(m.group(1)) for w in warnings if (m := pattern.match(w))}


def as_read(value: Any) -> Any:
    """``value`` as the loader reads it: orjson makes an integer past 64 bits a float (as pi's
    JSON.parse does); past a float's range orjson refuses and the stdlib keeps the exact int."""
    if type(value) is int and not -(2**63) <= value < 2**64 and abs(value) < 10**308:
        return float(value)
    if isinstance(value, dict):
        return {key: as_read(item) for key, item in value.items()}
    if isinstance(value, list):
        return [as_read(item) for item in value]
    return value


def check_loaded(session: DamagedSession, path: Path, warnings: list[str], entries: list[dict[str, Any]],
                 case: Case | None = None) -> None:
    by_id = {e["id"]: e for e in entries}
    lost = [intact["id"] for intact in session.intact() if by_id.get(intact["id"]) != intact]
    if case is not None:
        case.kept(not lost, f"well-formed entries {lost} did not load as written")
    assert not lost, f"intact entries {lost} did not load as written"
    named = warned_lines(path, warnings)
    capped = any(" more problems " in w or " more malformed " in w for w in warnings)
    for line, changes in session.damaged.items():
        written = session.lines[line - 1]
        if by_id.get(written["id"]) != as_read(written):  # NaN never equals itself: always needs a warning
            assert line in named or capped, f"line {line} ({changes}) changed without a warning: {warnings}"


@FUZZ
@given(damaged_sessions())
def test_wrong_types_in_entries_never_crash_a_reader_and_are_named_by_line(fault: FaultRecord,
                                                                          session: DamagedSession) -> None:
    damage = "; ".join(f"line {line}: {', '.join(changes)}" for line, changes in sorted(session.damaged.items()))
    with fault.case(f"wrong types ({damage})") as case, tempfile.TemporaryDirectory() as folder:
        path = session.write(Path(folder) / "damaged.jsonl")
        before = path.read_bytes()
        printed: list[str] = []
        loaded = read_everything(path, Path(folder), printed)
        case.no_traceback(*printed)
        check_loaded(session, path, loaded.warnings, loaded.entries, case)
        case.kept(path.read_bytes() == before, "the file as it was written")
        placeholders = sum(e["type"] == "invalid_entry" for e in loaded.entries)
        event("damage named in warnings" if loaded.warnings else "damage that was still well formed")
        event(f"placeholders: {min(placeholders, 3)}")


@FUZZ
@given(sessions(), st.sampled_from(["version", "cwd", "timestamp", "parentSession"]), WRONG)
def test_wrong_types_in_the_header_never_crash_a_reader(fault: FaultRecord, lines: list[dict[str, Any]], key: str,
                                                        value: Any) -> None:
    lines[0][key] = value
    session = DamagedSession(lines)
    with fault.case(f"header {key} = {type(value).__name__}") as case, tempfile.TemporaryDirectory() as folder:
        path = session.write(Path(folder) / "damaged.jsonl")
        printed: list[str] = []
        loaded = read_everything(path, Path(folder), printed)
        case.no_traceback(*printed)
        check_loaded(session, path, loaded.warnings, loaded.entries, case)  # no entry lost to a bad header


DAMAGED_MESSAGES = st.sampled_from(sorted(MESSAGES)).flatmap(lambda role: MESSAGES[role]).flatmap(
    lambda message: st.tuples(st.just(message), st.sampled_from(paths_of(message) or [("role",)]), WRONG))


@FUZZ
@given(DAMAGED_MESSAGES)
def test_the_fast_path_accepts_only_what_the_full_check_leaves_alone(case: tuple[Any, Any, Any]) -> None:
    """``well_formed.message_ok`` skips the checks for speed: it must never let damage through."""
    message, path, value = case
    target = message
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    notes: list[str] = []
    if message_ok(message):
        assert check_message(message, notes.append) is message and notes == []


# --------------------------------------------------------------------------- real processes

def test_the_pi_tui_process_reads_a_damaged_file_without_a_traceback(fault: FaultRecord, tmp_path: Path,
                                                                      project: Path) -> None:
    path, damaged = write_damaged_sample(project)
    before = path.read_bytes()
    env = {**os.environ}
    for args in (["context", str(path)], ["context", str(path), "--json"], ["tree", str(path)],
                 ["sessions", "--session-dir", str(project)], ["--export", str(path), str(tmp_path / "out.html")]):
        with fault.case(f"pi-tui {args[0]} on a damaged file") as case:
            result = subprocess.run([sys.executable, "-m", "pi_tui", *args], cwd=project, env=env, capture_output=True,
                                    text=True, timeout=60)
            case.no_traceback(result.stdout, result.stderr)
        assert result.returncode == 0, (args, result.stderr)
        if args[0] != "sessions":
            assert warned_lines(path, result.stderr.replace("warning: ", "").splitlines()) >= set(damaged), result.stderr
    context = subprocess.run([sys.executable, "-m", "pi_tui", "context", str(path), "--json"], cwd=project,
                             capture_output=True, text=True, timeout=60)
    texts = [m["content"] for m in json.loads(context.stdout)["messages"] if m["role"] == "user"]
    assert texts[0] == "hello" and texts[-1] == "still here"
    assert path.read_bytes() == before
