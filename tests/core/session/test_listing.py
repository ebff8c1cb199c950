"""Session listing, the modified timestamp and "most recent session" (§1.4, §13.1)."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

from pi_tui.core.session.listing import (
    find_most_recent_session,
    list_all_sessions,
    list_sessions,
    session_info,
)
from pi_tui.core.session.manager import SessionManager

from .builders import assistant, user, write_objects


def make_session(folder: Path, cwd: Path, texts: list[str], *, ts: int, name: str | None = None) -> Path:
    with SessionManager.create(cwd, folder) as manager:
        for index, text in enumerate(texts):
            manager.append_message(user(text, ts=ts + index))
        manager.append_message(assistant("answer", ts=ts + 100))
        if name is not None:
            manager.append_session_info(name)
        assert manager.session_file is not None
        return manager.session_file


def test_session_info_fields(tmp_path: Path):
    path = make_session(tmp_path, tmp_path / "proj", ["first question", "second"], ts=1_700_000_000_000, name="Named")
    info = session_info(path)
    assert info is not None
    assert info.cwd == str(tmp_path / "proj") and info.name == "Named"
    assert info.message_count == 3 and info.first_message == "first question"
    assert info.all_messages_text == "first question second answer"
    assert info.modified == datetime.fromtimestamp(1_700_000_000_100 / 1000, UTC)
    assert info.parent_session_path is None
    data = info.to_json()
    assert data["messageCount"] == 3 and data["modified"] == "2023-11-14T22:13:20.100Z"


def test_modified_is_the_last_message_not_the_mtime(tmp_path: Path):
    path = make_session(tmp_path, tmp_path, ["q"], ts=1_600_000_000_000)
    os.utime(path, (2_000_000_000, 2_000_000_000))
    info = session_info(path)
    assert info is not None and info.modified.year == 2020


def test_modified_falls_back_to_the_header_and_no_messages(tmp_path: Path):
    path = write_objects(tmp_path / "a.jsonl", [
        {"type": "session", "version": 3, "id": "s", "timestamp": "2024-05-01T00:00:00.000Z", "cwd": "/x"},
        {"type": "session_info", "id": "aaaaaaaa", "parentId": None, "timestamp": "2024-05-02T00:00:00.000Z", "name": ""},
    ])
    info = session_info(path)
    assert info is not None
    assert info.modified == datetime(2024, 5, 1, tzinfo=UTC)
    assert info.first_message == "(no messages)" and info.name is None


def test_lists_are_sorted_newest_first_and_skip_invalid_files(tmp_path: Path):
    folder = tmp_path / "sessions" / "--a--"
    old = make_session(folder, tmp_path, ["old"], ts=1_600_000_000_000)
    new = make_session(folder, tmp_path, ["new"], ts=1_700_000_000_000)
    (folder / "junk.jsonl").write_text("not a session\n")
    other = make_session(tmp_path / "sessions" / "--b--", tmp_path, ["other"], ts=1_650_000_000_000)
    assert [i.path for i in list_sessions(folder)] == [new, old]
    assert [i.path for i in list_all_sessions(tmp_path / "sessions")] == [new, other, old]
    assert list_sessions(tmp_path / "none") == [] and list_all_sessions(tmp_path / "none") == []


def test_most_recent_is_the_newest_mtime_with_a_valid_header(tmp_path: Path):
    a = make_session(tmp_path, tmp_path, ["a"], ts=1_700_000_000_000)
    b = make_session(tmp_path, tmp_path, ["b"], ts=1_600_000_000_000)
    os.utime(a, (1_000, 1_000))
    os.utime(b, (2_000, 2_000))
    junk = tmp_path / "junk.jsonl"
    junk.write_text("{}\n")
    os.utime(junk, (3_000, 3_000))
    assert find_most_recent_session(tmp_path) == b
    assert find_most_recent_session(tmp_path / "missing") is None


def test_sessions_whose_last_message_has_the_same_millisecond_list_the_file_written_last_first(tmp_path: Path):
    paths = []
    for name in ("a", "b", "c"):
        with SessionManager.create(tmp_path, tmp_path / "s") as manager:
            manager.append_message({"role": "user", "content": name, "timestamp": 5_000})
            manager.append_message({**assistant(), "timestamp": 5_000})
            paths.append(manager.session_file)
    for offset, path in enumerate(paths):  # same message times; files written one after the other
        os.utime(path, ns=(1_000_000_000 + offset, 1_000_000_000 + offset))
    assert [info.path for info in list_sessions(tmp_path / "s")] == paths[::-1]
