"""Skill discovery's ignore rules use the shared gitignore matcher (``core.gitignore``)."""

from __future__ import annotations

from pathlib import Path

from pi_tui.resources.ignore_rules import IgnoreRules


def test_stars_do_not_cross_folders_and_escapes_work(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("team/*/SKILL.md\n\\#draft\nbuild/\n*.md\n!keep.md\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / ".ignore").write_text("/local\n")
    root = IgnoreRules().with_directory(tmp_path)
    rules = root.with_directory(tmp_path / "sub")
    assert rules.ignored(tmp_path / "team" / "a" / "SKILL.md", is_dir=False)
    assert rules.ignored(tmp_path / "#draft", is_dir=False)
    assert rules.ignored(tmp_path / "build", is_dir=True)
    assert not rules.ignored(tmp_path / "build", is_dir=False)
    assert not rules.ignored(tmp_path / "x" / "keep.md", is_dir=False)
    assert rules.ignored(tmp_path / "sub" / "local", is_dir=True)
    assert not rules.ignored(tmp_path / "local", is_dir=True)  # anchored to sub/
    assert not root.ignored(tmp_path / "sub" / "local", is_dir=True)
    assert root.with_directory(tmp_path / "empty") is root


def test_a_star_pattern_with_a_slash_matches_one_level_only(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("drafts/*/SKILL.md\n")
    rules = IgnoreRules().with_directory(tmp_path)
    assert rules.ignored(tmp_path / "drafts" / "x" / "SKILL.md", is_dir=False)
    assert not rules.ignored(tmp_path / "drafts" / "x" / "y" / "SKILL.md", is_dir=False)
