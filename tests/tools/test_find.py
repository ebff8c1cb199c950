from __future__ import annotations

import shutil

import pytest

from pi_tui.core.errors import ToolError
from pi_tui.tools.find import FindTool, full_path_pattern

from .helpers import text


@pytest.fixture(params=["python", "fd"])
def backend(request, monkeypatch):
    if request.param == "python":
        monkeypatch.setattr("pi_tui.tools.find.find_binary", lambda name: None)
    elif shutil.which("fd") is None and shutil.which("fdfind") is None:
        pytest.skip("fd (fdfind on Debian) is not on PATH")
    return request.param


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
