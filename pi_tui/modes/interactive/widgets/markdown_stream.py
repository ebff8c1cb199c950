"""Assistant text as Markdown: streamed token by token, split so long answers never freeze the app.

Textual's ``MarkdownStream`` batches fragments and appends them to one ``Markdown`` widget. A single
widget grown to tens of kilobytes becomes slow to update (measured: 80 KB froze the loop for
1.5 s), so the text is cut into *segments*: once a segment passes ``SEGMENT_CHARS`` and reaches a
paragraph break outside a code fence, its stream is finished and a fresh ``Markdown`` widget takes
the rest. Finished segments are never re-parsed.
"""

from __future__ import annotations

import asyncio
from functools import cache
from typing import TYPE_CHECKING

from textual.containers import Vertical
from textual.widgets import Static

if TYPE_CHECKING:  # imported lazily: Markdown + markdown-it cost ~0.15 s, after the first frame
    from markdown_it import MarkdownIt
    from textual.widgets import Markdown
    from textual.widgets.markdown import MarkdownStream

FLUSH_SECONDS = 1 / 10
"""Streamed text reaches the screen at most this often (10 updates/s still reads as live)."""
SEGMENT_CHARS = 1_500
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


def _fence_open(text: str) -> bool:
    """True when ``text`` ends inside a fenced code block."""
    fences = sum(1 for line in text.split("\n") if line.lstrip().startswith(("```", "~~~")))
    return fences % 2 == 1


def split_markdown(text: str, limit: int = SEGMENT_CHARS) -> list[str]:
    """Cut finished Markdown into segments at paragraph breaks outside code fences."""
    segments: list[str] = []
    start = 0
    while len(text) - start > limit:
        cut = text.find("\n\n", start + limit)
        while cut != -1 and _fence_open(text[start:cut]):
            cut = text.find("\n\n", cut + 2)
        if cut == -1:
            break
        segments.append(text[start:cut])
        start = cut + 2
    segments.append(text[start:])
    return [s for s in segments if s.strip()] or [""]


class SettledMarkdown(Static):
    """Finished Markdown as one widget (Rich's renderer): cheap to lay out and to repaint.

    Textual's ``Markdown`` makes a widget per block; hundreds of them made every frame of a long
    conversation re-lay out the lot (measured ~100 ms per frame). Text that no longer changes is
    rendered once into a single ``Static`` instead.
    """

    DEFAULT_CSS = "SettledMarkdown { height: auto; margin: 0 0 1 0; }"

    def __init__(self, text: str) -> None:
        from rich.markdown import Markdown as RichMarkdown

        super().__init__(RichMarkdown(text, code_theme="ansi_dark", hyperlinks=False), classes="settled-markdown")
        self.source = text


class StreamedMarkdown(Vertical):
    """Assistant text: a live ``Markdown`` segment while streaming, settled segments before it."""

    DEFAULT_CSS = """
    StreamedMarkdown { height: auto; }
    StreamedMarkdown > Markdown { margin: 0; padding: 0; }
    """

    def __init__(self, text: str = "", **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self._initial = text
        self._stream: MarkdownStream | None = None
        self._live: Markdown | None = None
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

    async def _flush(self) -> None:
        async with self._lock:
            self._flush_scheduled = False
            fragment, self._pending = self._pending, ""
            if fragment:
                await self._write_now(fragment)

    async def _write_now(self, fragment: str) -> None:
        """Append to the live segment; settle it at a paragraph break once it is long enough."""
        while fragment:
            cut = self._settle_point(fragment)
            if cut is None:
                await self._append_live(fragment)
                return
            await self._append_live(fragment[:cut])
            await self._settle()
            fragment = fragment[cut + 2:]

    def _settle_point(self, fragment: str) -> int | None:
        """Index of the first paragraph break in ``fragment`` that ends a long-enough segment
        outside a code fence, or None."""
        start = max(0, SEGMENT_CHARS - len(self._segment))
        cut = fragment.find("\n\n", start)
        while cut != -1:
            if not _fence_open(self._segment + fragment[:cut]):
                return cut
            cut = fragment.find("\n\n", cut + 2)
        return None

    async def _append_live(self, text: str) -> None:
        if not text:
            return
        if self._stream is None:
            widget = new_markdown()
            await self.mount(widget)
            self._live = widget
            self._stream = type(widget).get_stream(widget)
        self._segment += text
        await self._stream.write(text)

    async def _settle(self) -> None:
        """Finish the live segment and swap it for its settled rendering."""
        if self._stream is not None:
            await self._stream.stop()
            self._stream = None
        live, self._live = self._live, None
        text, self._segment = self._segment, ""
        if live is not None:
            if text.strip():
                await self.mount(SettledMarkdown(text), before=live)
            await live.remove()

    async def finish(self) -> None:
        await self._flush()
        async with self._lock:
            await self._settle()
