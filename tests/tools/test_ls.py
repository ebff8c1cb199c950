from __future__ import annotations

import pytest

from pi_tui.core.errors import ToolError
from pi_tui.tools.ls import LsTool

from .helpers import text


async def ls(ctx, **args):
    return await LsTool().execute("c", args, ctx)


async def test_dotfiles_dirs_and_case_insensitive_order(ctx):
    for name in ("b.txt", "A.txt", ".env", "c"):
        (ctx.cwd / name).write_text("x") if name != "c" else (ctx.cwd / name).mkdir()
    assert text(await ls(ctx)) == ".env\nA.txt\nb.txt\nc/"


async def test_empty_limit_and_errors(ctx):
    (ctx.cwd / "empty").mkdir()
    assert text(await ls(ctx, path="empty")) == "(empty directory)"
    for i in range(5):
        (ctx.cwd / f"f{i}").write_text("x")
    result = await ls(ctx, limit=3)
    assert text(result) == "empty/\nf0\nf1\n\n[3 entries limit reached. Use limit=6 for more]"
    with pytest.raises(ToolError, match=r"^Path not found: .*missing$"):
        await ls(ctx, path="missing")
    with pytest.raises(ToolError, match=r"^Not a directory: .*f0$"):
        await ls(ctx, path="f0")
