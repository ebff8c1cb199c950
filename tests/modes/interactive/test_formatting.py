from __future__ import annotations

import pytest

from pi_tui.modes.interactive.formatting import (
    context_bar,
    format_bytes,
    format_tokens,
    git_branch,
    tilde_path,
)


@pytest.mark.parametrize(("n", "text"), [(999, "999"), (1234, "1.2k"), (12_345, "12k"), (1_234_567, "1.2M"),
                                          (12_345_678, "12M")])
def test_tokens_use_pis_format(n, text):
    assert format_tokens(n) == text


def test_bytes_use_pis_format():
    assert (format_bytes(1000), format_bytes(51200), format_bytes(3 * 1024 * 1024)) == ("1000B", "50.0KB", "3.0MB")


def test_context_bar_fills_with_percent_and_is_empty_when_unknown():
    assert context_bar(50, 10) == "▇" * 5 + "▁" * 5
    assert context_bar(None, 4) == "▁▁▁▁"


def test_home_becomes_tilde(isolated_home):
    assert tilde_path(isolated_home / "proj") == "~/proj"


def test_git_branch_read_from_head(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "HEAD").write_text("ref: refs/heads/fix-tests\n")
    (tmp_path / "sub").mkdir()
    assert git_branch(tmp_path / "sub") == "fix-tests"
