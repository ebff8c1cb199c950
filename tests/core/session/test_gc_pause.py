"""Issue 19 item 15: a session is loaded with the cyclic collector paused, and a large one is
frozen out of its reach afterwards (``core/session/gc_pause.py``)."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

import pi_tui.core.session.gc_pause as gc_pause
from pi_tui.core.messages import user_message
from pi_tui.core.session.manager import SessionManager


def _session(tmp_path: Path, messages: int) -> Path:
    sm = SessionManager.create(tmp_path, tmp_path / "sessions")
    for n in range(messages):
        sm.append_message(user_message(f"question {n}"))
    path = sm.session_file
    assert path is not None
    sm.close()
    return path


def test_opening_a_large_session_pauses_the_collector_and_freezes_what_it_loaded(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _session(tmp_path, 6)
    seen: list[str] = []
    real_disable = gc.disable
    monkeypatch.setattr(gc_pause.gc, "disable", lambda: (seen.append("disable"), real_disable())[1])
    monkeypatch.setattr(gc_pause.gc, "freeze", lambda: seen.append("freeze"))
    monkeypatch.setattr(gc_pause, "FREEZE_ENTRIES", 5)
    assert gc.isenabled()
    sm = SessionManager.open(path, cwd=tmp_path)
    assert len(sm.get_entries()) == 6 and gc.isenabled()
    assert seen[0] == "disable" and seen[-1] == "freeze"
    sm.close()

    seen.clear()
    monkeypatch.setattr(gc_pause, "FREEZE_ENTRIES", 7)  # smaller than that: paused, not frozen
    SessionManager.open(path, cwd=tmp_path).close()
    assert "freeze" not in seen and gc.isenabled()


def test_a_collector_that_was_off_stays_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The TUI turns the collector off for its start-up and freezes once everything is loaded."""
    path = _session(tmp_path, 6)
    frozen: list[bool] = []
    monkeypatch.setattr(gc_pause.gc, "freeze", lambda: frozen.append(True))
    monkeypatch.setattr(gc_pause, "FREEZE_ENTRIES", 1)
    gc.disable()
    try:
        SessionManager.open(path, cwd=tmp_path).close()
        assert not gc.isenabled() and frozen == []
    finally:
        gc.enable()
