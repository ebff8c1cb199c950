from __future__ import annotations

import subprocess

import pytest

from pi_tui.core.errors import ToolError
from pi_tui.tools import find as find_module
from pi_tui.tools.find import FindTool, full_path_pattern
from pi_tui.tools.search_common import find_binary

from .helpers import text


@pytest.fixture(params=["python", "fd"])
def backend(request, monkeypatch):
    if request.param == "python":
        monkeypatch.setattr("pi_tui.tools.find.find_binary", lambda name: None)
    elif not _usable_fd():
        pytest.skip("no fd 9+ on PATH (Debian's fdfind 8.6 lacks --no-require-git; find walks by itself there)")
    return request.param


def _usable_fd() -> bool:
    """An fd that takes the flags find passes, so the fd cases really test fd."""
    fd = find_binary("fd")
    if fd is None:
        return False
    probe = subprocess.run([fd, "--no-require-git", "--max-results", "1", ".", "/nonexistent-dir"],
                           capture_output=True, text=True, timeout=30)
    return "--no-require-git" not in probe.stderr


async def find(ctx, **args):
    return await FindTool().execute("c", args, ctx)


def tree(root):
    (root / ".gitignore").write_text("*.log\n")
    (root / ".env.example").write_text("x")
    (root / "debug.log").write_text("x")
    (root / "src" / "util").mkdir(parents=True)
    (root / "src" / "main.py").write_text("x")
    (root / "src" / "util" / "helpers.py").write_text("x")
    (root / "README.md").write_text("x")


async def test_includes_hidden_and_respects_gitignore(ctx, backend):
    tree(ctx.cwd)
    assert sorted(text(await find(ctx, pattern="*.py")).split("\n")) == ["src/main.py", "src/util/helpers.py"]
    assert text(await find(ctx, pattern=".env*")) == ".env.example"
    assert text(await find(ctx, pattern="*.log")) == "No files found matching pattern"


async def test_patterns_with_a_slash_match_the_path(ctx, backend):
    tree(ctx.cwd)
    assert text(await find(ctx, pattern="src/util/*.py")) == "src/util/helpers.py"
    assert sorted(text(await find(ctx, pattern="src/**/*.py")).split("\n")) == ["src/main.py", "src/util/helpers.py"]
    assert full_path_pattern("a/b") == "**/a/b"
    assert full_path_pattern("**/a/b") == "**/a/b"
    assert full_path_pattern("/abs/*.py") == "/abs/*.py"
    assert full_path_pattern("*.py") is None


async def test_directories_end_with_slash_and_limit_notice(ctx, backend):
    tree(ctx.cwd)
    assert text(await find(ctx, pattern="util")) == "src/util/"
    result = await find(ctx, pattern="*", limit=2)
    lines = text(result).split("\n")
    assert len(lines) == 4
    assert lines[-1] == "[2 results limit reached. Use limit=4 for more, or refine pattern]"
    assert result.details["resultLimitReached"] == 2


async def test_search_path_and_missing_path(ctx, backend):
    tree(ctx.cwd)
    assert text(await find(ctx, pattern="*.py", path="src/util")) == "helpers.py"
    with pytest.raises(ToolError, match=r"^Path not found: "):
        await find(ctx, pattern="*", path="missing")


async def test_unicode_and_spaced_names(ctx, backend):
    (ctx.cwd / "dir with space").mkdir()
    (ctx.cwd / "dir with space" / "naïve résumé.md").write_text("x")
    assert text(await find(ctx, pattern="*.md")) == "dir with space/naïve résumé.md"
    assert text(await find(ctx, pattern="*.md", path="@dir\u00a0with space")) == "naïve résumé.md"


async def test_an_fd_without_no_require_git_is_started_once_then_left_alone(ctx, tmp_path, monkeypatch):
    """Debian's fdfind 8.6 refuses --no-require-git: find answers with its own walk, and does not
    start that fd again (and fail) on every later call."""
    calls = tmp_path / "calls"
    fd = tmp_path / "bin" / "fdfind"
    fd.parent.mkdir()
    fd.write_text(f"#!/bin/sh\necho started >> {calls}\n"
                  "echo \"error: Found argument '--no-require-git' which wasn't expected\" >&2\nexit 2\n")
    fd.chmod(0o755)
    monkeypatch.setenv("PATH", str(fd.parent))
    monkeypatch.setattr(find_module, "_FD_WITHOUT_REQUIRE_GIT", set())
    tree(ctx.cwd)
    for _ in range(3):
        assert sorted(text(await find(ctx, pattern="*.py")).split("\n")) == ["src/main.py", "src/util/helpers.py"]
    assert calls.read_text().splitlines() == ["started"]
