"""Locating ``edits[].oldText`` in a file (pi-behaviour.md §4.4, §13.4 edit).

The rules (error texts, check order, uniqueness counted in fuzzy-normalized space, "if any edit
needs the fuzzy match, all are matched in fuzzy space") are pi 0.73.1's. What differs is *where*
the replacement happens: pi replaces inside the normalized text and writes that back, so one
fuzzy edit strips trailing whitespace and straightens quotes in the whole file (§12 surprise 3).
Here every normalized position carries the span of original characters it came from, so a match
maps back to a region of the original text and only that region is replaced.

Two views of the original text ``T`` (BOM already removed):

* the LF view ``L``: ``\\r\\n`` and bare ``\\r`` become ``\\n`` (pi's normalizeToLF); a CRLF pair
  spans two characters of ``T`` (kept as a sorted list of positions, mapped with bisect);
* the fuzzy view ``F`` of ``L``: NFKC, trailing whitespace stripped per line, smart quotes,
  dashes and special spaces made ASCII; each ``F`` character knows its ``[start, end)`` in ``L``.
"""

from __future__ import annotations

import bisect
import itertools
import re
import unicodedata
from dataclasses import dataclass

from pi_tui.core.errors import ToolError

_SINGLE_QUOTES = re.compile("[\u2018\u2019\u201a\u201b]")
_DOUBLE_QUOTES = re.compile("[\u201c\u201d\u201e\u201f]")
_DASHES = re.compile("[\u2010-\u2015\u2212]")
_SPACES = re.compile("[\u00a0\u2002-\u200a\u202f\u205f\u3000]")
_CHAR_MAP = {
    **dict.fromkeys("‘’‚‛", "'"),
    **dict.fromkeys("“”„‟", '"'),
    **dict.fromkeys("‐‑‒–—―−", "-"),
    **dict.fromkeys("\xa0\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000", " "),
}


def normalize_to_lf(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def normalize_for_fuzzy_match(text: str) -> str:
    """pi's normalizeForFuzzyMatch: NFKC, rstrip each line, ASCII quotes/dashes/spaces."""
    text = "\n".join(line.rstrip() for line in unicodedata.normalize("NFKC", text).split("\n"))
    text = _SINGLE_QUOTES.sub("'", text)
    text = _DOUBLE_QUOTES.sub('"', text)
    text = _DASHES.sub("-", text)
    return _SPACES.sub(" ", text)


@dataclass(slots=True)
class LfView:
    """``T`` with line endings made ``\\n``; ``to_original`` maps L offsets to T offsets."""

    text: str
    crlf_positions: list[int]
    """L-offsets of every ``\\n`` that was a ``\\r\\n`` in T (sorted)."""

    @classmethod
    def of(cls, original: str) -> LfView:
        if "\r" not in original:
            return cls(original, [])
        positions: list[int] = []
        for removed, match in enumerate(re.finditer("\r\n", original)):
            positions.append(match.start() - removed)
        return cls(normalize_to_lf(original), positions)

    def to_original(self, offset: int) -> int:
        return offset + bisect.bisect_left(self.crlf_positions, offset)


@dataclass(slots=True)
class FuzzyView:
    """``F`` = the fuzzy normalization of ``L``, able to map F offsets back to L.

    Kept per line, not per character: an ASCII line only loses its trailing whitespace, so its
    F characters sit at a fixed offset from their L characters. Only lines with other characters
    (rare in code) keep a per-character table of source spans.
    """

    text: str
    f_starts: list[int]
    """F offset of each line's first character."""
    l_starts: list[int]
    """L offset of each line's first character (plus one final entry: len(L) + 1)."""
    kept_lengths: list[int]
    spans: dict[int, list[tuple[int, int]]]
    """Line index → the L span of each F character of that line (non-ASCII lines only)."""
    source_length: int

    @classmethod
    def of(cls, lf_text: str) -> FuzzyView:
        pieces: list[str] = []
        f_starts: list[int] = []
        l_starts: list[int] = []
        kept_lengths: list[int] = []
        spans: dict[int, list[tuple[int, int]]] = {}
        f_offset = l_offset = 0
        for index, line in enumerate(lf_text.split("\n")):
            kept, line_spans = _normalize_line(line, l_offset)
            if line_spans is not None:
                spans[index] = line_spans
            f_starts.append(f_offset)
            l_starts.append(l_offset)
            kept_lengths.append(len(kept))
            pieces.append(kept)
            f_offset += len(kept) + 1
            l_offset += len(line) + 1
        l_starts.append(l_offset)
        return cls("\n".join(pieces), f_starts, l_starts, kept_lengths, spans, len(lf_text))

    def _span(self, offset: int) -> tuple[int, int]:
        """The L span of F character ``offset``."""
        line = bisect.bisect_right(self.f_starts, offset) - 1
        column = offset - self.f_starts[line]
        if column >= self.kept_lengths[line]:  # the newline after the line
            newline = self.l_starts[line + 1] - 1
            return newline, newline + 1
        if line in self.spans:
            return self.spans[line][column]
        start = self.l_starts[line] + column
        return start, start + 1

    def to_lf_region(self, start: int, end: int) -> tuple[int, int]:
        """The L region covering F characters ``[start, end)`` (whole source clusters)."""
        if start >= len(self.text):
            return self.source_length, self.source_length
        first = self._span(start)
        if end <= start:
            return first[0], first[0]
        return first[0], self._span(end - 1)[1]


def _normalize_line(line: str, base: int) -> tuple[str, list[tuple[int, int]] | None]:
    """The normalized line, and for a non-ASCII line the L span of each output character."""
    if line.isascii():
        return line.rstrip(), None
    out: list[tuple[str, int, int]] = []
    cluster_start = 0
    # A cluster is a base character plus its combining marks: NFKC composes within clusters.
    for index in range(1, len(line) + 1):
        if index < len(line) and unicodedata.combining(line[index]):
            continue
        cluster = line[cluster_start:index]
        for char in unicodedata.normalize("NFKC", cluster):
            out.append((_CHAR_MAP.get(char, char), base + cluster_start, base + index))
        cluster_start = index
    while out and out[-1][0].isspace():
        out.pop()
    return "".join(char for char, _, _ in out), [(start, end) for _, start, end in out]


@dataclass(frozen=True, slots=True)
class EditSpec:
    old_text: str
    new_text: str


@dataclass(frozen=True, slots=True)
class MatchedEdit:
    index: int
    start: int
    """Region in the LF view, ``[start, end)``."""
    end: int
    new_text: str
    fuzzy: bool


def _not_found(path: str, index: int, total: int) -> ToolError:
    if total > 1:
        return ToolError(
            f"Could not find edits[{index}] in {path}. The oldText must match exactly including "
            "all whitespace and newlines."
        )
    return ToolError(
        f"Could not find the exact text in {path}. The old text must match exactly including all "
        "whitespace and newlines."
    )


def _duplicate(path: str, index: int, total: int, count: int) -> ToolError:
    if total > 1:
        return ToolError(
            f"Found {count} occurrences of edits[{index}] in {path}. Each oldText must be unique. "
            "Please provide more context to make it unique."
        )
    return ToolError(
        f"Found {count} occurrences of the text in {path}. The text must be unique. Please provide "
        "more context to make it unique."
    )


def match_edits(lf_text: str, edits: list[EditSpec], path: str) -> list[MatchedEdit]:
    """Regions of the LF view to replace, sorted by position; raises pi's errors in pi's order."""
    total = len(edits)
    edits = [EditSpec(normalize_to_lf(e.old_text), normalize_to_lf(e.new_text)) for e in edits]
    for index, edit in enumerate(edits):
        if not edit.old_text:
            where = f"edits[{index}].oldText" if total > 1 else "oldText"
            raise ToolError(f"{where} must not be empty in {path}.")
    fuzzy_olds = [normalize_for_fuzzy_match(e.old_text) for e in edits]
    fuzzy_view: FuzzyView | None = None
    needs_fuzzy = False
    for edit, fuzzy_old in zip(edits, fuzzy_olds, strict=True):
        if edit.old_text not in lf_text:
            fuzzy_view = fuzzy_view or FuzzyView.of(lf_text)
            if fuzzy_old in fuzzy_view.text:
                needs_fuzzy = True
    fuzzy_text = fuzzy_view.text if fuzzy_view else normalize_for_fuzzy_match(lf_text)
    matched: list[MatchedEdit] = []
    for index, (edit, fuzzy_old) in enumerate(zip(edits, fuzzy_olds, strict=True)):
        if needs_fuzzy:
            assert fuzzy_view is not None
            position, length = fuzzy_view.text.find(edit.old_text), len(edit.old_text)
            if position == -1:
                position, length = fuzzy_view.text.find(fuzzy_old), len(fuzzy_old)
            if position == -1:
                raise _not_found(path, index, total)
            start, end = fuzzy_view.to_lf_region(position, position + length)
        else:
            position = lf_text.find(edit.old_text)
            if position == -1:
                raise _not_found(path, index, total)
            start, end = position, position + len(edit.old_text)
        count = fuzzy_text.count(fuzzy_old) if fuzzy_old else 0
        if count > 1:
            raise _duplicate(path, index, total, count)
        matched.append(MatchedEdit(index, start, end, edit.new_text, needs_fuzzy))
    matched.sort(key=lambda m: (m.start, m.end))
    for earlier, later in itertools.pairwise(matched):
        if earlier.end > later.start:
            raise ToolError(
                f"edits[{earlier.index}] and edits[{later.index}] overlap in {path}. Merge them into "
                "one edit or target disjoint regions."
            )
    return matched


def apply_regions(text: str, regions: list[tuple[int, int, str]]) -> str:
    """Replace ``[start, end)`` regions (sorted, disjoint) with their texts."""
    pieces: list[str] = []
    cursor = 0
    for start, end, replacement in regions:
        pieces.append(text[cursor:start])
        pieces.append(replacement)
        cursor = end
    pieces.append(text[cursor:])
    return "".join(pieces)
