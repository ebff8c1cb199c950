"""SVG snapshots of /tree and /context at 120x40 (review the SVG diff when they change)."""

from __future__ import annotations

from pathlib import Path

from pi_tui.modes.interactive.screens.context_view import ContextScreen
from pi_tui.modes.interactive.screens.tree import TreeScreen
from tests.modes.interactive.screens.builders import ScreenHost, build_branched_session
from tests.modes.interactive.screens.test_context_view import branched_preview

SIZE = (120, 40)


def test_tree_snapshot(snap_compare, tmp_path: Path):
    session = build_branched_session(tmp_path, tmp_path / "sessions")
    session.manager.append_label_change(session.old_user, "before-refactor")
    assert snap_compare(ScreenHost(TreeScreen(session.manager)), terminal_size=SIZE)


def test_tree_summarize_chooser_snapshot(snap_compare, tmp_path: Path):
    session = build_branched_session(tmp_path, tmp_path / "sessions")
    assert snap_compare(ScreenHost(TreeScreen(session.manager)), press=["down", "enter"], terminal_size=SIZE)


def test_context_snapshot(snap_compare, tmp_path: Path):
    assert snap_compare(ScreenHost(ContextScreen(branched_preview(tmp_path))), terminal_size=SIZE)


def test_tree_search_snapshot(snap_compare, tmp_path: Path):
    session = build_branched_session(tmp_path, tmp_path / "sessions")
    assert snap_compare(ScreenHost(TreeScreen(session.manager)), press=list("second markdown"), terminal_size=SIZE)
