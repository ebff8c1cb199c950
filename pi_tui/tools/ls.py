"""The ``ls`` tool (pi-behaviour.md §4.8): one folder, sorted case-insensitively, dotfiles
included, ``/`` after folders, at most ``limit`` (500) entries and 50 KB."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pi_tui.core.cancellable_thread import check_cancelled, run_in_thread
from pi_tui.core.errors import ToolError
from pi_tui.core.messages import JsonValue
from pi_tui.core.tool import ToolContext, ToolResult
from pi_tui.tools.common import names_failures, optional_int, optional_str
from pi_tui.tools.paths import resolve_to_cwd
from pi_tui.tools.search_common import listing_result

DEFAULT_LS_LIMIT = 500

LS_PARAMETERS: dict[str, JsonValue] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "Folder to list; the working directory when omitted"},
        "limit": {"type": "number", "description": f"Stop after this many entries ({DEFAULT_LS_LIMIT} when omitted)"},
    },
}


def list_directory(folder: Path, limit: int) -> tuple[list[str], bool]:
    if not folder.exists():
        raise ToolError(f"Path not found: {folder}")
    if not folder.is_dir():
        raise ToolError(f"Not a directory: {folder}")
    try:
        names = sorted(os.listdir(folder), key=str.lower)
    except OSError as error:
        raise ToolError(f"Cannot read directory: {folder}: {error.strerror or error}") from None
    entries: list[str] = []
    for name in names:
        check_cancelled()
        if len(entries) >= limit:
            return entries, True
        try:
            is_dir = (folder / name).is_dir()  # follows symlinks, as pi's statSync does
        except OSError:
            continue
        entries.append(name + "/" if is_dir else name)
    return entries, False


class LsTool:
    name = "ls"
    label = "ls"
    description = (
        "List a directory's entries in alphabetical order, including dotfiles; folders end with '/'. "
        f"Returns at most {DEFAULT_LS_LIMIT} entries by default or 50KB."
    )
    parameters: dict[str, JsonValue] = LS_PARAMETERS
    prompt_snippet: str | None = "Show what a folder contains"
    prompt_guidelines: tuple[str, ...] = ()
    execution_mode: Literal["parallel", "sequential"] = "parallel"

    async def execute(self, call_id: str, args: dict[str, JsonValue], ctx: ToolContext) -> ToolResult:
        folder = resolve_to_cwd(optional_str(args, "path", self.name) or ".", ctx.cwd)
        limit = max(1, optional_int(args, "limit", self.name) or DEFAULT_LS_LIMIT)
        with names_failures(self.name, str(folder)):
            entries, reached = await run_in_thread(list_directory, folder, limit)
        if not entries:
            return ToolResult(content=[{"type": "text", "text": "(empty directory)"}])
        if not reached:
            return listing_result(entries)
        return listing_result(
            entries,
            limit_notice=f"{limit} entries limit reached. Use limit={limit * 2} for more",
            details={"entryLimitReached": limit},
        )
