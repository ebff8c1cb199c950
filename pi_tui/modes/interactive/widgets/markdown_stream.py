"""Assistant text as Markdown: streamed token by token, cheap to keep on screen.

Each answer is cut into *segments* at paragraph breaks outside code fences: the live segment is
the only one that changes; once it passes ``SEGMENT_CHARS`` and a break arrives, it is settled
and a new live segment takes the rest. Every segment is one ``SettledMarkdown`` widget that Rich
renders once per (text, width) and keeps as lines, so a frame costs the live segment's render
plus cached lines. Textual's ``Markdown``/``MarkdownStream`` was used before: its widget per block
made each frame of a fast stream re-lay out and repaint dozens of widgets (measured at 2,000
tokens/s: ~50 ms per frame, the stream read at ~450 chunks/s; see bench/RESULTS.md). Rich's
renderer also draws the history, so live and finished text look the same.
"""

from __future__ import annotations

import asyncio
import re
from functools import cache
from typing import TYPE_CHECKING

from textual.containers import Vertical
from textual.geometry import Size
from textual.strip import Strip
from textual.widget import Widget

if TYPE_CHECKING:  # imported lazily: Markdown + markdown-it cost ~0.15 s, after the first frame
    from markdown_it import MarkdownIt
    from rich.console import RenderableType
    from textual.selection import Selection
    from textual.widgets import Markdown

FLUSH_SECONDS = 1 / 10
"""Streamed text reaches the screen at most this often (10 updates/s still reads as live)."""
SEGMENT_CHARS = 400
"""The live segment is settled at the next paragraph break after this many characters."""


@cache
def shared_parser() -> MarkdownIt:
    """One parser for every message. Textual builds a new "gfm-like" parser on every append
    (measured 2.6 ms each) and its linkify pass rescans the text (2 ms); tables and
    strikethrough are kept, bare-URL linkify is dropped."""
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable(["table", "strikethrough"])


def new_markdown(text: str = "") -> Markdown:
    from textual.widgets import Markdown

    return Markdown(text, parser_factory=shared_parser)


_FENCE_OPENING = re.compile(r"(`{3,}|~{3,})(.*)")
_CONTAINER_MARKERS = re.compile(r"(?:[ \t]*(?:>|[-+*][ \t]|\d{1,9}[.)][ \t]))*[ \t]*")
_QUOTE_MARKERS = re.compile(r"[ \t>]*")


def _fence_after(fence: str, line: str) -> str:
    """The fence still open after ``line`` ("" for none) when ``fence`` was open before it. As in
    CommonMark, a fence may open on a list item's or a quote's line, and closes only with its own
    character, at least as many times, and nothing after: inside a ``` block, a ```python or
    ~~~ line is code."""
    if fence:
        rest = line[_QUOTE_MARKERS.match(line).end():].rstrip()  # type: ignore[union-attr]
        return "" if rest.startswith(fence) and not rest.strip(fence[0]) else fence
    opening = _FENCE_OPENING.match(line, _CONTAINER_MARKERS.match(line).end())  # type: ignore[union-attr]
    if opening and not (opening[1][0] == "`" and "`" in opening[2]):
        return opening[1]
    return ""


def first_cut(text: str, start: int, limit: int) -> int | None:
    """The first paragraph break (its index) that may end the segment starting at ``start``
    once it is ``limit`` long: not inside a code fence, and not before an indented line (a list
    item's continuation or an indented code block would render differently on its own). A break
    whose next character has not arrived yet waits. One pass over the lines: a long open code
    block is scanned once per call, not once per blank line in it."""
    fence = ""
    line_start = start
    while (end := text.find("\n", line_start)) != -1:
        fence = _fence_after(fence, text[line_start:end])
        after = end + 2
        if (not fence and end >= start + limit and text.startswith("\n\n", end)
                and after < len(text) and text[after] not in " \t\n"):
            return end
        line_start = end + 1
    return None


def split_markdown(text: str, limit: int = SEGMENT_CHARS) -> list[str]:
    """Cut finished Markdown into segments at paragraph breaks outside code fences (CRLF line
    endings read as LF, as in the live stream)."""
    text = text.replace("\r\n", "\n")
    segments: list[str] = []
    start = 0
    while len(text) - start > limit and (cut := first_cut(text, start, limit)) is not None:
        segments.append(text[start:cut])
        start = cut + 2
    segments.append(text[start:])
    return [s for s in segments if s.strip()] or [""]


class SettledMarkdown(Widget):
    """One segment of Markdown, rendered by Rich once per (text, width) and kept as lines.

    Textual's ``Markdown`` makes a widget per block, and a ``Static`` holding a Rich renderable
    renders it again every time the layout asks for its height: while an answer streams, every
    frame re-laid out and repainted all of that (measured: ~50 ms per frame, the stream read at
    ~450 chunks/s). Here layout asks ``len(lines)`` and painting returns cached strips.
    """

    DEFAULT_CSS = "SettledMarkdown { height: auto; margin: 0 0 1 0; }"

    def __init__(self, text: str, *, live: bool = False) -> None:
        super().__init__(classes="settled-markdown")
        self.live = live
        """True while this is the segment still growing (a flag, not a CSS class: a class
        change would restyle and so re-render the segment as it settles)."""
        self.source = text
        self._lines: list[Strip] | None = None
        self._lines_width = -1

    def set_source(self, text: str) -> None:
        """Replace the text (the live segment grows by this); one re-render, at the next paint.
        Trailing whitespace alone does not change how Markdown renders: no re-render for it."""
        unchanged = text.rstrip() == self.source.rstrip()
        self.source = text
        if not unchanged:
            self._lines = None
            self.refresh(layout=True)

    def notify_style_update(self) -> None:
        # A theme change restyles the text: render again.
        self._lines = None
        super().notify_style_update()

    def lines_for(self, width: int) -> list[Strip]:
        if self._lines is None or self._lines_width != width:
            from textual.visual import Visual, visualize

            visual = visualize(self, _rich_markdown(self.source))
            lines = Visual.to_strips(self, visual, width, None, self.visual_style, pad=True)
            # Rich opens a list and pads a code block with blank lines; at the edges of a segment
            # they would add to the margin between segments (two blank lines where the text had one).
            start, end = 0, len(lines)
            while start < end - 1 and not lines[start].text.strip():
                start += 1
            while end - 1 > start and not lines[end - 1].text.strip():
                end -= 1
            self._lines = lines[start:end]
            self._lines_width = width
        return self._lines

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self.lines_for(width)) if self.source else 0

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        lines = self.lines_for(width)
        if not 0 <= y < len(lines):
            return Strip.blank(width, self.visual_style.rich_style)
        line = lines[y]
        span = self.text_selection.get_span(y) if self.text_selection is not None else None
        if span is not None:
            line = self._selected(line, *span)
        # Offsets let the mouse select text here (see ``get_selection``).
        return line.apply_offsets(0, y)

    def _selected(self, line: Strip, start: int, end: int) -> Strip:
        """``line`` with characters ``start`` to ``end`` (-1: to the end) painted as selected."""
        text = line.text
        end = len(text) if end == -1 else min(end, len(text))
        if start >= end:
            return line
        from rich.cells import cell_len
        from rich.segment import Segment

        left, right = cell_len(text[:start]), cell_len(text[:end])
        style = self.screen.get_component_rich_style("screen--selection")
        chosen = Strip(Segment.apply_style(line.crop(left, right), post_style=style), right - left)
        return Strip.join([line.crop(0, left), chosen, line.crop(right)])

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        text = "\n".join(line.text.rstrip() for line in self.lines_for(self.size.width))
        return selection.extract(text), "\n"

    def selection_updated(self, selection: Selection | None) -> None:
        self.refresh()


def _rich_markdown(text: str) -> RenderableType:
    from rich.markdown import Markdown as RichMarkdown

    return RichMarkdown(text, code_theme="ansi_dark", hyperlinks=False)


class StreamedMarkdown(Vertical):
    """Assistant text: settled segments, then the live one while streaming."""

    DEFAULT_CSS = "StreamedMarkdown { height: auto; }"

    def __init__(self, text: str = "", **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self._initial = text
        self._live: SettledMarkdown | None = None
        self._segment = ""
        self._pending = ""
        self._flush_scheduled = False
        self._lock = asyncio.Lock()
        self.text = text

    def compose(self):  # type: ignore[no-untyped-def]
        if self._initial:
            for part in split_markdown(self._initial):
                yield SettledMarkdown(part)

    async def write(self, fragment: str) -> None:
        """Take a fragment; it reaches the screen with the next flush (at most ``FLUSH_SECONDS``
        later), so a fast stream costs one Markdown update per flush, not one per token."""
        if not fragment:
            return
        self.text += fragment
        self._pending += fragment
        if not self._flush_scheduled:
            self._flush_scheduled = True
            self.set_timer(FLUSH_SECONDS, self._flush)

    async def _flush(self, *, final: bool = False) -> None:
        async with self._lock:
            self._flush_scheduled = False
            fragment, self._pending = self._pending, ""
            # CRLF answers are shown with plain newlines (the cut rules look for "\n\n"); a "\r"
            # at the end of a flush waits for the "\n" that may follow it.
            if fragment.endswith("\r") and not final:
                fragment, self._pending = fragment[:-1], "\r"
            fragment = fragment.replace("\r\n", "\n")
            if fragment:
                await self._write_now(fragment)

    async def _write_now(self, fragment: str) -> None:
        """Grow the live segment; settle it at a paragraph break once it is long enough. A break
        may be found behind text already shown (its next character just arrived)."""
        text = self._segment + fragment
        start = 0
        while (cut := self._cut_after(text, start)) is not None:
            await self._show_live(text[start:cut])
            await self._settle()
            start = cut + 2
        await self._show_live(text[start:])

    @staticmethod
    def _cut_after(text: str, start: int) -> int | None:
        """The first break that may end the segment starting at ``start``, once it is at least
        ``SEGMENT_CHARS`` long, or None."""
        return first_cut(text, start, SEGMENT_CHARS)

    async def _show_live(self, text: str) -> None:
        if text == self._segment and self._live is not None:
            return
        self._segment = text
        if not text:
            return
        if self._live is None:
            self._live = SettledMarkdown("", live=True)
            await self.mount(self._live)
        self._live.set_source(text)

    async def _settle(self) -> None:
        """Finish the live segment: it stays as it is, and the next text starts a new one."""
        live, self._live = self._live, None
        self._segment = ""
        if live is None:
            return
        if live.source.strip():
            live.live = False
        else:
            await live.remove()

    async def finish(self) -> None:
        await self._flush(final=True)
        async with self._lock:
            await self._settle()
