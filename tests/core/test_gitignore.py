from __future__ import annotations

from pathlib import Path

from pi_tui.core.gitignore import IgnoreScope, IgnoreStack, glob_to_regex, parse_gitignore, walk


def ignored(rules_text: str, rel: str, is_dir: bool = False) -> bool:
    return IgnoreStack([IgnoreScope("", parse_gitignore(rules_text))]).ignored(rel, is_dir)


def test_basic_patterns():
    rules = "# comment\n\n*.log\nbuild/\n/rootonly.txt\ndocs/*.md\n**/cache\nlogs/**\n"
    assert ignored(rules, "a.log") and ignored(rules, "deep/x/a.log")
    assert ignored(rules, "build", is_dir=True) and not ignored(rules, "build", is_dir=False)
    assert ignored(rules, "rootonly.txt") and not ignored(rules, "sub/rootonly.txt")
    assert ignored(rules, "docs/a.md") and not ignored(rules, "docs/sub/a.md")
    assert ignored(rules, "x/y/cache", is_dir=True)
    assert ignored(rules, "logs/a/b.txt")
    assert not ignored(rules, "src/main.py")


def test_negation_last_match_wins_and_escapes():
    rules = "*.txt\n!keep.txt\n\\#hash\nspace\\ \n"
    assert ignored(rules, "a.txt") and not ignored(rules, "keep.txt")
    assert ignored(rules, "#hash")
    assert ignored(rules, "space ")


def test_glob_braces_and_classes():
    import re

    assert re.fullmatch(glob_to_regex("*.{ts,tsx}", braces=True), "a.tsx")
    assert not re.fullmatch(glob_to_regex("*.{ts,tsx}", braces=True), "a.js")
    assert re.fullmatch(glob_to_regex("file[0-9].txt"), "file7.txt")
    assert re.fullmatch(glob_to_regex("file[!0-9].txt"), "filex.txt")
    assert not re.fullmatch(glob_to_regex("*.py"), "a/b.py")


def test_walk_honours_nested_gitignore_and_skips_dot_git(tmp_path: Path):
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "HEAD").write_text("x")
    (tmp_path / ".gitignore").write_text("*.log\nnode_modules/\n")
    (tmp_path / "a.log").write_text("x")
    (tmp_path / ".hidden").write_text("x")
    (tmp_path / "node_modules" / "pkg").mkdir(parents=True)
    (tmp_path / "node_modules" / "pkg" / "i.js").write_text("x")
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / ".gitignore").write_text("secret.txt\n")
    (sub / "secret.txt").write_text("x")
    (sub / "ok.txt").write_text("x")
    (tmp_path / "secret.txt").write_text("x")  # the nested rule does not apply above its folder
    rels = [e.rel for e in walk(tmp_path)]
    assert rels == [".gitignore", ".hidden", "secret.txt", "sub", "sub/.gitignore", "sub/ok.txt"]
    # searching inside the repo still applies the root .gitignore
    (sub / "trace.log").write_text("x")
    assert [e.rel for e in walk(sub)] == [".gitignore", "ok.txt"]
