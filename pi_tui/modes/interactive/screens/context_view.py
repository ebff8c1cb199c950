"""/context: what the model will receive next, part by part, with token counts and cache reuse.

The screen shows a ``RequestPreview`` (``AgentSession.preview_request()``): one table row per part
(system prompt, tools, summaries, each message) with its tokens, its share of the request and a
note on what compaction, pruning or artifacts replaced; the highlighted part's text below.
"""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

from pi_tui.core.context.preview import RequestPart, RequestPreview
from pi_tui.modes.interactive.screens.row_list import RowList, row_navigation_bindings
from pi_tui.modes.interactive.screens.tree_text import clip_line

SHARE_BAR_WIDTH = 12
"""Cells of the share bar of the largest part."""
NUMBER_WIDTH = 5
PART_NAME_WIDTH = 36
TOKENS_WIDTH = 9
SHARE_WIDTH = SHARE_BAR_WIDTH + 7
DETAIL_MAX_CHARS = 20_000
"""Text shown for the highlighted part; the rest is elided (the table has the full count)."""
_EIGHTHS = " ▏▎▍▌▋▊▉"


class ContextScreen(ModalScreen[None]):
    """The next request, part by part."""

    CSS_PATH = "context_view.tcss"
    BINDINGS = [  # noqa: RUF012
        Binding("escape,q", "close", "Close", id="context.close"),
        *row_navigation_bindings("context"),
        Binding("shift+down,ctrl+down", "scroll_text(1)", "Scroll the text down", show=False, id="context.text_down"),
        Binding("shift+up,ctrl+up", "scroll_text(-1)", "Scroll the text up", show=False, id="context.text_up"),
    ]
    AUTO_FOCUS = None

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
            yield Static(_header_row(), id="context-header")
            yield RowList(self.part_row, id="context-parts")
            yield Static("", id="context-detail-title")
            with VerticalScroll(id="context-detail", can_focus=False):
                yield Static("", id="context-detail-text")
            yield Static("↑/↓ part  pgup/pgdn page  shift+↑/↓ scroll the text  esc close", id="context-help")

    def on_mount(self) -> None:
        parts = self._preview.parts
        self._largest = max((part.tokens for part in parts), default=0)
        self._numbers: list[str] = []
        number = 0
        for part in parts:
            is_message = part.kind in ("message", "summary")
            number += is_message
            self._numbers.append(str(number) if is_message else "")
        self.query_one("#context-parts", RowList).set_rows(len(parts), cursor=0 if parts else None)
        if parts:
            self._show_part(0)

    @property
    def selected_index(self) -> int | None:
        return self.query_one("#context-parts", RowList).cursor

    def action_move(self, delta: int) -> None:
        self.query_one("#context-parts", RowList).move_by(delta)

    def action_page(self, direction: int) -> None:
        self.query_one("#context-parts", RowList).page(direction)

    def action_scroll_text(self, delta: int) -> None:
        detail = self.query_one("#context-detail", VerticalScroll)
        detail.scroll_relative(y=delta * max(1, detail.size.height - 2), animate=False)

    def part_row(self, index: int, is_cursor: bool = False) -> Content:
        part = self._preview.parts[index]
        return Content.assemble(
            (self._numbers[index].rjust(NUMBER_WIDTH - 2).ljust(NUMBER_WIDTH), "" if is_cursor else "$foreground-muted"),
            (clip_line(part.name, PART_NAME_WIDTH).ljust(PART_NAME_WIDTH), "bold" if part.kind != "message" else ""),
            f"{part.tokens:,}".rjust(TOKENS_WIDTH),
            "  ",
            _share_cell(part.tokens, self._preview.total_tokens, self._largest, plain=is_cursor),
            "  ",
            (part.note, "" if is_cursor else "$text-warning"),
        )

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

    @on(RowList.Highlighted, "#context-parts")
    def _row_highlighted(self, event: RowList.Highlighted) -> None:
        self._show_part(event.index)

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


def _header_row() -> Content:
    return Content.assemble(
        ("#".rjust(NUMBER_WIDTH - 2).ljust(NUMBER_WIDTH), "bold"),
        ("part".ljust(PART_NAME_WIDTH), "bold"),
        ("tokens".rjust(TOKENS_WIDTH), "bold"),
        "  ",
        ("share".ljust(SHARE_WIDTH), "bold"),
        "  ",
        ("replaced / note", "bold"),
    )


def _share_cell(tokens: int, total: int, largest: int, *, plain: bool = False) -> Content:
    if not total or not largest:
        return Content(" " * SHARE_WIDTH)
    eighths = round(SHARE_BAR_WIDTH * 8 * tokens / largest)
    bar = "█" * (eighths // 8) + (_EIGHTHS[eighths % 8] if eighths % 8 else "")
    return Content.assemble(
        (bar.ljust(SHARE_BAR_WIDTH), "" if plain else "$accent"),
        (f" {100 * tokens / total:4.1f}%", "" if plain else "$foreground-muted"),
    )

