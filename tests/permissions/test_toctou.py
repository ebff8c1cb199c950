"""read/edit/write open the file their permission check approved, following no link: a link
swapped in between the check and the open (a bash command running at the same moment could do
it) — for the file itself or for a folder on its way — is refused, and the file outside the
project is untouched. Each test runs the gate's check, swaps, then runs the real tool."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pi_tui.agent.types import ToolCallInfo
from pi_tui.core.errors import ToolError
from pi_tui.core.regular_files import PathChangedError, open_regular, open_regular_for_write
from pi_tui.core.tool import ToolContext
from pi_tui.permissions.setup import PermissionOptions, build_gate
from pi_tui.tools.edit import EditTool
from pi_tui.tools.read import ReadTool
from pi_tui.tools.write import WriteTool
from tests.permissions.conftest import BASHRC, FakeWorld


class _Settings:
    def file_settings(self, scope: str) -> dict[str, Any]:
        return {}


class _Context:
    tools: tuple[Any, ...] = ()


def gate_for(world: FakeWorld) -> Any:
    return build_gate(PermissionOptions(mode="auto"), cwd=world.project, agent_dir=world.agent, settings=_Settings(),
                      trusted=True)


async def checked(gate: Any, call_id: str, tool: str, args: dict[str, Any]) -> None:
    info = ToolCallInfo(tool_call={"id": call_id, "name": tool, "arguments": args}, args=args, assistant_message={},  # type: ignore[arg-type]
                        context=_Context())  # type: ignore[arg-type]
    assert await gate.before_tool_call(info) is None  # allowed: inside the project


def swap_for_link(path: Path, target: Path) -> None:
    path.unlink()
    path.symlink_to(target)


@pytest.mark.parametrize("tool", ["write", "edit"])
async def test_a_link_swapped_in_for_the_file_is_refused(fake_world: FakeWorld, tool: str) -> None:
    gate = gate_for(fake_world)
    victim = fake_world.project / "notes.txt"
    victim.write_text("old text\n")
    args: dict[str, Any] = ({"path": "notes.txt", "content": "owned\n"} if tool == "write"
                            else {"path": "notes.txt", "edits": [{"oldText": "old", "newText": "owned"}]})
    await checked(gate, "c", tool, args)
    swap_for_link(victim, fake_world.home / ".bashrc")
    (fake_world.home / ".bashrc").write_text(BASHRC + "old text\n")
    ctx = ToolContext(cwd=fake_world.project, pins=gate)
    with pytest.raises(ToolError, match=r"changed since its permission check \(it is now a symbolic link\)"):
        await (WriteTool() if tool == "write" else EditTool()).execute("c", args, ctx)
    assert (fake_world.home / ".bashrc").read_text() == BASHRC + "old text\n"


async def test_a_folder_swapped_for_a_link_is_refused(fake_world: FakeWorld) -> None:
    gate = gate_for(fake_world)
    folder = fake_world.project / "sub"
    folder.mkdir()
    (folder / ".bashrc").write_text("mine\n")
    args = {"path": "sub/.bashrc", "content": "owned\n"}
    await checked(gate, "w", "write", args)
    folder.rename(fake_world.project / "sub-moved")
    folder.symlink_to(fake_world.home)  # sub/.bashrc is now ~/.bashrc
    with pytest.raises(ToolError, match="its folder is now"):
        await WriteTool().execute("w", args, ToolContext(cwd=fake_world.project, pins=gate))
    assert (fake_world.home / ".bashrc").read_text() == BASHRC


async def test_a_read_follows_no_link_swapped_in(fake_world: FakeWorld) -> None:
    gate = gate_for(fake_world)
    readme = fake_world.project / "README"
    readme.write_text("readme\n")
    await checked(gate, "r", "read", {"path": "README"})
    swap_for_link(readme, fake_world.home / ".ssh" / "id_rsa")
    with pytest.raises(ToolError, match="changed since its permission check"):
        await ReadTool().execute("r", {"path": "README"}, ToolContext(cwd=fake_world.project, pins=gate))


async def test_the_approved_path_is_what_opens_and_links_checked_before_still_work(fake_world: FakeWorld) -> None:
    gate = gate_for(fake_world)
    (fake_world.project / "real.txt").write_text("one\n")
    (fake_world.project / "alias.txt").symlink_to("real.txt")  # a link inside the project, there at the check
    args = {"path": "alias.txt", "content": "two\n"}
    await checked(gate, "a", "write", args)
    assert gate.pinned("a", fake_world.project / "alias.txt") == fake_world.project / "real.txt"
    await WriteTool().execute("a", args, ToolContext(cwd=fake_world.project, pins=gate))
    assert (fake_world.project / "real.txt").read_text() == "two\n"
    (fake_world.project / "new" / "deep").mkdir(parents=True)
    await checked(gate, "n", "write", {"path": "new/deep/file.txt", "content": "x"})
    await WriteTool().execute("n", {"path": "new/deep/file.txt", "content": "x"},
                              ToolContext(cwd=fake_world.project, pins=gate))
    assert (fake_world.project / "new" / "deep" / "file.txt").read_text() == "x"


def test_pinned_opens_refuse_links_and_truncate_nothing_they_refuse(tmp_path: Path) -> None:
    target = tmp_path / "target"
    target.write_text("t")
    (tmp_path / "link").symlink_to(target)
    with pytest.raises(PathChangedError):
        open_regular(tmp_path / "link", pinned=True)
    with pytest.raises(PathChangedError):
        open_regular_for_write(tmp_path / "link", pinned=True)
    assert target.read_text() == "t"
    with open_regular(target, pinned=True) as fh:
        assert fh.read() == b"t"
