from __future__ import annotations

import unicodedata
from pathlib import Path

from pi_tui.tools.paths import expand_path, resolve_read_path, resolve_to_cwd


def test_at_prefix_unicode_spaces_and_tilde(isolated_home: Path):
    assert expand_path("@src/a.py") == "src/a.py"
    assert expand_path("my\u00a0file\u2003name\u3000x") == "my file name x"
    assert expand_path("~") == str(isolated_home)
    assert expand_path("~/notes.txt") == f"{isolated_home}/notes.txt"
    assert expand_path("~user/x") == "~user/x"  # only ~ and ~/ expand, as pi


def test_relative_paths_resolve_against_cwd(tmp_path: Path):
    assert resolve_to_cwd("a/../b.txt", tmp_path) == tmp_path / "b.txt"
    assert resolve_to_cwd("/etc/hosts", tmp_path) == Path("/etc/hosts")


def test_read_tries_macos_screenshot_variants(tmp_path: Path):
    name = "Screenshot 2024-01-01 at 10.00.00\u202fPM.png"
    (tmp_path / name).write_bytes(b"x")
    assert resolve_read_path("Screenshot 2024-01-01 at 10.00.00 PM.png", tmp_path) == tmp_path / name
    # pi 0.73.1 matches AM/PM case-insensitively
    lower = "shot at 9.00.00\u202fam.png"
    (tmp_path / lower).write_bytes(b"x")
    assert resolve_read_path("shot at 9.00.00 am.png", tmp_path) == tmp_path / lower


def test_read_tries_nfd_and_curly_quote_variants(tmp_path: Path):
    nfd = unicodedata.normalize("NFD", "café.txt")
    (tmp_path / nfd).write_text("x")
    assert resolve_read_path("café.txt", tmp_path).name == nfd
    curly = "Dad\u2019s notes.txt"
    (tmp_path / curly).write_text("x")
    assert resolve_read_path("Dad's notes.txt", tmp_path).name == curly


def test_missing_read_path_is_returned_unchanged(tmp_path: Path):
    assert resolve_read_path("nope.txt", tmp_path) == tmp_path / "nope.txt"
