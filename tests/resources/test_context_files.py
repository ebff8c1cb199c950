from __future__ import annotations

from pathlib import Path

from pi_tui.resources.context_files import discover_context_files


def test_order_global_then_root_down_to_cwd(tmp_path: Path, agent_dir: Path) -> None:
    (agent_dir / "AGENTS.md").write_text("global")
    top = tmp_path / "repo"
    mid = top / "pkg"
    cwd = mid / "sub"
    cwd.mkdir(parents=True)
    (top / "AGENTS.md").write_text("top")
    (mid / "CLAUDE.md").write_text("mid-claude")
    (cwd / "AGENTS.md").write_text("cwd")
    files = discover_context_files(cwd, agent_dir)
    assert [(f.path, f.content) for f in files] == [
        (agent_dir / "AGENTS.md", "global"),
        (top / "AGENTS.md", "top"),
        (mid / "CLAUDE.md", "mid-claude"),
        (cwd / "AGENTS.md", "cwd"),
    ]


def test_one_file_per_directory_in_name_priority(tmp_path: Path, agent_dir: Path) -> None:
    cwd = tmp_path / "p"
    cwd.mkdir()
    (cwd / "CLAUDE.md").write_text("claude")
    (cwd / "AGENTS.MD").write_text("upper")
    (agent_dir / "CLAUDE.MD").write_text("global upper claude")
    files = discover_context_files(cwd, agent_dir)
    assert [f.path.name for f in files] == ["CLAUDE.MD", "AGENTS.MD"]


def test_agent_dir_inside_the_walk_is_not_duplicated(tmp_path: Path) -> None:
    cwd = tmp_path / "agent"
    cwd.mkdir()
    (cwd / "AGENTS.md").write_text("once")
    assert [f.content for f in discover_context_files(cwd, cwd)] == ["once"]


def test_unreadable_file_is_reported(tmp_path: Path, agent_dir: Path) -> None:
    cwd = tmp_path / "p"
    cwd.mkdir()
    (cwd / "AGENTS.md").write_bytes(b"\xff\xfe\xfa not utf-8")
    diagnostics: list = []
    assert discover_context_files(cwd, agent_dir, diagnostics) == []
    assert diagnostics[0].path == cwd / "AGENTS.md"
