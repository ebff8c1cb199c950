from __future__ import annotations

from pathlib import Path

from pi_tui.resources.context_files import context_budget_bytes, discover_context_files
from pi_tui.resources.loader import LoadedResources, ResourceOptions, load_resources


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


def _real_agents_md(size: int) -> str:
    """Like a published AGENTS.md: a short heading, then paragraphs each on one long line."""
    paragraph = ("Always run the full test suite before committing and explain each failure you see "
                 "in the pull request description, with the command that reproduces it. ") * 60
    text = "# Project guidelines\n\n"
    while len(text) < size:
        text += paragraph.strip() + "\n\n"
    return text[:size]


def _load_for_window(cwd: Path, agent_dir: Path, window: int) -> LoadedResources:
    loaded = load_resources(cwd, agent_dir, ResourceOptions(include_builtin=False))
    loaded.apply_context_budget(window)
    return loaded


def test_a_parent_file_cut_to_its_share_keeps_a_useful_part(tmp_path: Path, agent_dir: Path) -> None:
    """An 8k model, a 33.8 KB parent AGENTS.md of long paragraphs: it was cut at its last line end,
    which left its 20-byte heading; now it keeps most of the share left for it."""
    repo, cwd = tmp_path / "repo", tmp_path / "repo" / "pkg"
    cwd.mkdir(parents=True)
    (repo / "AGENTS.md").write_text(_real_agents_md(33_800))
    (cwd / "AGENTS.md").write_text("Package rules.\n" * 100)
    loaded = _load_for_window(cwd, agent_dir, 8192)
    parent, nearest = loaded.context_files
    assert nearest.sent_bytes is None  # whole
    left_for_parent = context_budget_bytes(8192) - len(nearest.content.encode())
    assert parent.sent_bytes is not None and parent.sent_bytes >= left_for_parent // 2, parent.sent_bytes
    assert parent.content.startswith("# Project guidelines\n\nAlways run the full test suite")
    assert "Use the read tool for the rest." in parent.content


def test_a_file_with_no_useful_share_left_is_left_out_with_a_note(tmp_path: Path, agent_dir: Path) -> None:
    repo, cwd = tmp_path / "repo", tmp_path / "repo" / "pkg"
    cwd.mkdir(parents=True)
    (repo / "AGENTS.md").write_text(_real_agents_md(33_800))
    (cwd / "AGENTS.md").write_text("Package rule number one.\n" * 250)  # 6,250 of the 6,553 bytes
    loaded = _load_for_window(cwd, agent_dir, 8192)
    parent, nearest = loaded.context_files
    assert nearest.sent_bytes is None
    assert parent.sent_bytes == 0
    assert parent.content == (f"[pi-tui: {repo / 'AGENTS.md'} (33.0KB) is left out here (all context files together "
                              "are limited to 6.4KB for this model's window). Use the read tool to read it.]")
    (note,) = [d for d in loaded.diagnostics if d.path == repo / "AGENTS.md"]
    assert "left out" in note.message
