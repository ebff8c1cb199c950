"""/settings: the settings a user changes mid-session; returns the new values on close.

The screen edits a ``SettingsValues`` and hands back the new one (None when nothing changed).
The app applies it: the thinking level through ``AgentSession.set_thinking_level``, the rest with
``settings_changes`` → ``SettingsManager.set_global(path, value)``. A theme change is previewed
live while the screen is open.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields, replace
from typing import Any, Literal, Protocol

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Select, Static, Switch

from pi_tui.core.messages import THINKING_LEVELS

ContextStrategy = Literal["pi", "pipeline"]
TREE_FILTER_MODES = ("default", "no-tools", "user-only", "labeled-only", "all")
DOUBLE_ESCAPE_ACTIONS = ("tree", "fork", "none")
NOTIFICATION_KINDS = ("auto", "osc777", "osc9", "osc99", "bell", "off")

SETTING_PATHS = {
    "theme": "theme",
    "auto_compaction": "compaction.enabled",
    "context_strategy": "context.strategy",
    "skip_branch_summary_prompt": "branchSummary.skipPrompt",
    "hide_thinking": "hideThinkingBlock",
    "tree_filter": "treeFilterMode",
    "double_escape_action": "doubleEscapeAction",
    "show_images": "terminal.showImages",
    "terminal_progress": "terminal.showTerminalProgress",
    "notifications": "terminal.notifications",
    "session_titles": "sessionTitles.enabled",
}
"""Field → settings.json path. ``thinking_level`` is the session's, not a file setting."""


class SettingsReader(Protocol):
    """What ``SettingsValues.from_settings`` reads (``SettingsManager`` fits)."""

    def get(self, path: str, default: Any = None) -> Any: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class SettingsValues:
    """The values the screen edits."""

    thinking_level: str
    theme: str = "dark"
    auto_compaction: bool = True
    context_strategy: ContextStrategy = "pi"
    skip_branch_summary_prompt: bool = False
    hide_thinking: bool = False
    tree_filter: str = "default"
    double_escape_action: str = "tree"
    show_images: bool = True
    terminal_progress: bool = False
    notifications: str = "auto"
    session_titles: bool = False

    @classmethod
    def from_settings(cls, settings: SettingsReader, *, thinking_level: str) -> SettingsValues:
        strategy: ContextStrategy = "pipeline" if settings.get("context.strategy") == "pipeline" else "pi"
        return cls(
            thinking_level=thinking_level,
            theme=str(settings.get("theme", "dark") or "dark"),
            auto_compaction=bool(settings.get("compaction.enabled", True)),
            context_strategy=strategy,
            skip_branch_summary_prompt=bool(settings.get("branchSummary.skipPrompt", False)),
            hide_thinking=bool(settings.get("hideThinkingBlock", False)),
            tree_filter=str(settings.get("treeFilterMode", "default") or "default"),
            double_escape_action=str(settings.get("doubleEscapeAction", "tree") or "tree"),
            show_images=settings.get("terminal.showImages", True) is not False,
            terminal_progress=settings.get("terminal.showTerminalProgress", False) is True,
            notifications=str(settings.get("terminal.notifications", "auto") or "auto"),
            session_titles=settings.get("sessionTitles.enabled", False) is True,
        )


def settings_changes(old: SettingsValues, new: SettingsValues) -> dict[str, str | bool]:
    """The settings.json paths whose value differs (thinking level excluded)."""
    return {
        SETTING_PATHS[f.name]: getattr(new, f.name)
        for f in fields(SettingsValues)
        if f.name in SETTING_PATHS and getattr(old, f.name) != getattr(new, f.name)
    }


_ROWS: tuple[tuple[str, str, str], ...] = (
    ("thinking_level", "Thinking level", "how much the model reasons (shift+tab cycles)"),
    ("theme", "Theme", "colours of the whole app"),
    ("auto_compaction", "Auto-compaction", "summarize old context when the window fills"),
    ("context_strategy", "Context strategy", "pi: summary compaction · pipeline: artifacts, snip, micro"),
    ("skip_branch_summary_prompt", "Skip branch-summary prompt", "/tree moves without asking to summarize"),
    ("hide_thinking", "Hide thinking blocks", "show thinking as a collapsed line"),
    ("tree_filter", "Tree filter", "the filter /tree opens with"),
    ("double_escape_action", "Double Esc", "what Esc twice on an empty editor opens"),
    ("show_images", "Show images", "tool results' images as previews in their panels"),
    ("terminal_progress", "Terminal progress", "the tab's progress indicator (OSC 9;4) while the agent works"),
    ("notifications", "Notifications", "when a run ends or a question waits and the terminal is not focused"),
    ("session_titles", "Session titles", "a model names the session after the first answer (sessionTitles.model)"),
)


class SettingsScreen(ModalScreen[SettingsValues | None]):
    """Settings; Esc closes and returns the new values (None when unchanged)."""

    CSS_PATH = "settings.tcss"
    BINDINGS = [  # noqa: RUF012
        Binding("escape", "close", "Close", id="settings.close"),
        Binding("ctrl+z", "revert", "Revert", id="settings.revert"),
    ]

    def __init__(
        self,
        values: SettingsValues,
        *,
        themes: Sequence[str] = (),
        thinking_levels: Sequence[str] = THINKING_LEVELS,
    ) -> None:
        """Args:
        values: the current values.
        themes: theme names to offer (defaults to the app's registered themes).
        thinking_levels: the levels the current model supports.
        """
        super().__init__()
        self._original = values
        self._values = values
        self._themes = list(themes)
        self._thinking_levels = list(thinking_levels)

    @property
    def values(self) -> SettingsValues:
        return self._values

    def _choices(self, name: str) -> list[str]:
        themes = self._themes or sorted(self.app.available_themes)
        options = {
            "thinking_level": self._thinking_levels,
            "theme": themes,
            "context_strategy": ["pi", "pipeline"],
            "tree_filter": list(TREE_FILTER_MODES),
            "double_escape_action": list(DOUBLE_ESCAPE_ACTIONS),
            "notifications": list(NOTIFICATION_KINDS),
        }[name]
        current = str(getattr(self._values, name))
        return options if current in options else [current, *options]

    def compose(self) -> ComposeResult:
        yield Static("Settings", id="settings-title")
        with VerticalScroll(id="settings-rows"):
            for name, title, help_text in _ROWS:
                with Horizontal(classes="setting-row"):
                    with Vertical(classes="setting-text"):
                        yield Static(title, classes="setting-name")
                        yield Static(help_text, classes="setting-help")
                    value = getattr(self._values, name)
                    if isinstance(value, bool):
                        yield Switch(value=value, id=f"setting-{name}")
                    else:
                        choices = self._choices(name)
                        yield Select(
                            [(choice, choice) for choice in choices], value=str(value), allow_blank=False, id=f"setting-{name}"
                        )
        yield Static("tab/shift+tab move  enter/space change  ctrl+z revert  esc save & close", id="settings-help")

    @on(Select.Changed)
    def _select_changed(self, event: Select.Changed) -> None:
        name = (event.select.id or "").removeprefix("setting-")
        if name and isinstance(event.value, str):
            changed: dict[str, Any] = {name: event.value}
            self._values = replace(self._values, **changed)
            if name == "theme" and event.value in self.app.available_themes:
                self.app.theme = event.value

    @on(Switch.Changed)
    def _switch_changed(self, event: Switch.Changed) -> None:
        name = (event.switch.id or "").removeprefix("setting-")
        if name:
            changed: dict[str, Any] = {name: event.value}
            self._values = replace(self._values, **changed)

    def action_revert(self) -> None:
        self._values = self._original
        for name, _, _ in _ROWS:
            value = getattr(self._original, name)
            if isinstance(value, bool):
                self.query_one(f"#setting-{name}", Switch).value = value
            else:
                self.query_one(f"#setting-{name}", Select).value = str(value)

    def action_close(self) -> None:
        self.dismiss(None if self._values == self._original else self._values)
