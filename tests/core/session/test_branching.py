"""create_branched_session, fork and fork_from (§1.6, §13.1), including the duplicate-header bug
of pi (§12 item 11) that must not happen here."""

from __future__ import annotations

from pathlib import Path

import pytest

from pi_tui.core.errors import EntryNotFoundError, SessionError, SessionFormatError
from pi_tui.core.session.manager import SessionManager

from .builders import assistant, read_objects, user


@pytest.fixture
def manager(tmp_path: Path):
    with SessionManager.create(tmp_path, tmp_path / "s") as created:
        yield created


def test_branched_session_copies_the_path_and_recreates_labels_with_their_timestamps(manager: SessionManager):
    u1 = manager.append_message(user("one"))
    a1 = manager.append_message(assistant("1"))
    manager.append_label_change(u1, "start")
    u2 = manager.append_message(user("two"))
    manager.branch(a1)
    off_path = manager.append_message(user("side"))
    manager.append_label_change(off_path, "elsewhere")
    old_file = manager.session_file
    label_time = manager.get_label_timestamp(u1)

    new_file = manager.create_branched_session(u2)
    assert new_file is not None and new_file != old_file and new_file.exists()
    objects = read_objects(new_file)
    assert objects[0]["parentSession"] == str(old_file)
    assert objects[0]["id"] == manager.session_id
    assert [o.get("id") for o in objects[1:4]] == [u1, a1, u2]  # the path without its label entry
    # u2's parent was the dropped label: re-linked to a1 (pi leaves it dangling, an orphan)
    assert [o["parentId"] for o in objects[1:4]] == [None, u1, a1]
    label = objects[4]
    assert label["type"] == "label" and label["targetId"] == u1 and label["label"] == "start"
    assert label["parentId"] == u2 and label["timestamp"] == label_time
    assert len(objects) == 5  # the off-path label is not carried over
    assert manager.get_label(u1) == "start" and manager.get_label(off_path) is None
    assert manager.leaf_id == label["id"]
    assert [m["role"] for m in manager.build_session_context().messages] == ["user", "assistant", "user"]


def test_a_branch_without_assistant_is_written_once(manager: SessionManager):
    u1 = manager.append_message(user("first"))
    manager.append_message(assistant())
    manager.create_branched_session(u1)
    path = manager.session_file
    assert path is not None and [o["type"] for o in read_objects(path)] == ["session", "message"]
    manager.append_message(user("again"))
    assert [o["type"] for o in read_objects(path)] == ["session", "message", "message"]
    manager.append_message(assistant("reply"))
    objects = read_objects(path)
    assert [o["type"] for o in objects] == ["session", "message", "message", "message"]
    ids = [o["id"] for o in objects[1:]]
    assert len(set(ids)) == len(ids)
    manager.append_message(user("later"))
    assert sum(1 for o in read_objects(path) if o["type"] == "session") == 1


def test_unknown_leaf_raises(manager: SessionManager):
    with pytest.raises(EntryNotFoundError):
        manager.create_branched_session("nope")


def test_in_memory_branch_replaces_in_place(tmp_path: Path):
    with SessionManager.in_memory(tmp_path) as manager:
        u1 = manager.append_message(user("one"))
        manager.append_message(assistant())
        old_id = manager.session_id
        assert manager.create_branched_session(u1) is None
        assert manager.session_id != old_id and "parentSession" not in manager.header
        assert [e["id"] for e in manager.get_entries()] == [u1]


def test_fork_before_a_user_message(manager: SessionManager):
    u1 = manager.append_message(user("one"))
    a1 = manager.append_message(assistant("1"))
    u2 = manager.append_message(user("second question"))
    result = manager.fork(u2)
    assert result.selected_text == "second question"
    assert result.session_file == manager.session_file
    assert [e["id"] for e in manager.get_entries()] == [u1, a1]
    with pytest.raises(SessionError, match="Invalid entry ID for forking"):
        manager.fork(a1)
    with pytest.raises(SessionError, match="Invalid entry ID for forking"):
        manager.fork("nope")


def test_fork_of_the_first_user_message_starts_an_empty_child_session(manager: SessionManager):
    u1 = manager.append_message(user("first"))
    manager.append_message(assistant())
    old_file = manager.session_file
    result = manager.fork(u1)
    assert result.selected_text == "first"
    assert manager.get_entries() == [] and manager.leaf_id is None
    assert manager.header["parentSession"] == str(old_file)
    assert not manager.session_file.exists()
    manager.append_message(user("q"))
    manager.append_message(assistant())
    objects = read_objects(manager.session_file)
    assert [o["type"] for o in objects] == ["session", "message", "message"]


def test_fork_at_copies_through_the_entry(manager: SessionManager):
    manager.append_message(user("one"))
    a1 = manager.append_message(assistant("1"))
    manager.append_message(user("two"))
    result = manager.fork(a1, "at")
    assert result.selected_text is None and result.session_file is not None
    assert [e["id"] for e in manager.get_entries()][-1] == a1
    assert len(read_objects(result.session_file)) == 3


def test_fork_from_copies_another_session_now(tmp_path: Path):
    with SessionManager.create(tmp_path / "a", tmp_path / "sa") as source:
        source.append_message(user("q"))
        source.append_message(assistant())
        source_file = source.session_file
        ids = [e["id"] for e in source.get_entries()]
    with SessionManager.fork_from(source_file, tmp_path / "b", tmp_path / "sb") as forked:
        objects = read_objects(forked.session_file)
        assert forked.session_file.parent == tmp_path / "sb"
        assert objects[0]["cwd"] == str(tmp_path / "b") and objects[0]["parentSession"] == str(source_file)
        assert [o["id"] for o in objects[1:]] == ids
        forked.append_message(user("more"))
        assert sum(1 for o in read_objects(forked.session_file) if o["type"] == "session") == 1


def test_fork_from_an_assistantless_source_never_duplicates_the_header(tmp_path: Path):
    source = tmp_path / "src.jsonl"
    source.write_text('{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}\n'
                      '{"type":"message","id":"aaaaaaaa","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z",'
                      '"message":{"role":"user","content":"hi","timestamp":1}}\n')
    with SessionManager.fork_from(source, tmp_path, tmp_path / "out") as forked:
        forked.append_message(assistant())
        objects = read_objects(forked.session_file)
    assert [o["type"] for o in objects] == ["session", "message", "message"]


def test_fork_from_an_invalid_source(tmp_path: Path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text("nothing\n")
    for source in (bad, tmp_path / "missing.jsonl"):
        with pytest.raises(SessionFormatError, match="Cannot fork: source session file is empty or invalid"):
            SessionManager.fork_from(source, tmp_path, tmp_path / "out")
