"""Opening a file reuses what the load's checks learned (``CheckedEntries``: the entries by id and
where the entries other than plain messages are) instead of walking every entry again. The
session it builds must be the one a full walk builds, for damaged files too: labels, the session
name, the custom entries, the id index, whether the file has started, the leaf."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pi_tui.core.session.manager import SessionManager
from tests.reliability.session_strategies import DamagedSession, damaged_sessions, sessions

FUZZ = settings(max_examples=60, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _state(manager: SessionManager) -> dict[str, Any]:
    by_id = manager.entries_by_id()
    return {
        "by_id": {key: by_id[key] for key in sorted(by_id)},
        "labels": manager.labels(),
        "name": manager.session_name,
        "custom": manager.custom_entries(),
        "started": manager._persistence.started,
        "leaf": manager.leaf_id,
    }


def _opened_and_walked(path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    manager = SessionManager.open(path, cwd=path.parent)
    try:
        opened = _state(manager)
        manager._install(manager.header, manager.get_entries())  # the full walk, no index
        return opened, _state(manager)
    finally:
        manager.close()


def _write(lines: list[Any], path: Path) -> Path:
    path.write_text("".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines))
    return path


@FUZZ
@given(damaged_sessions())
def test_a_file_with_wrong_types_opens_as_a_full_walk_would_build_it(damaged: DamagedSession) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        opened, walked = _opened_and_walked(damaged.write(Path(tmp) / "s.jsonl"))
    assert opened == walked


@FUZZ
@given(sessions(min_entries=3, max_entries=14), st.data())
def test_a_file_with_duplicates_cycles_and_garbage_opens_as_a_full_walk_would_build_it(
        lines: list[dict[str, Any]], data: st.DataObject) -> None:
    header, entries = lines[0], list[Any](lines[1:])
    for _ in range(data.draw(st.integers(1, 4))):
        victim = data.draw(st.sampled_from([e for e in entries if isinstance(e, dict)]))
        kind = data.draw(st.sampled_from(["duplicate", "self", "rewire", "garbage"]))
        if kind == "duplicate":  # the copy is skipped: its label or name must not count
            entries.insert(data.draw(st.integers(entries.index(victim) + 1, len(entries))),
                           {**victim, "label": "copy", "name": "copy"})
        elif kind == "self":  # cut into a root: the index holds the cut copy
            victim["parentId"] = victim["id"]
        elif kind == "rewire":
            victim["parentId"] = data.draw(st.sampled_from([e for e in entries if isinstance(e, dict)]))["id"]
        else:
            entries.insert(data.draw(st.integers(0, len(entries))), "{not json")
    with tempfile.TemporaryDirectory() as tmp:
        opened, walked = _opened_and_walked(_write([header, *entries], Path(tmp) / "s.jsonl"))
    assert opened == walked


def test_the_index_holds_the_copy_that_cut_a_self_parent(tmp_path: Path) -> None:
    header = {"type": "session", "version": 3, "id": "s", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w"}
    user = {"role": "user", "content": "hi", "timestamp": 1}
    first = {"type": "message", "id": "a", "parentId": None, "timestamp": "2026-01-01T00:00:00.000Z", "message": user}
    looped = {**first, "id": "b", "parentId": "b"}
    label = {"type": "label", "id": "c", "parentId": "b", "timestamp": "2026-01-01T00:00:00.000Z",
             "targetId": "a", "label": "start"}
    custom = {"type": "custom", "id": "d", "parentId": "c", "timestamp": "2026-01-01T00:00:00.000Z",
              "customType": "x", "data": {"n": 1}}
    manager = SessionManager.open(_write([header, first, looped, label, custom], tmp_path / "s.jsonl"), cwd=tmp_path)
    try:
        entry = manager.get_entry("b")
        assert entry is not None and entry["parentId"] is None  # shown as a root, in memory
        assert manager.entries_by_id()["b"] is manager.get_entries()[1]
        assert manager.labels() == {"a": "start"}
        assert [e["id"] for e in manager.custom_entries()] == ["d"]
        manager.append_custom_entry("y", {"n": 2})
        assert [e["customType"] for e in manager.custom_entries()] == ["x", "y"]
    finally:
        manager.close()
