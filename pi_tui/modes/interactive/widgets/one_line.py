"""Rows that must stay one line: the parts are cut to the width, never wrapped.

A completion row or a picker row is ``label hint description [source]``. When it is wider than
its widget, the text nearest the end that may shrink goes first (the description, then the hint,
then the label), each cut with an ellipsis; the last part, the source tag, is always shown whole
so ``[template]`` and ``[skill]`` stay readable on a narrow terminal.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.cells import cell_len
from textual.content import Content

ELLIPSIS = "…"
Part = tuple[str, str]
"""``(text, style)``."""


def cut(text: str, cells: int) -> str:
    """``text`` in at most ``cells`` terminal cells, ending in ``…`` when shortened."""
    if cell_len(text) <= cells:
        return text
    if cells <= 0:
        return ""
    stripped = text.rstrip()
    if cell_len(stripped) <= cells:  # only padding goes: no ellipsis
        return stripped + " " * (cells - cell_len(stripped))
    out, used = [], 0
    for char in text:
        width = cell_len(char)
        if used + width > cells - 1:
            break
        out.append(char)
        used += width
    return "".join(out).rstrip() + ELLIPSIS


def fit_parts(parts: Sequence[Part], width: int, *, tag: Part | None = None,
              floors: Sequence[int] = ()) -> Content:
    """``parts`` then ``tag`` on one line of at most ``width`` cells (see the module docstring).
    ``floors[i]`` is how many cells part ``i`` keeps before any earlier part is cut (so a long
    argument hint gives way before the description disappears)."""
    texts = [text for text, _ in parts]
    tag_cells = cell_len(tag[0]) if tag else 0
    overflow = sum(cell_len(t) for t in texts) + tag_cells - width
    first_pass = [floors[i] if i < len(floors) else 0 for i in range(len(texts))]
    for floor in (first_pass, [0] * len(texts)):
        for index in range(len(texts) - 1, -1, -1):
            if overflow <= 0:
                break
            current = cell_len(texts[index])
            keep = max(floor[index], current - overflow)
            if keep >= current:
                continue
            # A lone "…" says nothing: drop the part instead. Its leading separator spaces do not
            # count as content (else "  Write…" cut to 3 cells left a bare "…" after the hint's).
            separator = cell_len(texts[index]) - cell_len(texts[index].lstrip(" "))
            keep = keep if keep >= separator + 2 else 0
            texts[index] = cut(texts[index], keep)
            overflow -= current - cell_len(texts[index])
    pieces = [(text, style) for text, (_, style) in zip(texts, parts, strict=True) if text]
    if tag:
        pieces.append((cut(tag[0], max(width, 0)) if overflow > 0 else tag[0], tag[1]))
    return Content.assemble(*pieces)
