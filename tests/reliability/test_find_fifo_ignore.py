"""``find`` with fd and an ignore file that is a FIFO: fd (like rg, the same ignore crate) opens
every ``.gitignore``/``.ignore``/``.fdignore`` it meets and waits forever on a FIFO. Where
nobody aborts (print mode, a headless run) that is a hang; find must notice, stop fd and walk by
itself, naming the file it could not read.

fd ≥ 9 is what pi downloads into ``<agentDir>/bin`` (on pi-tui's PATH); Debian's fd-find 8.6
lacks ``--no-require-git``, so there find walks by itself anyway. Where no fd ≥ 9 is installed,
a stand-in plays its part: a script that, like fd, reads each folder's ignore files before
listing it (real fd runs too when it is on PATH).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pi_tui.core.tool import ToolContext, ToolResult
from tests.reliability import test_tool_abort
from tests.reliability.record import FaultRecord
from tests.reliability.test_tool_abort import (
    GIVE_UP,
    _children_of,
    _cmdline,
    _eventually,
    make_fifo,
    returns_quickly,
)

FAULT_CLASS = "tools that never return"
ctx = test_tool_abort.ctx
fifos = test_tool_abort.fifos
"""The tool-abort tests' fixtures: a working folder, and FIFOs released if a tool hangs on one."""

STAND_IN = """
    import fnmatch, os, sys
    pattern, root = sys.argv[-2], sys.argv[-1]
    for folder, _dirs, files in os.walk(root):
        for name in (".gitignore", ".ignore", ".fdignore"):
            if os.path.lexists(os.path.join(folder, name)):
                with open(os.path.join(folder, name)) as rules:  # blocks on a FIFO, as fd does
                    rules.read()
        for name in files:
            if fnmatch.fnmatch(name, pattern):
                print(os.path.join(folder, name))
"""


def _real_fd() -> str | None:
    """An fd ≥ 9 on PATH, under either name (older ones, such as Debian's fdfind 8.6, lack
    ``--no-require-git`` and make find walk by itself: nothing to test)."""
    fd = shutil.which("fd") or shutil.which("fdfind")
    if fd is None:
        return None
    version = subprocess.run([fd, "--version"], capture_output=True, text=True, check=False).stdout
    found = re.search(r"(\d+)\.", version)
    return fd if found and int(found.group(1)) >= 9 else None


def _fd_on_path(engine: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("bash", "sh"):
        if real := shutil.which(tool):
            (bin_dir / tool).symlink_to(real)
    if engine == "fd":
        real_fd = _real_fd()
        if real_fd is None:
            pytest.skip("no fd >= 9 on PATH (the stand-in case covers it)")
        (bin_dir / "fd").symlink_to(real_fd)
    else:
        script = bin_dir / "fd"
        script.write_text(f"#!{sys.executable}\n" + textwrap.dedent(STAND_IN))
        script.chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))


@pytest.mark.parametrize("engine", ["stand-in", "fd"])
@pytest.mark.parametrize("ignore_file", [".gitignore", "sub/.fdignore"])
async def test_find_with_fd_returns_past_a_fifo_ignore_file(
    fault: FaultRecord, ctx: ToolContext, fifos: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    engine: str, ignore_file: str,
) -> None:
    _fd_on_path(engine, tmp_path, monkeypatch)
    (ctx.cwd / "sub").mkdir()
    (ctx.cwd / "a.txt").write_text("one\n")
    (ctx.cwd / "sub" / "b.txt").write_text("two\n")
    make_fifo(ctx.cwd / ignore_file, fifos)
    with fault.case(f"find ({engine}) with a FIFO {ignore_file}"):
        before = set(_children_of(os.getpid()))
        took, outcome = await returns_quickly("find", {"pattern": "*.txt"}, ctx)
        assert took < GIVE_UP, f"find with fd and a FIFO {ignore_file} did not return"
        assert isinstance(outcome, ToolResult), outcome
        text = outcome.content[0]["text"]  # type: ignore[typeddict-item]
        assert text.splitlines()[:2] == ["a.txt", "sub/b.txt"], text
        assert f"[{ignore_file} is a FIFO (named pipe), not a regular file: searched without fd" in text, text
        assert await _eventually(
            lambda: not [p for p in _children_of(os.getpid()) if p not in before and "fd" in _cmdline(int(p))], 1.0
        ), "fd still running after find returned"


@pytest.mark.parametrize("path", ["pipe", "/dev/null"])
async def test_find_refuses_a_path_that_is_not_a_folder_or_file(
    fault: FaultRecord, ctx: ToolContext, fifos: list[Path], path: str,
) -> None:
    """A FIFO or a device as find's folder: a clear error, not "No files found"."""
    make_fifo(ctx.cwd / "pipe", fifos)
    with fault.case(f"find in {path}"):
        took, outcome = await returns_quickly("find", {"pattern": "*", "path": path}, ctx)
        assert took < GIVE_UP
        kind = "a FIFO (named pipe)" if path == "pipe" else "a character device"
        assert str(outcome).startswith("Cannot search ") and str(outcome).endswith(f"it is {kind}, not a folder"), outcome
