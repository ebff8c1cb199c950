"""The ``edit`` tool: ``{path, edits: [{oldText, newText}, ...]}`` (pi-behaviour.md §13.4 edit).

Every ``oldText`` is matched against the original file (exact first, then pi's fuzzy match),
must be unique and must not overlap another edit. Unlike pi, a fuzzy match replaces only the
matched region of the original: every other byte — trailing spaces, smart quotes, a BOM, CRLF or
mixed line endings — stays exactly as it was (see ``edit_match``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Literal

from pi_tui.core.cancellable_thread import run_in_thread
from pi_tui.core.errors import ToolError
from pi_tui.core.messages import JsonValue
from pi_tui.core.regular_files import (
    NotRegularFileError,
    PathChangedError,
    open_regular,
    open_regular_for_write,
)
from pi_tui.core.tool import FileAccess, ToolContext, ToolResult
from pi_tui.tools.common import names_failures, os_error_code, require_str
from pi_tui.tools.edit_diff import PlannedEdit, generate_diff_string, plan_edit
from pi_tui.tools.edit_match import EditSpec
from pi_tui.tools.mutation_queue import file_mutation_lock
from pi_tui.tools.paths import resolve_to_cwd

EDIT_DESCRIPTION = (
    "Change one file by replacing exact pieces of text. Each edits[].oldText names one region of the "
    "file as it is now: it must occur exactly once and must not overlap another edit's region. "
    "Changes that touch the same or neighbouring lines belong in a single edit; keep each oldText "
    "short rather than spanning unchanged code between distant changes."
)

EDIT_PARAMETERS: dict[str, JsonValue] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "File to change; relative paths start at the working directory"},
        "edits": {
            "type": "array",
            "description": (
                "The replacements to make. All of them are located in the file as it was before this call "
                "(not after the previous replacement), so regions must not overlap or nest; merge "
                "changes to nearby lines into one replacement."
            ),
            "items": {
                "type": "object",
                "properties": {
                    "oldText": {
                        "type": "string",
                        "description": (
                            "Text to replace, copied exactly from the file (whitespace and line breaks "
                            "included); it must occur once and not overlap another oldText of this call."
                        ),
                    },
                    "newText": {"type": "string", "description": "Text that takes its place."},
                },
                "required": ["oldText", "newText"],
                "additionalProperties": False,
            },
        },
    },
    "required": ["path", "edits"],
    "additionalProperties": False,
}


def prepare_edit_arguments(args: dict[str, JsonValue]) -> dict[str, JsonValue]:
    """pi's argument shim, run before validation: parse stringified ``edits`` and fold a legacy
    top-level ``oldText``/``newText`` pair into ``edits`` (as the last entry)."""
    prepared = dict(args)
    edits = prepared.get("edits")
    if isinstance(edits, str):
        try:
            parsed = json.loads(edits)
        except ValueError:
            parsed = None
        if isinstance(parsed, list):
            prepared["edits"] = parsed
    old_text, new_text = prepared.get("oldText"), prepared.get("newText")
    if isinstance(old_text, str) and isinstance(new_text, str):
        del prepared["oldText"], prepared["newText"]
        current = prepared.get("edits")
        entries = list(current) if isinstance(current, list) else []
        entries.append({"oldText": old_text, "newText": new_text})
        prepared["edits"] = entries
    return prepared


def _edit_specs(args: dict[str, JsonValue]) -> list[EditSpec]:
    edits = args.get("edits")
    if edits is None:
        raise ToolError('Validation failed for tool "edit":\n  - edits: must have required properties edits')
    if not isinstance(edits, list):
        raise ToolError('Validation failed for tool "edit":\n  - edits: must be array')
    specs: list[EditSpec] = []
    for index, entry in enumerate(edits):
        if not isinstance(entry, dict):
            raise ToolError(f'Validation failed for tool "edit":\n  - edits.{index}: must be object')
        for key in ("oldText", "newText"):
            if not isinstance(entry.get(key), str):
                problem = f"must have required properties {key}" if key not in entry else "must be string"
                raise ToolError(f'Validation failed for tool "edit":\n  - edits.{index}.{key}: {problem}')
        specs.append(EditSpec(entry["oldText"], entry["newText"]))
    return specs


class EditTool:
    name = "edit"
    label = "edit"
    description = EDIT_DESCRIPTION
    parameters: dict[str, JsonValue] = EDIT_PARAMETERS
    prompt_snippet: str | None = (
        "Change files by replacing exact text; several separate changes fit in one call"
    )
    prompt_guidelines: tuple[str, ...] = (
        "Make targeted changes with edit; each edits[].oldText must be copied exactly from the file",
        "For several changes to one file, send one edit call with several edits[] entries rather "
        "than several calls",
        "Every edits[].oldText is looked up in the file as it was before the call, so entries must "
        "not overlap or nest; fold changes to neighbouring lines into one entry",
        "Keep each edits[].oldText as short as still identifies a single place in the file, "
        "without padding it with unchanged code",
    )
    execution_mode: Literal["parallel", "sequential"] = "parallel"

    def prepare_arguments(self, args: dict[str, JsonValue]) -> dict[str, JsonValue]:
        """Run by the agent loop before schema validation (pi's argument shim)."""
        return prepare_edit_arguments(args)

    async def execute(self, call_id: str, args: dict[str, JsonValue], ctx: ToolContext) -> ToolResult:
        args = prepare_edit_arguments(args)
        display_path = require_str(args, "path", self.name)
        specs = _edit_specs(args)
        if not specs:
            raise ToolError("Edit tool input is invalid. edits must contain at least one replacement.")
        path = resolve_to_cwd(display_path, ctx.cwd)
        with names_failures(self.name, display_path):
            async with file_mutation_lock(path):
                if ctx.files is not None:
                    return await _edit_through(ctx.files, path, display_path, specs)
                pin = ctx.pins.pinned(call_id, path) if ctx.pins is not None else None
                return await run_in_thread(_edit_file, pin or path, display_path, specs, pin is not None)


async def _edit_through(files: FileAccess, path: Path, display_path: str, specs: list[EditSpec]) -> ToolResult:
    """The same edit on the client's copy of the file (ACP: the editor's buffer, unsaved changes
    included), written back through it."""
    try:
        text = await files.read_text(path)
    except OSError as error:
        raise ToolError(f"Could not edit file: {display_path}. {error}") from None
    planned = await run_in_thread(plan_edit, text.encode("utf-8", "surrogatepass"), specs, display_path)
    try:
        await files.write_text(path, ("\ufeff" if planned.bom else "") + planned.new_original)
    except OSError as error:
        raise ToolError(f"Could not write file: {display_path}. {error}") from None
    return _edit_result(planned, specs, display_path)


def _edit_file(path: Path, display_path: str, specs: list[EditSpec], pinned: bool = False) -> ToolResult:
    """``pinned``: ``path`` is the real path the permission check approved, opened (both times)
    following no link."""
    if not os.access(path, os.R_OK | os.W_OK):
        try:
            os.stat(path)
            code = "EACCES"
        except OSError as error:
            code = os_error_code(error)
        raise ToolError(f"Could not edit file: {display_path}. Error code: {code}.")
    try:
        with open_regular(path, pinned=pinned) as fh:
            raw = fh.read()
    except PathChangedError as error:
        raise ToolError(f"Could not edit file: {display_path}. {error}") from None
    except NotRegularFileError as error:
        raise ToolError(f"Could not edit file: {display_path}. It is {error.kind}, not a regular file.") from None
    except OSError as error:
        raise ToolError(f"Could not edit file: {display_path}. Error code: {os_error_code(error)}.") from None
    planned = plan_edit(raw, specs, display_path)
    data = (b"\xef\xbb\xbf" if planned.bom else b"") + planned.new_original.encode("utf-8")
    try:
        with open_regular_for_write(path, pinned=pinned) as fh:
            fh.write(data)
    except PathChangedError as error:
        raise ToolError(f"Could not write file: {display_path}. {error}") from None
    except OSError as error:
        raise ToolError(f"Could not write file: {display_path}. Error code: {os_error_code(error)}.") from None
    return _edit_result(planned, specs, display_path)


def _edit_result(planned: PlannedEdit, specs: list[EditSpec], display_path: str) -> ToolResult:
    diff, first_changed = generate_diff_string(planned.old_lf, planned.new_lf)
    return ToolResult(
        content=[{"type": "text", "text": f"Successfully replaced {len(specs)} block(s) in {display_path}."}],
        details={"diff": diff, "firstChangedLine": first_changed},
    )
