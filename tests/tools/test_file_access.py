"""``ToolContext.files``: read, edit and write go through a client's copy of the files (ACP mode:
the editor's buffers, unsaved changes included) and leave the disk alone; what only the disk can
answer (images, binary files, folders) stays on the disk path."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from pi_tui.core.errors import ToolError
from pi_tui.core.tool import ToolContext
from pi_tui.tools.edit import EditTool
from pi_tui.tools.read import ReadTool
from pi_tui.tools.write import WriteTool

PNG_1X1 = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


class Buffers:
    """An editor's open buffers: what it holds wins over the disk."""

    def __init__(self, **texts: str) -> None:
        self.texts = dict(texts)
        self.reads: list[Path] = []
        self.writes: list[tuple[Path, str]] = []

    async def read_text(self, path: Path) -> str:
        self.reads.append(path)
        if path.name not in self.texts:
            raise OSError(f"Resource not found: {path}")
        return self.texts[path.name]

    async def write_text(self, path: Path, content: str) -> None:
        self.writes.append((path, content))
        self.texts[path.name] = content


def _text(result: object) -> str:
    return "".join(block["text"] for block in result.content if block["type"] == "text")  # type: ignore[attr-defined]


async def test_read_edit_write_use_the_buffer_not_the_disk(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("on disk\n")
    buffers = Buffers(**{"a.py": "unsaved line 1\nunsaved line 2\n"})
    ctx = ToolContext(cwd=tmp_path, files=buffers)

    read = await ReadTool().execute("1", {"path": "a.py", "offset": 2}, ctx)
    assert _text(read) == "unsaved line 2\n"

    edit = await EditTool().execute("2", {"path": "a.py", "edits": [{"oldText": "line 2", "newText": "LINE 2"}]}, ctx)
    assert "Successfully replaced 1 block(s) in a.py." in _text(edit)
    assert buffers.writes == [(tmp_path / "a.py", "unsaved line 1\nunsaved LINE 2\n")]
    assert "+2 unsaved LINE 2" in edit.details["diff"]  # type: ignore[index]

    write = await WriteTool().execute("3", {"path": "new/dir/b.txt", "content": "héllo"}, ctx)
    assert _text(write) == "Successfully wrote 6 bytes to new/dir/b.txt"
    assert buffers.texts["b.txt"] == "héllo"
    assert (tmp_path / "new" / "dir").is_dir()  # the folder exists for the client to save into
    assert not (tmp_path / "new" / "dir" / "b.txt").exists()
    assert (tmp_path / "a.py").read_text() == "on disk\n"  # the disk was never touched


async def test_a_client_failure_names_the_file(tmp_path: Path) -> None:
    ctx = ToolContext(cwd=tmp_path, files=Buffers())
    with pytest.raises(ToolError, match=r"Could not edit file: gone\.py\. Resource not found"):
        await EditTool().execute("1", {"path": "gone.py", "edits": [{"oldText": "a", "newText": "b"}]}, ctx)
    with pytest.raises(Exception, match="Resource not found"):
        await ReadTool().execute("2", {"path": "gone.py"}, ctx)


async def test_images_and_folders_stay_on_the_disk(tmp_path: Path) -> None:
    (tmp_path / "dot.png").write_bytes(PNG_1X1)
    (tmp_path / "folder").mkdir()
    buffers = Buffers()
    ctx = ToolContext(cwd=tmp_path, files=buffers)
    image = await ReadTool().execute("1", {"path": "dot.png"}, ctx)
    assert any(block["type"] == "image" for block in image.content)
    with pytest.raises(ToolError, match="EISDIR"):
        await ReadTool().execute("2", {"path": "folder"}, ctx)
    assert buffers.reads == []
