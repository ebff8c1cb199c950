"""A virtual list of one-line rows with a cursor, for the /tree navigator.

``OptionList`` measures every option when it is filled, which takes seconds for a session of
10,000 entries. Here each row is exactly one line, so the list only needs the row count;
``render_row(index, is_cursor)`` is called for the lines on screen, and their strips are cached until the
rows or the width change.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from textual.binding import Binding
from textual.content import Content
from textual.events import Click, Resize
from textual.geometry import Region, Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.visual import visualize


def row_navigation_bindings(prefix: str, *, page_keys: tuple[str, str] = ("pageup", "pagedown")) -> list[Binding]:
    """↑/↓ and page keys for a screen whose ``action_move``/``action_page`` drive a ``RowList``."""
    return [
        Binding("up", "move(-1)", "Up", show=False, id=f"{prefix}.up"),
        Binding("down", "move(1)", "Down", show=False, id=f"{prefix}.down"),
        Binding(page_keys[0], "page(-1)", "Page up", show=False, id=f"{prefix}.page_up"),
        Binding(page_keys[1], "page(1)", "Page down", show=False, id=f"{prefix}.page_down"),
    ]


class RowList(ScrollView, can_focus=False):
    """One-line rows drawn on demand; the owner moves the cursor (keys live on the screen)."""

    COMPONENT_CLASSES = {"row-list--row", "row-list--cursor"}  # noqa: RUF012
    DEFAULT_CSS = """
    RowList {
        background: $background;
        text-wrap: nowrap;
        text-overflow: ellipsis;

        & > .row-list--cursor {
            background: $block-cursor-background;
            color: $block-cursor-foreground;
            text-style: $block-cursor-text-style;
        }
    }
    """

    @dataclass
    class Highlighted(Message):
        """The cursor moved to ``index``."""

        row_list: RowList
        index: int

        @property
        def control(self) -> RowList:
            return self.row_list

    @dataclass
    class Selected(Message):
        """The row at ``index`` was clicked while highlighted."""

        row_list: RowList
        index: int

        @property
        def control(self) -> RowList:
            return self.row_list

    def __init__(self, render_row: Callable[[int, bool], Content], *, id: str | None = None) -> None:
        """Args:
        render_row: ``(index, is_cursor) -> Content``; the cursor row should drop colours that
            would fight the cursor's background.
        """
        super().__init__(id=id)
        self._render_row = render_row
        self._count = 0
        self._cursor: int | None = None
        self._strips: dict[tuple[int, bool], Strip] = {}

    @property
    def row_count(self) -> int:
        return self._count

    @property
    def cursor(self) -> int | None:
        return self._cursor

    @property
    def page_size(self) -> int:
        return max(1, self.scrollable_content_region.height - 1)

    def set_rows(self, count: int, *, cursor: int | None) -> None:
        """Replace the rows (``render_row`` now answers for ``0..count-1``) and place the cursor."""
        self._count = count
        self._strips.clear()
        self.virtual_size = Size(self.scrollable_content_region.width, count)
        self._cursor = None
        self.move_to(cursor)
        self.refresh()

    def move_to(self, index: int | None) -> None:
        if index is None or self._count == 0:
            self._cursor = None
            return
        index = max(0, min(self._count - 1, index))
        previous = self._cursor
        self._cursor = index
        self.call_after_refresh(self._scroll_to_cursor)
        self._scroll_to_cursor()
        if previous != index:
            self.refresh()
            self.post_message(self.Highlighted(self, index))

    def page(self, direction: int) -> None:
        self.move_by(direction * self.page_size)

    def move_by(self, delta: int) -> None:
        self.move_to((self._cursor if self._cursor is not None else -1) + delta if self._count else None)

    def _scroll_to_cursor(self) -> None:
        if self._cursor is not None:
            self.scroll_to_region(Region(0, self._cursor, 1, 1), animate=False, force=True, x_axis=False)

    def _on_resize(self, event: Resize) -> None:
        self._strips.clear()
        self.virtual_size = Size(self.scrollable_content_region.width, self._count)
        self._scroll_to_cursor()

    def on_click(self, event: Click) -> None:
        index = self.scroll_offset.y + event.y
        if 0 <= index < self._count:
            if index == self._cursor:
                self.post_message(self.Selected(self, index))
            else:
                self.move_to(index)

    def render_line(self, y: int) -> Strip:
        index = self.scroll_offset.y + y
        width = self.scrollable_content_region.width
        if not 0 <= index < self._count:
            return Strip.blank(width, self.get_visual_style("row-list--row").rich_style)
        is_cursor = index == self._cursor
        key = (index, is_cursor)
        strip = self._strips.get(key)
        if strip is None or strip.cell_length != width:
            if is_cursor:
                style = self.get_visual_style("row-list--row", "row-list--cursor")
            else:
                style = self.get_visual_style("row-list--row")
            visual = visualize(self, self._render_row(index, is_cursor))
            strips = visual.to_strips(self, visual, width, 1, style)
            strip = (strips[0] if strips else Strip.blank(width)).extend_cell_length(width, style.rich_style)
            strip = strip.crop(0, width)
            if len(self._strips) > 4096:
                self._strips.clear()
            self._strips[key] = strip
        return strip


class RowPickerActions:
    """What a screen that picks one of ``_shown`` through a ``RowList`` (``_rows``) shares: choose
    the row under the cursor (dismissing with it), move, page. Mixed into the screen class."""

    _shown: list[Any]

    @property
    def _rows(self) -> RowList:
        raise NotImplementedError  # each screen finds its list by its own id

    def _choose(self) -> None:
        index = self._rows.cursor
        if index is not None and index < len(self._shown):
            self.dismiss(self._shown[index])  # type: ignore[attr-defined]

    def action_move(self, delta: int) -> None:
        self._rows.move_by(delta)

    def action_page(self, direction: int) -> None:
        self._rows.page(direction)
