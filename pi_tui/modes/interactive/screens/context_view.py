"""/context: what the model will receive next, part by part, with token counts and cache reuse.

The screen shows a ``RequestPreview`` (``AgentSession.preview_request()``): one table row per part
(system prompt, tools, summaries, each message) with its tokens, its share of the request and a
note on what compaction, pruning or artifacts replaced; the highlighted part's text below.
"""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static

from pi_tui.core.context.preview import RequestPart, RequestPreview

SHARE_BAR_WIDTH = 12
"""Cells of the share bar of the largest part."""
PART_NAME_WIDTH = 36
MIN_NOTE_WIDTH = 24
FIXED_COLUMNS_WIDTH = 3 + PART_NAME_WIDTH + 9 + SHARE_BAR_WIDTH + 7 + 2 * 5 + 4
"""The other columns, cell padding, the panel's padding and a scrollbar."""
DETAIL_MAX_CHARS = 20_000
"""Text shown for the highlighted part; the rest is elided (the table has the full count)."""
_EIGHTHS = " ▏▎▍▌▋▊▉"


class ContextScreen(ModalScreen[None]):
    """The next request, part by part."""

    CSS_PATH = "context_view.tcss"
    BINDINGS = [  # noqa: RUF012
        Binding("escape,q", "close", "Close", id="context.close"),
    ]

    def __init__(self, preview: RequestPreview) -> None:
        super().__init__()
        self._preview = preview

    @property
    def preview(self) -> RequestPreview:
        return self._preview

    def compose(self) -> ComposeResult:
        with Vertical(id="context-panel"):
            yield Static(self._title(), id="context-title")
            yield Static(self._totals(), id="context-totals")
            yield Static(self._cache_line(), id="context-cache")
            yield DataTable(id="context-parts", cursor_type="row", zebra_stripes=False)
            yield Static("", id="context-detail-title")
            with VerticalScroll(id="context-detail"):
                yield Static("", id="context-detail-text")
            yield Static("↑/↓ part  tab focus text  esc close", id="context-help")

    def on_mount(self) -> None:
        table = self.query_one("#context-parts", DataTable)
        table.add_column("#", key="index", width=3)
        table.add_column("part", key="part", width=PART_NAME_WIDTH)
        table.add_column(Text("tokens", justify="right"), key="tokens", width=9)
        table.add_column("share", key="share", width=SHARE_BAR_WIDTH + 7)
        note_width = max(MIN_NOTE_WIDTH, self.app.size.width - FIXED_COLUMNS_WIDTH)
        table.add_column("replaced / note", key="note", width=note_width)
        largest = max((part.tokens for part in self._preview.parts), default=0)
        total = self._preview.total_tokens
        number = 0
        for index, part in enumerate(self._preview.parts):
            if part.kind in ("message", "summary"):
                number += 1
            table.add_row(
                str(number) if part.kind in ("message", "summary") else "",
                _clip(part.name, PART_NAME_WIDTH),
                Text(f"{part.tokens:,}", justify="right"),
                _share_cell(part.tokens, total, largest),
                Content.styled(_clip(part.note, note_width), "$text-warning") if part.note else "",
                key=str(index),
            )
        table.focus()
        if self._preview.parts:
            self._show_part(0)

    def _title(self) -> Content:
        preview = self._preview
        total, window = preview.total_tokens, preview.context_window
        used = f"{total:,} of {window:,} tokens ({100 * total / window:.1f}%)" if window else f"{total:,} tokens"
        return Content.assemble(
            ("Context", "bold $text-primary"),
            ("  next request to ", "$foreground-muted"),
            (preview.model_ref or "no model", "bold"),
            ("  ·  ", "$foreground-muted"),
            (used, "bold"),
        )

    def _totals(self) -> Content:
        parts = self._preview.parts
        counts = {kind: sum(p.tokens for p in parts if p.kind == kind) for kind in ("system", "tools", "summary", "message")}
        messages = sum(p.kind == "message" for p in parts)
        breakdown = (
            f"system {counts['system']:,} · tools {counts['tools']:,} · summaries {counts['summary']:,}"
            f" · messages {counts['message']:,} in {messages}"
        )
        replaced = sum(bool(p.note) for p in parts)
        note = f"  ·  {replaced} part{'s' if replaced != 1 else ''} replaced or shortened" if replaced else ""
        return Content.assemble((breakdown, "$foreground-muted"), (note, "$text-warning"))

    def _cache_line(self) -> Content:
        preview = self._preview
        pieces: list[tuple[str, str]] = [("Prompt cache: ", "$foreground-muted")]
        if preview.prefix_reuse_tokens is None:
            pieces.append(("no earlier request in this session to reuse", "$foreground-muted"))
        else:
            percent = preview.prefix_reuse_percent or 0.0
            pieces.append((f"{preview.prefix_reuse_tokens:,} tokens ({percent:.1f}%)", "bold $text-success"))
            pieces.append((" are an unchanged prefix of the last request", "$foreground-muted"))
        if preview.last_cache_read_tokens is not None:
            pieces.append((f"  ·  last reply read {preview.last_cache_read_tokens:,} from cache", "$foreground-muted"))
        pieces.extend((f"  ·  {note}", "$foreground-muted") for note in preview.notes)
        return Content.assemble(*pieces)

    @on(DataTable.RowHighlighted, "#context-parts")
    def _row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_part(event.cursor_row)

    def _show_part(self, index: int) -> None:
        if not 0 <= index < len(self._preview.parts):
            return
        part = self._preview.parts[index]
        self.query_one("#context-detail-title", Static).update(_detail_title(part))
        text = part.text if len(part.text) <= DETAIL_MAX_CHARS else part.text[:DETAIL_MAX_CHARS] + "\n…"
        self.query_one("#context-detail-text", Static).update(Content(text or "(empty)"))
        self.query_one("#context-detail", VerticalScroll).scroll_home(animate=False)

    def action_close(self) -> None:
        self.dismiss(None)


def _detail_title(part: RequestPart) -> Content:
    pieces: list[tuple[str, str]] = [(part.name, "bold"), (f"  {part.tokens:,} tokens", "$foreground-muted")]
    if part.note:
        pieces.append((f"  ·  {part.note}", "$text-warning"))
    return Content.assemble(*pieces)


def _share_cell(tokens: int, total: int, largest: int) -> Content:
    if not total or not largest:
        return Content("")
    eighths = round(SHARE_BAR_WIDTH * 8 * tokens / largest)
    bar = "█" * (eighths // 8) + (_EIGHTHS[eighths % 8] if eighths % 8 else "")
    return Content.assemble((bar.ljust(SHARE_BAR_WIDTH), "$accent"), (f" {100 * tokens / total:4.1f}%", "$foreground-muted"))


def _clip(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
