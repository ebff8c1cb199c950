"""/model (Ctrl+L): choose a model from ``ModelRegistry.list_models()``, typing to filter."""

from __future__ import annotations

from collections.abc import Sequence

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from pi_tui.core.provider import ModelInfo
from pi_tui.modes.interactive.screens.row_list import (
    RowList,
    RowPickerActions,
    row_navigation_bindings,
)


def format_window(tokens: int) -> str:
    """``128k``, ``131k``, ``1M``, ``1.5M``."""
    if tokens >= 1_000_000:
        return f"{tokens / 1_000_000:.1f}".removesuffix(".0") + "M"
    if tokens >= 1000:
        return f"{round(tokens / 1000)}k"
    return str(tokens)


class ModelPickerScreen(RowPickerActions, ModalScreen[ModelInfo | None]):
    """Models with their context windows; Enter returns the chosen ``ModelInfo``."""

    CSS_PATH = "model_picker.tcss"
    BINDINGS = [  # noqa: RUF012
        *row_navigation_bindings("models"),
        Binding("escape", "close", "Close", id="models.cancel"),
    ]

    def __init__(self, models: Sequence[ModelInfo], *, current: ModelInfo | None = None, search: str = "") -> None:
        """Args:
        models: the choices, in display order (``ModelRegistry.list_models()``).
        current: the model in use (marked and highlighted first).
        search: initial filter text (``/model <search>``).
        """
        super().__init__()
        self._models = list(models)
        self._haystacks = [f"{model.ref} {model.name}".lower() for model in self._models]
        self._current = current
        self._initial_search = search
        self._shown: list[ModelInfo] = []
        self._id_width = 10

    @property
    def shown(self) -> list[ModelInfo]:
        return list(self._shown)

    def compose(self) -> ComposeResult:
        with Vertical(id="models-panel"):
            yield Static("", id="models-title")
            yield Input(value=self._initial_search, placeholder="type to filter", id="models-search")
            yield RowList(self.model_row, id="models-rows")
            yield Static("", id="models-empty")
            yield Static("↑/↓ move  enter choose  esc close", id="models-help")

    def on_mount(self) -> None:
        self.query_one("#models-search", Input).focus()
        self._render_rows(keep=self._current.ref if self._current else None)

    def _render_rows(self, *, keep: str | None = None) -> None:
        tokens = self.query_one("#models-search", Input).value.lower().split()
        self._shown = [
            model
            for model, haystack in zip(self._models, self._haystacks, strict=True)
            if all(token in haystack for token in tokens)
        ]
        self._id_width = min(48, max((len(m.ref) for m in self._shown), default=10))
        refs = [model.ref for model in self._shown]
        self._rows.set_rows(len(refs), cursor=refs.index(keep) if keep in refs else (0 if refs else None))
        empty = self.query_one("#models-empty", Static)
        empty.display = not self._shown
        empty.update("No model matches." if tokens else "No models available: set an API key or add models.json.")
        self.query_one("#models-title", Static).update(
            Content.assemble(
                ("Select model", "bold $text-primary"),
                (f"  {len(self._shown)} of {len(self._models)}", "$foreground-muted"),
            )
        )

    @property
    def _rows(self) -> RowList:
        return self.query_one("#models-rows", RowList)

    def model_row(self, index: int, is_cursor: bool = False) -> Content:
        model = self._shown[index]
        is_current = self._current is not None and model.ref == self._current.ref
        traits = [t for t, on_ in (("reasoning", model.reasoning), ("images", model.supports_images)) if on_]
        name = model.name if model.name and model.name != model.id else ""
        muted = "" if is_cursor else "$foreground-muted"
        return Content.assemble(
            ("✓ " if is_current else "  ", "" if is_cursor else "$text-success"),
            (model.ref.ljust(self._id_width), "bold" if is_current else ""),
            (f"  {format_window(model.context_window):>5} ctx", "" if is_cursor else "$text-accent"),
            (f"  {' · '.join(traits)}".ljust(22), muted),
            (name, muted),
        )

    @on(Input.Changed, "#models-search")
    def _search_changed(self) -> None:
        index = self._rows.cursor
        keep = self._shown[index].ref if index is not None and index < len(self._shown) else None
        self._render_rows(keep=keep)

    @on(Input.Submitted, "#models-search")
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._choose()

    @on(RowList.Selected, "#models-rows")
    def _clicked(self, event: RowList.Selected) -> None:
        event.stop()
        self._choose()


    def action_close(self) -> None:
        self.dismiss(None)
