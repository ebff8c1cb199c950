"""The line-numbered diff ``edit`` returns for the UI (pi-behaviour.md §4.4, §13.4 edit).

Format, one line each: ``+<n> text`` (new-file number), ``-<n> text`` (old-file number),
`` <n> text`` for context (old-file number), `` <pad> ...`` for a skipped run. Numbers are
right-aligned to the width of the larger line count. Context is 4 lines before and after each
change; an unchanged run between two changes is shown whole when at most 8 lines long, otherwise
its first 4 and last 4 lines around a ``...`` line.

``compute_edit_diff`` runs the same matching as the tool without writing, so the UI can show a
preview before the call executes.
"""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pi_tui.core.errors import ToolError
from pi_tui.core.messages import JsonValue
from pi_tui.tools.edit_match import EditSpec, LfView, apply_regions, match_edits
from pi_tui.tools.paths import resolve_to_cwd

CONTEXT_LINES = 4
PartKind = Literal["equal", "removed", "added"]


@dataclass(slots=True)
class _Part:
    kind: PartKind
    lines: list[str]


def _line_parts(old_lines: list[str], new_lines: list[str]) -> list[_Part]:
    """Equal/removed/added runs, removals before additions (as jsdiff's diffLines orders them)."""
    prefix = 0
    limit = min(len(old_lines), len(new_lines))
    while prefix < limit and old_lines[prefix] == new_lines[prefix]:
        prefix += 1
    suffix = 0
    while (
        suffix < limit - prefix
        and old_lines[len(old_lines) - 1 - suffix] == new_lines[len(new_lines) - 1 - suffix]
    ):
        suffix += 1
    old_mid = old_lines[prefix : len(old_lines) - suffix]
    new_mid = new_lines[prefix : len(new_lines) - suffix]
    parts: list[_Part] = []

    def add(kind: PartKind, lines: list[str]) -> None:
        if not lines:
            return
        if parts and parts[-1].kind == kind:
            parts[-1].lines.extend(lines)
        else:
            parts.append(_Part(kind, list(lines)))

    add("equal", old_lines[:prefix])
    matcher = difflib.SequenceMatcher(None, old_mid, new_mid, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            add("equal", old_mid[i1:i2])
            continue
        add("removed", old_mid[i1:i2])
        add("added", new_mid[j1:j2])
    add("equal", old_lines[len(old_lines) - suffix :])
    return parts


def generate_diff_string(old: str, new: str, context_lines: int = CONTEXT_LINES) -> tuple[str, int | None]:
    """(diff text, first changed line in the new file) for two LF-normalized texts."""
    old_lines, new_lines = old.split("\n"), new.split("\n")
    width = len(str(max(len(old_lines), len(new_lines))))
    pad = " " * width
    parts = _line_parts(old_lines, new_lines)
    out: list[str] = []
    old_no = new_no = 1
    first_changed: int | None = None
    last_was_change = False

    def context(lines: list[str]) -> None:
        nonlocal old_no, new_no
        for line in lines:
            out.append(f" {old_no:>{width}} {line}")
            old_no += 1
            new_no += 1

    def skip(count: int) -> None:
        nonlocal old_no, new_no
        old_no += count
        new_no += count

    for index, part in enumerate(parts):
        if part.kind != "equal":
            if first_changed is None:
                first_changed = new_no
            for line in part.lines:
                if part.kind == "added":
                    out.append(f"+{new_no:>{width}} {line}")
                    new_no += 1
                else:
                    out.append(f"-{old_no:>{width}} {line}")
                    old_no += 1
            last_was_change = True
            continue
        lines = part.lines
        next_is_change = index + 1 < len(parts) and parts[index + 1].kind != "equal"
        if last_was_change and next_is_change:
            if len(lines) <= context_lines * 2:
                context(lines)
            else:
                context(lines[:context_lines])
                out.append(f" {pad} ...")
                skip(len(lines) - 2 * context_lines)
                context(lines[-context_lines:])
        elif last_was_change:
            context(lines[:context_lines])
            if len(lines) > context_lines:
                out.append(f" {pad} ...")
                skip(len(lines) - context_lines)
        elif next_is_change:
            hidden = max(0, len(lines) - context_lines)
            if hidden:
                out.append(f" {pad} ...")
                skip(hidden)
            context(lines[hidden:])
        else:
            skip(len(lines))
        last_was_change = False
    return "\n".join(out), first_changed


@dataclass(slots=True)
class PlannedEdit:
    """The outcome of matching edits against file bytes, before anything is written."""

    bom: bool
    original: str
    """The original text without BOM (line endings as in the file)."""
    new_original: str
    """The new text, same line endings as the file, every unmatched byte unchanged."""
    old_lf: str
    new_lf: str


def detect_crlf(text: str) -> bool:
    """CRLF when the first ``\\r\\n`` comes before the first bare ``\\n`` (pi's rule)."""
    crlf = text.find("\r\n")
    lf = text.find("\n")
    return crlf != -1 and crlf <= lf


def plan_edit(raw: bytes, edits: list[EditSpec], display_path: str) -> PlannedEdit:
    """Match ``edits`` in the file's bytes and build the new content (raises ToolError)."""
    bom = raw.startswith(b"\xef\xbb\xbf")
    try:
        text = raw[3 if bom else 0 :].decode("utf-8")
    except UnicodeDecodeError as error:
        raise ToolError(
            f"Could not edit file: {display_path}. It is not valid UTF-8 text (byte {error.start})."
        ) from None
    ending = "\r\n" if detect_crlf(text) else "\n"
    view = LfView.of(text)
    matches = match_edits(view.text, edits, display_path)
    new_lf = apply_regions(view.text, [(m.start, m.end, m.new_text) for m in matches])
    new_original = apply_regions(
        text,
        [(view.to_original(m.start), view.to_original(m.end), m.new_text.replace("\n", ending)) for m in matches],
    )
    if new_original == text:
        if len(edits) > 1:
            raise ToolError(f"No changes made to {display_path}. The replacements produced identical content.")
        raise ToolError(
            f"No changes made to {display_path}. The replacement produced identical content. This might "
            "indicate an issue with special characters or the text not existing as expected."
        )
    return PlannedEdit(bom, text, new_original, view.text, new_lf)


def compute_edit_diff(path: str, edits: list[dict[str, JsonValue]], cwd: Path | str) -> dict[str, JsonValue]:
    """Preview for the UI: ``{"diff", "firstChangedLine"}`` or ``{"error": message}``."""
    specs = [EditSpec(str(e.get("oldText", "")), str(e.get("newText", ""))) for e in edits]
    if not specs:
        return {"error": "Edit tool input is invalid. edits must contain at least one replacement."}
    resolved = resolve_to_cwd(path, cwd)
    try:
        with open(os.fspath(resolved), "rb") as fh:
            raw = fh.read()
        planned = plan_edit(raw, specs, path)
    except OSError as error:
        return {"error": f"Could not edit file: {path}. {error.strerror or error}."}
    except ToolError as error:
        return {"error": str(error)}
    diff, first = generate_diff_string(planned.old_lf, planned.new_lf)
    return {"diff": diff, "firstChangedLine": first}
