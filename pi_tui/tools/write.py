"""The ``write`` tool: ``{path, content}`` (pi-behaviour.md §4.5, §13.4 write).

Creates parent folders and overwrites the file. The count reported is the real number of UTF-8
bytes written (pi reports the string length, which is wrong for non-ASCII text, §12 surprise 7).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pi_tui.core.cancellable_thread import run_in_thread
from pi_tui.core.errors import ToolError
from pi_tui.core.messages import JsonValue
from pi_tui.core.regular_files import NotRegularFileError, PathChangedError, open_regular_for_write
from pi_tui.core.tool import ToolContext, ToolResult
from pi_tui.tools.common import names_failures, node_style_error, require_str
from pi_tui.tools.mutation_queue import file_mutation_lock
from pi_tui.tools.paths import resolve_to_cwd

WRITE_PARAMETERS: dict[str, JsonValue] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "File to create or replace; relative paths start at the working directory"},
        "content": {"type": "string", "description": "The complete new content of the file"},
    },
    "required": ["path", "content"],
}


class WriteTool:
    name = "write"
    label = "write"
    description = (
        "Write content to a file, replacing it if it exists and creating it (and any missing parent "
        "directories) if it does not."
    )
    parameters: dict[str, JsonValue] = WRITE_PARAMETERS
    prompt_snippet: str | None = "Create a file or replace its whole content"
    prompt_guidelines: tuple[str, ...] = ("Reserve write for new files and full rewrites; change existing files with edit.",)
    execution_mode: Literal["parallel", "sequential"] = "parallel"

    async def execute(self, call_id: str, args: dict[str, JsonValue], ctx: ToolContext) -> ToolResult:
        display_path = require_str(args, "path", self.name)
        if args.get("content") is None:
            raise ToolError('Validation failed for tool "write":\n  - content: must have required properties content')
        content = require_str(args, "content", self.name)
        path = resolve_to_cwd(display_path, ctx.cwd)
        with names_failures(self.name, display_path):
            async with file_mutation_lock(path):
                if ctx.files is not None:  # the client's copy (ACP: the editor's buffer)
                    await run_in_thread(_make_parents, path)
                    await ctx.files.write_text(path, content)
                    written = len(content.encode("utf-8", "surrogatepass"))
                else:
                    pin = ctx.pins.pinned(call_id, path) if ctx.pins is not None else None
                    written = await run_in_thread(_write_file, pin or path, content, pin is not None)
        return ToolResult(
            content=[{"type": "text", "text": f"Successfully wrote {written} bytes to {display_path}"}]
        )


def _make_parents(path: Path) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise node_style_error(error, "mkdir", path.parent) from None


def _write_file(path: Path, content: str, pinned: bool = False) -> int:
    """``pinned``: ``path`` is the real path the permission check approved, opened following no
    link (its folders are created first, then must still be where the check saw them)."""
    data = content.encode("utf-8", "surrogatepass")
    _make_parents(path)
    try:
        with open_regular_for_write(path, pinned=pinned) as fh:
            fh.write(data)
    except PathChangedError as error:
        raise ToolError(f"Cannot write {path}: {error}") from None
    except NotRegularFileError as error:
        raise ToolError(f"Cannot write {path}: it is {error.kind}, not a regular file.") from None
    except OSError as error:
        raise node_style_error(error, "open", path) from None
    return len(data)
