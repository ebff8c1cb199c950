from __future__ import annotations

import asyncio

import pytest

from pi_tui.core.errors import ToolError
from pi_tui.tools.write import WriteTool

from .helpers import text


async def test_creates_parent_dirs_and_reports_real_bytes(ctx):
    result = await WriteTool().execute("c", {"path": "deep/er/ünï.txt", "content": "héllo €"}, ctx)
    assert text(result) == "Successfully wrote 10 bytes to deep/er/ünï.txt"  # pi would say 7
    assert (ctx.cwd / "deep/er/ünï.txt").read_bytes() == "héllo €".encode()
    assert result.details is None


async def test_overwrites_and_keeps_content_byte_exact(ctx):
    (ctx.cwd / "f.txt").write_text("old content that is longer")
    await WriteTool().execute("c", {"path": "f.txt", "content": "a\r\nb"}, ctx)
    assert (ctx.cwd / "f.txt").read_bytes() == b"a\r\nb"


async def test_missing_content_and_unwritable_path(ctx):
    with pytest.raises(ToolError, match="content: must have required properties content"):
        await WriteTool().execute("c", {"path": "x.txt"}, ctx)
    (ctx.cwd / "file").write_text("x")
    with pytest.raises(ToolError, match=r"file"):
        await WriteTool().execute("c", {"path": "file/child.txt", "content": "x"}, ctx)


async def test_writes_to_one_file_run_in_call_order(ctx):
    await asyncio.gather(*(WriteTool().execute("c", {"path": "o.txt", "content": str(i)}, ctx) for i in range(10)))
    assert (ctx.cwd / "o.txt").read_text() == "9"
