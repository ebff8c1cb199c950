"""Review finding: a write that fails part-way (disk full) must not leave a torn line or
duplicate entries once writing works again."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from pi_tui.core.session import store
from pi_tui.core.session.jsonl import read_session_file
from pi_tui.core.session.manager import SessionManager

from .builders import assistant, user


def test_a_partly_failed_append_is_rolled_back_and_written_whole_later(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    with SessionManager.create(tmp_path, tmp_path / "sessions") as manager:
        manager.append_message(user("hi"))
        manager.append_message(assistant("yo"))
        real_write = os.write
        calls = {"n": 0}

        def disk_fills_up(fd: int, data: bytes | memoryview) -> int:
            calls["n"] += 1
            if calls["n"] == 1:
                return real_write(fd, bytes(data[: len(data) // 2]))  # what fitted
            raise OSError(errno.ENOSPC, "No space left on device")

        monkeypatch.setattr(store.os, "write", disk_fills_up)
        with pytest.raises(OSError):
            manager.append_message(user("x" * 200))
        monkeypatch.setattr(store.os, "write", real_write)
        manager.append_message(assistant("after the disk was freed"))
        path = manager.session_file
        assert path is not None
    parsed = read_session_file(path)
    assert parsed.warnings == []
    ids = [e.get("id") for e in parsed.entries[1:]]
    assert len(ids) == len(set(ids)) == 4
    assert [e["message"]["role"] for e in parsed.entries[1:]] == ["user", "assistant", "user", "assistant"]
