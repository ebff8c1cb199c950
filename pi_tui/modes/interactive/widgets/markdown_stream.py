"""Assistant text as Markdown: streamed token by token, split so long answers never freeze the app.

Textual's ``MarkdownStream`` batches fragments and appends them to one ``Markdown`` widget. A single
widget grown to tens of kilobytes becomes slow to update (measured: 80 KB froze the loop for
1.5 s), so the text is cut into *segments*: once a segment passes ``SEGMENT_CHARS`` and reaches a
paragraph break outside a code fence, its stream is finished and a fresh ``Markdown`` widget takes
the rest. Finished segments are never re-parsed.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

from textual.containers import Vertical

if TYPE_CHECKING:  # imported lazily: Markdown + markdown-it cost ~0.15 s, after the first frame
    from markdown_it import MarkdownIt
    from textual.widgets import Markdown
    from textual.widgets.markdown import MarkdownStream

SEGMENT_CHARS = 4_000


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


class StreamedMarkdown(Vertical):
    """A column of Markdown segments; ``write`` streams, ``finish`` settles."""

    DEFAULT_CSS = """
    StreamedMarkdown { height: auto; }
    StreamedMarkdown > Markdown { margin: 0; padding: 0; }
    StreamedMarkdown > Markdown > *:first-child { margin-top: 0; }
    """

    def __init__(self, text: str = "", **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self._initial = text
        self._stream: MarkdownStream | None = None
        self._segment = ""
        self.text = text

    def compose(self):  # type: ignore[no-untyped-def]
        if self._initial:
            for part in split_markdown(self._initial):
                yield new_markdown(part)

    async def write(self, fragment: str) -> None:
        if not fragment:
            return
        self.text += fragment
        if self._stream is not None and len(self._segment) >= SEGMENT_CHARS and "\n\n" in fragment:
            head, _, tail = fragment.rpartition("\n\n")
            if not _fence_open(self._segment + head):
                await self._stream.write(head)
                await self._stream.stop()
                self._stream = None
                self._segment = ""
                fragment = tail
                if not fragment:
                    return
        if self._stream is None:
            widget = new_markdown()
            await self.mount(widget)
            self._stream = type(widget).get_stream(widget)
        self._segment += fragment
        await self._stream.write(fragment)

    async def finish(self) -> None:
        if self._stream is not None:
            await self._stream.stop()
            self._stream = None
