"""The completion list shown above the editor (commands, templates, skills, files)."""

from __future__ import annotations

from dataclasses import dataclass

from textual.content import Content
from textual.widgets import OptionList
from textual.widgets.option_list import Option


@dataclass(frozen=True, slots=True)
class CompletionItem:
    label: str
    replacement: str
    description: str = ""
    hint: str = ""
    source: str = ""


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def item_prompt(item: CompletionItem, label_width: int) -> Content:
    """One line per item: long hints and descriptions are cut rather than wrapped."""
    text = Content.styled(item.label.ljust(label_width), "bold")
    if item.hint:
        text = text.append_text(" " + _cut(item.hint, 28), "$accent")
    if item.description:
        text = text.append_text("  " + _cut(item.description, 64), "$text-muted")
    if item.source and item.source != "builtin":
        text = text.append_text(f"  [{item.source}]", "$text-muted")
    return text


class CompletionMenu(OptionList):
    """Never focused: the editor keeps focus and drives the menu with ``move``/``selected``."""

    DEFAULT_CSS = "CompletionMenu { height: auto; max-height: 10; display: none; }"
    can_focus = False

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.items: list[CompletionItem] = []

    def show_items(self, items: list[CompletionItem]) -> None:
        self.items = items
        self.clear_options()
        if not items:
            self.display = False
            return
        width = min(28, max(len(i.label) for i in items))
        self.add_options([Option(item_prompt(i, width)) for i in items])
        self.highlighted = 0
        self.display = True

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
