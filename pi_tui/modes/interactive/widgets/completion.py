"""The completion list shown above the editor (commands, templates, skills, files)."""

from __future__ import annotations

from dataclasses import dataclass

from textual.content import Content
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from pi_tui.modes.interactive.widgets.one_line import cut, fit_parts


@dataclass(frozen=True, slots=True)
class CompletionItem:
    label: str
    replacement: str
    description: str = ""
    hint: str = ""
    source: str = ""


HINT_CELLS = 28
"""An argument hint longer than this is cut even when there is room (the description matters more)."""
FLOORS = (12, 24)
"""Cells the hint and description keep before an earlier part is cut (the label keeps its
column, so the rows stay aligned)."""


def item_prompt(item: CompletionItem, label_width: int, width: int = 10_000) -> Content:
    """One line of at most ``width`` cells: the label, the hint, the description, then the
    source tag, which is never cut (``one_line.fit_parts``)."""
    parts = [(item.label.ljust(label_width), "bold")]
    if item.hint:
        parts.append((" " + cut(item.hint, HINT_CELLS), "$accent"))
    if item.description:
        parts.append(("  " + item.description, "$text-muted"))
    tag = (f"  [{item.source}]", "$text-muted") if item.source and item.source != "builtin" else None
    return fit_parts(parts, width, tag=tag, floors=(label_width, *FLOORS)[: len(parts)])


class CompletionMenu(OptionList):
    """Never focused: the editor keeps focus and drives the menu with ``move``/``selected``.

    Each row is fitted to the menu's width when shown and again on every resize, so a long
    description is cut with an ellipsis instead of wrapping the row onto a second line."""

    DEFAULT_CSS = "CompletionMenu { height: auto; max-height: 10; display: none; }"
    can_focus = False

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.items: list[CompletionItem] = []
        self._label_width = 0
        self._fitted_width = 0

    def show_items(self, items: list[CompletionItem]) -> None:
        self.items = items
        self.clear_options()
        if not items:
            self.display = False
            return
        self._label_width = min(28, max(len(i.label) for i in items))
        self._fitted_width = self._row_width()
        self.add_options([Option(item_prompt(i, self._label_width, self._fitted_width)) for i in items])
        self.highlighted = 0
        self.display = True
        self.call_after_refresh(self._refit)  # the real width is known once laid out

    def _row_width(self) -> int:
        """The cells a row may use: the content width once laid out, else the screen's width
        less this menu's margins, border and padding."""
        inner = self.scrollable_content_region.width
        if inner > 0:
            return inner
        chrome = self.styles.gutter.width + self.styles.margin.width
        if len(self.items) > (self.styles.max_height.value if self.styles.max_height else 10):
            chrome += self.styles.scrollbar_size_vertical
        return max(10, self.app.size.width - chrome)

    def _refit(self) -> None:
        width = self._row_width()
        if not self.items or width == self._fitted_width:
            return
        self._fitted_width = width
        for index, item in enumerate(self.items):
            self.replace_option_prompt_at_index(index, item_prompt(item, self._label_width, width))

    def on_resize(self) -> None:
        self._refit()

    def hide(self) -> None:
        self.display = False

    def move(self, step: int) -> None:
        if not self.items:
            return
        current = self.highlighted or 0
        self.highlighted = (current + step) % len(self.items)

    def selected(self) -> CompletionItem | None:
        if not self.items or self.highlighted is None:
            return None
        return self.items[self.highlighted]
