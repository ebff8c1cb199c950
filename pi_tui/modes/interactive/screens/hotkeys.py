"""/hotkeys: the keys in effect, grouped by where they work; type to filter.

The app passes its own rows (``keymap_rows``: every action of the keymap with the user's
overrides applied, and the id to use in keybindings.json); ``screen_hotkey_rows`` adds the keys of
the full-screen views, read from their ``BINDINGS`` so the list cannot drift from what the screens
really bind.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import DataTable, Input, Static

from pi_tui.modes.interactive.keymap import ACTIONS_BY_ID, Keymap

_KEY_NAMES = {"escape": "esc", "pageup": "pgup", "pagedown": "pgdn", "L": "shift+l"}


@dataclass(frozen=True, slots=True, kw_only=True)
class HotkeyRow:
    """One action and the keys bound to it."""

    group: str
    keys: str
    description: str
    action_id: str = ""
    """The keybindings.json id; empty for the fixed keys of the full-screen views."""


def display_keys(keys: Iterable[str]) -> str:
    """``ctrl+left, alt+left`` in pi's spelling (``esc``, ``pgup``)."""
    return ", ".join(dict.fromkeys(_KEY_NAMES.get(key, key) for key in keys))


def keymap_rows(keymap: Keymap) -> list[HotkeyRow]:
    """One row per keymap action (unbound ones too), in the registry's order; the picker's and
    the tree's rebindable keys are grouped with their screen."""
    screens = {"picker": "/resume", "tree": "/tree"}

    def group(action_id: str) -> str:
        scope = ACTIONS_BY_ID[action_id].scope
        if scope in screens:
            return screens[scope]
        return "lists" if action_id.startswith("tui.select.") else "editor" if action_id.startswith("tui.") else "app"

    return [HotkeyRow(group=group(action_id), keys=keys, description=description, action_id=action_id)
            for keys, action_id, description in keymap.describe()]


def rows_from_bindings(group: str, bindings: Iterable[BindingType]) -> list[HotkeyRow]:
    """Rows for a screen's ``BINDINGS``: one per action, its keys joined."""
    by_action: dict[str, list[str]] = {}
    descriptions: dict[str, str] = {}
    for binding in bindings:
        if not isinstance(binding, Binding):
            continue
        by_action.setdefault(binding.action, []).extend(k.strip() for k in binding.key.split(","))
        descriptions.setdefault(binding.action, binding.description or binding.action)
    return [
        HotkeyRow(group=group, keys=display_keys(keys), description=descriptions[action])
        for action, keys in by_action.items()
    ]


def screen_hotkey_rows() -> list[HotkeyRow]:
    """The fixed keys of /tree, /resume, /model, /context and /mcp (their rebindable ones are keymap
    actions: ``keymap_rows``)."""
    from pi_tui.modes.interactive.screens.context_view import ContextScreen
    from pi_tui.modes.interactive.screens.mcp import McpScreen
    from pi_tui.modes.interactive.screens.model_picker import ModelPickerScreen
    from pi_tui.modes.interactive.screens.session_picker import SessionPickerScreen
    from pi_tui.modes.interactive.screens.tree import TreeScreen

    rows = rows_from_bindings("/tree", TreeScreen.BINDINGS)
    rows.append(HotkeyRow(group="/tree", keys="type", description="Search (space-separated words, all must match)"))
    rows += rows_from_bindings("/resume", SessionPickerScreen.BINDINGS)
    rows += rows_from_bindings("/model", ModelPickerScreen.BINDINGS)
    rows += rows_from_bindings("/context", ContextScreen.BINDINGS)
    rows += rows_from_bindings("/mcp", McpScreen.BINDINGS)
    return rows


class HotkeysScreen(ModalScreen[None]):
    """A table of every key; typing filters it."""

    CSS_PATH = "hotkeys.tcss"
    BINDINGS = [  # noqa: RUF012
        Binding("escape", "close", "Close", id="hotkeys.close"),
    ]

    def __init__(self, rows: Sequence[HotkeyRow], *, include_screens: bool = True) -> None:
        super().__init__()
        self._rows = [*rows, *(screen_hotkey_rows() if include_screens else [])]

    @property
    def rows(self) -> list[HotkeyRow]:
        return list(self._rows)

    def compose(self) -> ComposeResult:
        with Vertical(id="hotkeys-panel"):
            yield Static(Content.styled("Keys", "bold $text-primary"), id="hotkeys-title")
            yield Input(placeholder="type to filter", id="hotkeys-search")
            yield DataTable(id="hotkeys-table", cursor_type="row", zebra_stripes=True)
            yield Static("keys are rebindable in <agentDir>/keybindings.json  ·  esc close", id="hotkeys-help")

    def on_mount(self) -> None:
        table = self.query_one("#hotkeys-table", DataTable)
        table.add_column("where", key="group", width=10)
        table.add_column("keys", key="keys", width=28)
        table.add_column("action", key="description")
        table.add_column("keybindings.json id", key="id")
        self._fill("")
        self.query_one("#hotkeys-search", Input).focus()

    def _fill(self, query: str) -> None:
        tokens = query.lower().split()
        table = self.query_one("#hotkeys-table", DataTable)
        table.clear()
        for row in self._rows:
            haystack = f"{row.group} {row.keys} {row.description} {row.action_id}".lower()
            if all(token in haystack for token in tokens):
                table.add_row(row.group, row.keys, row.description, row.action_id)

    @on(Input.Changed, "#hotkeys-search")
    def _filter(self, event: Input.Changed) -> None:
        self._fill(event.value)

    def action_close(self) -> None:
        self.dismiss(None)
