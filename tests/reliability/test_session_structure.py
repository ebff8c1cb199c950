"""Session files damaged in structure (issue 13): parent cycles, self-parents, missing parents,
duplicate ids, lines out of order, a UTF-8 byte order mark, non-object and torn lines, unknown
versions.

Hypothesis applies several kinds of damage at once to a well-formed session; then every reader
runs (see ``session_readers``). Every entry that loads must be reachable in the tree exactly once
(a cycle used to hide the whole tree), every problem is a warning naming its line, and no file
is rewritten. Examples: ``PI_TUI_FUZZ_EXAMPLES`` (default 60).
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from pi_tui.core.session.manager import SessionManager
from pi_tui.core.session.tree import TreeNode, build_tree, replay_labels
from tests.reliability.record import FaultRecord

from .session_readers import read_everything
from .session_strategies import sessions

FAULT_CLASS = "session files: structure"

EXAMPLES = int(os.environ.get("PI_TUI_FUZZ_EXAMPLES", "60"))
EXPLORE = "PI_TUI_FUZZ_EXAMPLES" in os.environ
"""The default run is the same examples every time (a shared suite must not fail at random);
setting the count explores new ones."""
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=not EXPLORE,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.function_scoped_fixture])  # ``fault`` collects every example

GARBAGE = ["[1, 2]", '"a string"', "42", "null", "{not json", "\u00a0"]


@st.composite
def damaged_files(draw: st.DrawFn) -> tuple[bytes, list[str]]:
    """The file's bytes and the kinds of damage done."""
    lines: list[Any] = draw(sessions(min_entries=4, max_entries=12))
    header, entries = lines[0], lines[1:]
    ids = [e["id"] for e in entries]
    done: list[str] = []
    for _ in range(draw(st.integers(1, 5))):
        kind = draw(st.sampled_from(["rewire", "self", "missing", "duplicate", "reorder", "garbage", "version"]))
        victim = draw(st.sampled_from([e for e in entries if isinstance(e, dict)]))
        if kind == "rewire":  # possibly to a later entry: the way to a cycle
            victim["parentId"] = draw(st.sampled_from(ids))
        elif kind == "self":
            victim["parentId"] = victim["id"]
        elif kind == "missing":
            victim["parentId"] = "gone-" + victim["id"]
        elif kind == "duplicate":
            copy = dict(victim) if draw(st.booleans()) else {**victim, "timestamp": "2027-01-01T00:00:00.000Z"}
            entries.insert(draw(st.integers(entries.index(victim) + 1, len(entries))), copy)
        elif kind == "reorder":
            entries.remove(victim)
            entries.insert(draw(st.integers(0, len(entries))), victim)
        elif kind == "garbage":
            entries.insert(draw(st.integers(0, len(entries))), draw(st.sampled_from(GARBAGE)))
        else:
            header["version"] = draw(st.sampled_from([4, 99, "3", None, 3.5, [3]]))
        done.append(kind)
    text = "".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in [header, *entries])
    if draw(st.booleans()):
        text = "\ufeff" + text
        done.append("bom")
    if draw(st.integers(0, 3)) == 0:
        text += '{"type":"message","id":"torn","parentId":null,"timest'
        done.append("torn")
    return text.encode("utf-8"), done


def tree_ids(roots: list[TreeNode]) -> list[str]:
    seen: list[str] = []
    stack = list(roots)
    while stack:
        node = stack.pop()
        seen.append(node.entry["id"])
        stack.extend(node.children)
    return seen


def expected_problems(data: bytes) -> dict[int, str]:
    """line -> a fragment its warning must hold, computed from the file independently."""
    text = data.decode("utf-8").removeprefix("\ufeff")
    found: dict[int, str] = {}
    first: dict[str, int] = {}
    entries: list[tuple[int, dict[str, Any]]] = []
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            found[number] = "incomplete last line" if not text.endswith("\n") and number == text.count("\n") + 1 \
                else "malformed line"
            continue
        if not isinstance(obj, dict):
            found[number] = "malformed line"
        elif number > 1 and obj["id"] in first:
            found[number] = f"is already used by line {first[obj['id']]}"
        elif number > 1:
            first[obj["id"]] = number
            entries.append((number, obj))
    for number, entry in entries:
        parent = entry["parentId"]
        if parent == entry["id"]:
            found[number] = "is its own parent"
        elif parent is not None and parent not in first:
            found[number] = "is not in the file"
    return found


def cycle_members(data: bytes) -> list[set[int]]:
    """The lines of each parent cycle (of two or more entries), computed independently."""
    text = data.decode("utf-8").removeprefix("\ufeff")
    parents: dict[str, Any] = {}
    lines: dict[str, int] = {}
    for number, line in enumerate(text.split("\n"), start=1):
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if number > 1 and isinstance(obj, dict) and obj["id"] not in parents:
            parents[obj["id"]] = obj["parentId"]
            lines[obj["id"]] = number
    cycles: list[set[int]] = []
    for start in parents:
        walk: list[str] = []
        node: Any = start
        while node in parents and node not in walk and parents[node] != node:
            walk.append(node)
            node = parents[node]
        if node in walk and node == start:
            members = {lines[n] for n in walk}
            if members not in cycles:
                cycles.append(members)
    return cycles


def written_ids(data: bytes) -> set[str]:
    """The ids of the entries written whole (the first line of each id), read independently."""
    ids: set[str] = set()
    for number, line in enumerate(data.decode("utf-8").removeprefix("\ufeff").split("\n"), start=1):
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if number > 1 and isinstance(obj, dict):
            ids.add(obj["id"])
    return ids


@FUZZ
@given(damaged_files())
def test_structural_damage_hides_no_entry_and_every_problem_is_named(fault: FaultRecord,
                                                                    damaged: tuple[bytes, list[str]]) -> None:
    data, done = damaged
    for kind in done:
        event(kind)
    if cycle_members(data):
        event("a parent cycle")
    with fault.case(f"structure: {', '.join(done)}") as case, tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "damaged.jsonl"
        path.write_bytes(data)
        printed: list[str] = []
        loaded = read_everything(path, Path(folder), printed)
        case.no_traceback(*printed)
        missing = written_ids(data) - {e["id"] for e in loaded.entries}
        case.kept(not missing, f"entries {sorted(missing)} written whole but not loaded")
        warnings = loaded.warnings
        listed = {int(m.group(1)): w for w in warnings if (m := re.match(re.escape(str(path)) + r":(\d+): ", w))}
        capped = any(" more " in w for w in warnings)
        # nothing hidden: each loaded entry is in the tree once, from the file and from a manager
        ids = [e["id"] for e in loaded.entries]
        shown = tree_ids(build_tree(loaded.entries, replay_labels(loaded.entries)))
        case.kept(sorted(shown) == sorted(ids), "every loaded entry shown once in the tree")
        manager = SessionManager.open(path, cwd=Path(folder))
        try:
            case.kept(sorted(tree_ids(manager.get_tree())) == sorted(ids), "every entry in the manager's tree")
            assert manager.migrated_from is None and manager.backup_file is None
        finally:
            manager.close()
        case.kept(path.read_bytes() == data, "the file as it was written")  # nothing rewritten
        if not capped:
            for line, fragment in expected_problems(data).items():
                assert fragment in listed.get(line, ""), (line, fragment, warnings)
            for members in cycle_members(data):
                assert any("parentId cycle" in listed.get(line, "") for line in members), (members, warnings)
            if "bom" in done:
                assert f"{path}:1: the file starts with a UTF-8 byte order mark; ignored" in warnings
            version = json.loads(data.decode("utf-8").removeprefix("\ufeff").split("\n")[0]).get("version")
            if version != 3:
                assert listed.get(1, "").startswith(f"{path}:1: session header: version"), warnings


@pytest.mark.parametrize("command", ["tree", "context", "export", "print --session", "print --continue", "sessions"])
def test_a_session_path_that_is_a_fifo_is_refused_not_waited_on(fault: FaultRecord, tmp_path: Path,
                                                                command: str) -> None:
    """A FIFO where a session file is expected (named on the command line, or among the session
    files of a folder): every command waited forever to read it."""
    import subprocess
    import sys

    from pi_tui.testing.fake_server import FakeServer
    from tests.reliability.pi_process import child_env, fake_agent_dir

    sessions_dir = tmp_path / "sessions"
    sessions_dir.mkdir()
    fifo = sessions_dir / "2026-01-01T00-00-00-000Z_fifo.jsonl"
    os.mkfifo(fifo)
    args = {"tree": ["tree", str(fifo)], "context": ["context", str(fifo)],
            "export": ["--export", str(fifo), str(tmp_path / "out.html")],
            "print --session": ["-p", "--session", str(fifo), "hi"],
            "print --continue": ["-p", "--continue", "--session-dir", str(sessions_dir), "hi"],
            "sessions": ["sessions", "--session-dir", str(sessions_dir)]}[command]
    with fault.case(f"session file is a FIFO: {command}") as case, FakeServer([{"text": "ok"}]) as server:
        agent = fake_agent_dir(tmp_path, server.base_url)
        try:
            done = subprocess.run([sys.executable, "-m", "pi_tui", "--model", "fake/fake-model", *args]
                                  if command.startswith("print") else [sys.executable, "-m", "pi_tui", *args],
                                  cwd=tmp_path, env=child_env(agent), capture_output=True, text=True, timeout=30,
                                  stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"pi-tui {command} waited on a FIFO session file") from None
        case.no_traceback(done.stdout, done.stderr)
        if command in ("print --continue", "sessions"):  # the FIFO is skipped; the rest works
            assert done.returncode == 0, done.stderr
        else:
            assert done.returncode != 0 and "FIFO" in done.stderr, done.stderr
