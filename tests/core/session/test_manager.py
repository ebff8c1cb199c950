"""SessionManager: appends and the tree (§1.6), labels, deferred persistence (§1.4), crash
safety, the lock, and round-trip fidelity on pi's own files."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pi_tui.core.errors import EntryNotFoundError, SessionLockedError
from pi_tui.core.session.jsonl import read_session_file
from pi_tui.core.session.manager import SessionManager

from .builders import assistant, read_objects, tool_result, user


@pytest.fixture
def manager(tmp_path: Path):
    with SessionManager.create(tmp_path, tmp_path / "sessions") as created:
        yield created


def test_appends_chain_parent_ids_and_move_the_leaf(manager: SessionManager):
    ids = [
        manager.append_model_change("prov", "model"),
        manager.append_thinking_level_change("high"),
        manager.append_message(user("hi")),
        manager.append_message(assistant("yo")),
        manager.append_message(tool_result("out")),
        manager.append_custom_entry("ext", {"k": 1}),
        manager.append_custom_message_entry("ext", "note", True, {"d": 1}),
        manager.append_compaction("sum", "x", 10, {"readFiles": [], "modifiedFiles": []}),
        manager.append_session_info("  name  "),
    ]
    ids.append(manager.append_label_change(ids[2], "start"))
    entries = manager.get_entries()
    assert [e["id"] for e in entries] == ids
    assert [e["parentId"] for e in entries] == [None, *ids[:-1]]
    assert manager.leaf_id == ids[-1]
    assert [e["type"] for e in entries] == [
        "model_change", "thinking_level_change", "message", "message", "message", "custom",
        "custom_message", "compaction", "session_info", "label",
    ]
    assert entries[7]["fromHook"] is False
    assert entries[8]["name"] == "name" and manager.session_name == "name"
    assert manager.get_entry(ids[3])["message"]["content"][0]["text"] == "yo"
    assert manager.get_children(ids[2]) == [entries[3]]


def test_branch_reset_and_branch_with_summary(manager: SessionManager):
    u1 = manager.append_message(user("one"))
    a1 = manager.append_message(assistant("1"))
    u2 = manager.append_message(user("two"))
    manager.branch(u1)
    assert manager.leaf_id == u1
    side = manager.append_message(assistant("other"))
    assert manager.get_entry(side)["parentId"] == u1
    assert [e["id"] for e in manager.get_branch()] == [u1, side]
    assert [e["id"] for e in manager.get_branch(u2)] == [u1, a1, u2]
    summary = manager.branch_with_summary(a1, "tried two")
    entry = manager.get_entry(summary)
    assert entry["parentId"] == a1 and entry["fromId"] == a1 and entry["fromHook"] is False
    assert manager.leaf_id == summary
    root_summary = manager.branch_with_summary(None, "from the top", from_hook=True)
    assert manager.get_entry(root_summary)["parentId"] is None
    assert manager.get_entry(root_summary)["fromId"] == "root"
    manager.reset_leaf()
    assert manager.leaf_id is None and manager.build_session_context().messages == []
    new_root = manager.append_message(user("fresh"))
    assert manager.get_entry(new_root)["parentId"] is None
    with pytest.raises(EntryNotFoundError, match="Entry nope not found"):
        manager.branch("nope")
    with pytest.raises(EntryNotFoundError):
        manager.branch_with_summary("nope", "s")


def test_get_tree_sorts_children_by_time_and_carries_labels(manager: SessionManager):
    u1 = manager.append_message(user("one"))
    a1 = manager.append_message(assistant("1"))
    manager.branch(u1)
    a2 = manager.append_message(assistant("2"))
    label = manager.append_label_change(a2, "keep")
    roots = manager.get_tree()
    assert len(roots) == 1 and roots[0].entry["id"] == u1
    assert [child.entry["id"] for child in roots[0].children] == [a1, a2]
    second = roots[0].children[1]
    assert second.label == "keep"
    assert second.label_timestamp == manager.get_entry(label)["timestamp"]
    assert second.children[0].entry["id"] == label  # the label entry is on the path too


def test_labels_set_clear_last_wins_and_never_reach_the_context(manager: SessionManager):
    u1 = manager.append_message(user("one"))
    manager.append_label_change(u1, "first")
    manager.append_label_change(u1, "second")
    assert manager.get_label(u1) == "second"
    manager.append_label_change(u1, None)
    assert manager.get_label(u1) is None and manager.get_label_timestamp(u1) is None
    manager.append_label_change(u1, "again")
    manager.append_label_change(u1, "")
    assert manager.get_label(u1) is None
    assert [m["role"] for m in manager.build_session_context().messages] == ["user"]
    with pytest.raises(EntryNotFoundError):
        manager.append_label_change("missing", "x")


def test_labels_are_replayed_on_load(tmp_path: Path):
    with SessionManager.create(tmp_path, tmp_path) as manager:
        u1 = manager.append_message(user("one"))
        manager.append_message(assistant())
        manager.append_label_change(u1, "a")
        manager.append_label_change(u1, "b")
        path = manager.session_file
    with SessionManager.open(path, cwd=tmp_path) as reopened:
        assert reopened.get_label(u1) == "b"
        assert reopened.labels() == {u1: "b"}


def test_session_name_latest_entry_decides_even_when_blank(manager: SessionManager):
    manager.append_session_info("One")
    manager.append_session_info("Two")
    assert manager.session_name == "Two"
    manager.append_session_info("   ")
    assert manager.session_name is None


def test_nothing_is_written_until_the_first_user_message(tmp_path: Path):
    """pi waits for the first assistant message; pi-tui writes the header and what came before
    with the first user message, so a process killed during the first request keeps the prompt."""
    with SessionManager.create(tmp_path, tmp_path / "s") as manager:
        manager.append_model_change("p", "m")
        path = manager.session_file
        assert path is not None and path.parent == tmp_path / "s"
        assert not path.exists()
        assert manager.entries_on_disk == 0 and not manager.header_on_disk
        manager.append_message(user("hi"))
        objects = read_objects(path)
        assert [o["type"] for o in objects] == ["session", "model_change", "message"]
        assert objects[0]["id"] == manager.session_id and objects[0]["cwd"] == str(tmp_path)
        assert objects[2]["message"]["content"] == user("hi")["content"]
        manager.append_message(assistant())
        manager.append_message(user("more"))
        assert len(read_objects(path)) == 5
        assert path.read_text().endswith("\n")
        assert path.name.endswith(f"_{manager.session_id}.jsonl")


def test_a_session_without_a_message_leaves_no_file(tmp_path: Path):
    with SessionManager.create(tmp_path, tmp_path / "s") as manager:
        manager.append_model_change("p", "m")
        manager.append_thinking_level_change("high")
    assert not (tmp_path / "s").exists() or list((tmp_path / "s").iterdir()) == []


def test_in_memory_sessions_write_nothing_and_have_a_temp_artifact_dir(tmp_path: Path):
    manager = SessionManager.in_memory(tmp_path)
    manager.append_message(user("hi"))
    manager.append_message(assistant())
    assert manager.session_file is None and not manager.is_persisted
    artifacts = manager.artifact_dir
    assert artifacts.is_dir() and manager.artifact_dir == artifacts
    manager.close()
    assert not artifacts.exists()


def test_artifact_dir_sits_beside_the_file(manager: SessionManager):
    assert manager.session_file is not None
    assert manager.artifact_dir == manager.session_file.with_name(manager.session_file.stem + ".artifacts")


def test_new_session_with_explicit_id(manager: SessionManager):
    manager.append_message(user("x"))
    manager.new_session(session_id="my-id")
    assert manager.session_id == "my-id" and manager.leaf_id is None and manager.get_entries() == []
    assert manager.session_file is not None and manager.session_file.name.endswith("_my-id.jsonl")


def test_opening_a_missing_path_starts_a_session_there(tmp_path: Path):
    path = tmp_path / "deep" / "explicit.jsonl"
    with SessionManager.open(path, cwd=tmp_path) as manager:
        assert manager.session_file == path and manager.get_entries() == []
        assert path.read_bytes() == b""  # reserved (created and locked), nothing written yet
        manager.append_message(user("q"))
        assert [o["type"] for o in read_objects(path)] == ["session", "message"]
        manager.append_message(assistant())
    assert [o["type"] for o in read_objects(path)] == ["session", "message", "message"]


def test_a_reserved_path_is_removed_when_the_session_closes_without_a_prompt(tmp_path: Path):
    path = tmp_path / "explicit.jsonl"
    with SessionManager.open(path, cwd=tmp_path) as manager:
        manager.append_model_change("p", "m")
        assert path.exists()
    assert not path.exists()


@pytest.mark.parametrize("content", ["", "not json\n{\"type\":\"message\"}\n"])
def test_a_corrupt_file_gets_one_header_and_keeps_its_path_and_content(tmp_path: Path, content: str):
    path = tmp_path / "broken.jsonl"
    path.write_text(content)
    with SessionManager.open(path, cwd=tmp_path) as manager:
        assert manager.session_file == path
        objects = read_objects(path)
        assert len(objects) == 1 and objects[0]["id"] == manager.session_id
        manager.append_message(user("q"))
        manager.append_message(assistant())  # must not write the header a second time (§12.11)
    objects = read_objects(path)
    assert [o["type"] for o in objects] == ["session", "message", "message"]
    if content:
        assert (tmp_path / "broken.jsonl.corrupt.bak").read_text() == content
        assert "original was kept" in manager.load_warnings[-1]
    else:
        assert not (tmp_path / "broken.jsonl.corrupt.bak").exists()


def test_torn_last_line_is_reported_and_the_next_append_starts_a_fresh_line(tmp_path: Path):
    with SessionManager.create(tmp_path, tmp_path) as manager:
        manager.append_message(user("q"))
        last = manager.append_message(assistant())
        path = manager.session_file
    with path.open("a") as handle:
        handle.write('{"type":"message","id":"deadbeef","parentId":"')  # killed mid-write
    with SessionManager.open(path, cwd=tmp_path) as reopened:
        assert reopened.load_warnings == [f"{path}:4: incomplete last line skipped (a write was cut off)"]
        assert reopened.leaf_id == last
        new = reopened.append_message(user("after the crash"))
    lines = path.read_text().split("\n")
    assert lines[3].startswith('{"type":"message","id":"deadbeef"')
    assert json.loads(lines[4])["id"] == new
    parsed = read_session_file(path)
    assert parsed.malformed_lines == [4] and not parsed.torn_last_line
    assert parsed.entries[-1]["id"] == new and parsed.entries[-1]["parentId"] == last


def test_malformed_lines_are_reported_and_the_rest_loads(tmp_path: Path):
    with SessionManager.create(tmp_path, tmp_path) as manager:
        manager.append_message(user("q"))
        manager.append_message(assistant())
        path = manager.session_file
    lines = path.read_text().splitlines()
    path.write_text("\n".join([lines[0], "garbage", lines[1], "{oops", lines[2]]) + "\n")
    with SessionManager.open(path, cwd=tmp_path) as reopened:
        assert len(reopened.get_entries()) == 2
        assert reopened.load_warnings == [
            f"{path}:2: malformed line skipped (not a JSON object)",
            f"{path}:4: malformed line skipped (not a JSON object)",
        ]


def test_two_managers_on_one_file_get_a_clear_error(tmp_path: Path):
    first = SessionManager.create(tmp_path, tmp_path)
    first.append_message(user("q"))
    first.append_message(assistant())
    path = first.session_file
    with pytest.raises(SessionLockedError) as caught:
        SessionManager.open(path, cwd=tmp_path)
    assert str(path) in str(caught.value) and "in use" in str(caught.value)
    first.close()
    with SessionManager.open(path, cwd=tmp_path) as second:
        assert len(second.get_entries()) == 2


def test_the_lock_holds_across_processes(tmp_path: Path):
    import subprocess
    import sys

    with SessionManager.create(tmp_path, tmp_path) as manager:
        manager.append_message(user("q"))
        manager.append_message(assistant())
        code = (
            "import sys; from pathlib import Path\n"
            "from pi_tui.core.errors import SessionLockedError\n"
            "from pi_tui.core.session.manager import SessionManager\n"
            "try:\n    SessionManager.open(Path(sys.argv[1]), cwd=Path('.'))\n"
            "except SessionLockedError as e:\n    print(e); sys.exit(3)\n"
        )
        result = subprocess.run([sys.executable, "-c", code, str(manager.session_file)], capture_output=True, text=True)
        assert result.returncode == 3, result.stderr
        assert str(manager.session_file) in result.stdout


def test_continue_recent_opens_the_newest_session(tmp_path: Path):
    folder = tmp_path / "s"
    with SessionManager.continue_recent(tmp_path, folder) as fresh:
        assert fresh.get_entries() == []
        fresh.append_message(user("q"))
        fresh.append_message(assistant())
        path = fresh.session_file
    with SessionManager.continue_recent(tmp_path, folder) as resumed:
        assert resumed.session_file == path and len(resumed.get_entries()) == 2


@pytest.mark.parametrize(
    "name", ["v3-compact-manual.jsonl", "v3-compact-threshold.jsonl", "v3-compact-overflow.jsonl", "v1-before-compaction.jsonl"]
)
def test_round_trip_keeps_every_object_line_for_line(pi_fixtures: Path, tmp_path: Path, name: str):
    path = Path(shutil.copy(pi_fixtures / name, tmp_path / name))
    with SessionManager.open(path, cwd=tmp_path) as manager:
        loaded = [manager.header, *manager.get_entries()]
        manager._persistence.rewrite(manager.header, manager.get_entries())  # save everything
    saved = read_objects(path)
    assert saved == loaded
    if name.startswith("v3"):
        assert saved == read_objects(pi_fixtures / name)
        assert path.read_bytes() == (pi_fixtures / name).read_bytes()


def test_unknown_fields_and_entry_types_survive(tmp_path: Path):
    header = {"type": "session", "version": 3, "id": "s", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/p",
              "futureHeader": {"x": 1}}
    odd = {"type": "hologram", "id": "aaaaaaaa", "parentId": None, "timestamp": "2026-01-01T00:00:01.000Z", "z": [1]}
    msg = {"type": "message", "id": "bbbbbbbb", "parentId": "aaaaaaaa", "timestamp": "2026-01-01T00:00:02.000Z",
           "message": {**assistant(), "newField": True}, "extra": "kept"}
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(o, separators=(",", ":")) + "\n" for o in (header, odd, msg)))
    with SessionManager.open(path, cwd=tmp_path) as manager:
        manager.append_message(user("next"))
    objects = read_objects(path)
    assert objects[:3] == [header, odd, msg]
    assert objects[3]["parentId"] == "bbbbbbbb"


def test_an_unopenable_path_is_a_session_error_naming_it(tmp_path: Path):
    from pi_tui.core.errors import SessionError

    with pytest.raises(SessionError, match=f"Cannot open session file {tmp_path}"):
        SessionManager.open(tmp_path, cwd=tmp_path)


def test_latest_on_branch_is_the_nearest_to_the_leaf_on_its_path(manager: SessionManager):
    manager.append_thinking_level_change("low")
    first = manager.append_message(user("q"))
    manager.append_thinking_level_change("high")
    manager.append_message(assistant())
    assert manager.latest_on_branch("thinking_level_change")["thinkingLevel"] == "high"
    manager.branch(first)  # the "high" entry is off this branch now
    assert manager.latest_on_branch("thinking_level_change")["thinkingLevel"] == "low"
    assert manager.latest_on_branch("model_change") is None
