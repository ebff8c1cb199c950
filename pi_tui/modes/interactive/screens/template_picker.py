"""/template: the prompt templates with their argument hints, descriptions and sources, typing to
filter; Enter returns the chosen ``PromptTemplate`` (the caller puts ``/NAME `` in the editor)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from pi_tui.modes.interactive.screens.row_list import (
    RowList,
    RowPickerActions,
    row_navigation_bindings,
)
from pi_tui.modes.interactive.widgets.completion import FLOORS
from pi_tui.modes.interactive.widgets.one_line import cut, fit_parts
from pi_tui.resources.template_command import source_label

HINT_CELLS = 30


class TemplatePickerScreen(RowPickerActions, ModalScreen[Any]):
    CSS_PATH = "template_picker.tcss"
    BINDINGS = [  # noqa: RUF012
        *row_navigation_bindings("templates"),
        Binding("escape", "close", "Close", id="templates.cancel"),
    ]

    def __init__(self, templates: Sequence[Any]) -> None:
        """Args:
        templates: ``PromptTemplate``s in load order (the session's resources).
        """
        super().__init__()
        self._templates = list(templates)
        self._haystacks = [f"{t.name} {t.description} {source_label(t)}".lower() for t in self._templates]
        self._shown: list[Any] = []
        self._name_width = 10

    @property
    def shown(self) -> list[Any]:
        return list(self._shown)

    def compose(self) -> ComposeResult:
        with Vertical(id="templates-panel"):
            yield Static("", id="templates-title")
            yield Input(placeholder="type to filter", id="templates-search")
            yield RowList(self.template_row, id="templates-rows")
            yield Static("No template matches.", id="templates-empty")
            yield Static("↑/↓ move  enter put /name in the editor  esc close", id="templates-help")

    def on_mount(self) -> None:
        self.query_one("#templates-search", Input).focus()
        self._render_rows()

    @property
    def _rows(self) -> RowList:
        return self.query_one("#templates-rows", RowList)

    def _render_rows(self) -> None:
        tokens = self.query_one("#templates-search", Input).value.lower().split()
        self._shown = [t for t, haystack in zip(self._templates, self._haystacks, strict=True)
                       if all(token in haystack for token in tokens)]
        self._name_width = min(24, max((len(t.name) + 1 for t in self._shown), default=10))
        self._rows.set_rows(len(self._shown), cursor=0 if self._shown else None)
        self.query_one("#templates-empty", Static).display = not self._shown
        self.query_one("#templates-title", Static).update(Content.assemble(
            ("Prompt templates", "bold $text-primary"),
            (f"  {len(self._shown)} of {len(self._templates)}", "$foreground-muted"),
        ))

    def template_row(self, index: int, is_cursor: bool = False) -> Content:
        """``/name  <hint>  description  [source]`` in one line: the description is cut first,
        down to a readable part (``FLOORS``, as in the completion menu), then the hint; the
        source is always shown."""
        template = self._shown[index]
        muted = "" if is_cursor else "$foreground-muted"
        hint = cut(template.argument_hint or "", HINT_CELLS)
        return fit_parts(
            [(f"/{template.name}".ljust(self._name_width), "bold"),
             (f"  {hint}" if hint else "", "" if is_cursor else "$text-accent"),
             (f"  {template.description}", muted)],
            max(10, self._rows.scrollable_content_region.width),
            tag=(f"  [{source_label(template)}]", muted),
            floors=(self._name_width, *FLOORS),
        )

    @on(Input.Changed, "#templates-search")
    def _search_changed(self) -> None:
        self._render_rows()

    @on(Input.Submitted, "#templates-search")
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._choose()

    @on(RowList.Selected, "#templates-rows")
    def _clicked(self, event: RowList.Selected) -> None:
        event.stop()
        self._choose()

    def action_close(self) -> None:
        self.dismiss(None)
