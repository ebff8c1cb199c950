from __future__ import annotations

import shutil

import pytest

from pi_tui.core.errors import ToolError
from pi_tui.tools import search_common
from pi_tui.tools.grep import GrepTool

from .helpers import text


@pytest.fixture(params=["python", "rg"])
def backend(request, monkeypatch):
    if request.param == "python":
        monkeypatch.setattr("pi_tui.tools.grep.find_binary", lambda name: None)
    elif shutil.which("rg") is None:
        pytest.skip("rg is not on PATH")
    return request.param


async def grep(ctx, **args):
    return await GrepTool().execute("c", args, ctx)


async def test_match_line_format_and_single_file_basename(ctx, backend):
    (ctx.cwd / "example.txt").write_text("first line\nmatch line\nthird line\n")
    assert text(await grep(ctx, pattern="match")) == "example.txt:2: match line"
    assert text(await grep(ctx, pattern="match", path="example.txt")) == "example.txt:2: match line"


async def test_context_lines(ctx, backend):
    (ctx.cwd / "example.txt").write_text("first line\nmatch line\nthird line\n")
    assert text(await grep(ctx, pattern="match", context=1)) == (
        "example.txt-1- first line\nexample.txt:2: match line\nexample.txt-3- third line"
    )


async def test_limit_notice(ctx, backend):
    (ctx.cwd / "a.txt").write_text("hit 1\nhit 2\n")
    result = await grep(ctx, pattern="hit", limit=1)
    assert text(result) == "a.txt:1: hit 1\n\n[1 matches limit reached. Use limit=2 for more, or refine pattern]"
    assert result.details["matchLimitReached"] == 1


async def test_no_matches_ignore_case_literal_and_dash_pattern(ctx, backend):
    (ctx.cwd / "a.txt").write_text("Hello\na.b\n-flag\n")
    assert text(await grep(ctx, pattern="nothing")) == "No matches found"
    assert text(await grep(ctx, pattern="hello", ignoreCase=True)) == "a.txt:1: Hello"
    assert text(await grep(ctx, pattern="a.b", literal=True)) == "a.txt:2: a.b"
    assert text(await grep(ctx, pattern="-flag")) == "a.txt:3: -flag"


async def test_gitignore_hidden_files_binary_and_glob(ctx, backend):
    (ctx.cwd / ".git").mkdir()
    (ctx.cwd / ".gitignore").write_text("ignored/\n")
    (ctx.cwd / "ignored").mkdir()
    (ctx.cwd / "ignored" / "x.txt").write_text("needle\n")
    (ctx.cwd / ".hidden.txt").write_text("needle\n")
    (ctx.cwd / "bin.dat").write_bytes(b"needle\x00\x01")
    (ctx.cwd / "src").mkdir()
    (ctx.cwd / "src" / "a.py").write_text("needle = 1\n")
    (ctx.cwd / "src" / "b.ts").write_text("needle\n")
    lines = sorted(text(await grep(ctx, pattern="needle")).split("\n"))
    assert lines == [".hidden.txt:1: needle", "src/a.py:1: needle = 1", "src/b.ts:1: needle"]
    assert text(await grep(ctx, pattern="needle", glob="*.py")) == "src/a.py:1: needle = 1"


async def test_long_lines_cut_and_crlf_removed(ctx, backend):
    (ctx.cwd / "long.txt").write_text("needle" + "x" * 600 + "\r\nneedle two\r\n", newline="")
    result = await grep(ctx, pattern="needle")
    first, second, _, notice = text(result).split("\n")
    assert first == "long.txt:1: needle" + "x" * 494 + "... [truncated]"
    assert second == "long.txt:2: needle two"
    assert notice == "[Some lines truncated to 500 chars. Use read tool to see full lines]"
    assert result.details["linesTruncated"] is True


async def test_output_byte_limit(ctx, backend):
    (ctx.cwd / "many.txt").write_text("".join(f"needle {'y' * 400} {i}\n" for i in range(200)))
    result = await grep(ctx, pattern="needle", limit=300)
    body, notice = text(result).rsplit("\n\n", 1)
    assert len(body.encode()) <= 51200
    assert notice == "[50.0KB limit reached]"


async def test_bad_path_and_bad_regex(ctx, backend):
    with pytest.raises(ToolError, match=r"^Path not found: .*/nope$"):
        await grep(ctx, pattern="x", path="nope")
    (ctx.cwd / "a.txt").write_text("x")
    with pytest.raises(ToolError):
        await grep(ctx, pattern="(unclosed")


def test_find_binary_never_downloads(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    assert search_common.find_binary("rg") is None


def test_fd_is_found_under_debians_name(monkeypatch, tmp_path):
    """Debian and Ubuntu install fd as ``fdfind``; without the alias find fell back to the slow
    pure-Python walk there."""
    fdfind = tmp_path / "fdfind"
    fdfind.write_text("#!/bin/sh\n")
    fdfind.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert search_common.find_binary("fd") == str(fdfind)
    assert search_common.find_binary("rg") is None


async def test_bare_carriage_returns_do_not_split_lines(ctx, backend):
    (ctx.cwd / "cr.txt").write_bytes(b"one\rtwo needle\nthree\n")
    assert text(await grep(ctx, pattern="needle")) == "cr.txt:1: onetwo needle"
