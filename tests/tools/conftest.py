"""Helpers for the tools tests: a ToolContext on a temp project, and a process-table probe."""

from __future__ import annotations

from pathlib import Path

import pytest

from pi_tui.core.tool import ToolContext


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    root = tmp_path / "work"
    root.mkdir()
    return ToolContext(cwd=root, artifact_dir=tmp_path / "session.artifacts")
