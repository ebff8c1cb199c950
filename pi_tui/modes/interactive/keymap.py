"""Every key of the interactive mode, in one registry (pi-behaviour.md §8.2, §13.9).

Widgets never compare ``event.key`` with a literal: they ask the keymap which action a key means.
``<agentDir>/keybindings.json`` overrides the defaults with ``{action: key | [keys]}``; pi 0.73.1's
namespaced ids (``app.interrupt``) and the older short names (``interrupt``) are both accepted, so
one file configures pi and pi-tui. A bad file is reported (a diagnostic line), never fatal.

Keys are written in pi's spelling (``ctrl+c``, ``shift+tab``, ``alt+enter``, ``esc``) and
translated to Textual's names here.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from textual.binding import Binding


@dataclass(frozen=True, slots=True)
class KeyAction:
    """One rebindable action: its id, the Textual action it runs, and a description for /hotkeys."""

    id: str
    description: str
    defaults: tuple[str, ...]
    textual_action: str = ""
    """The ``action_*`` name on the main screen; empty for editor-internal actions."""
    aliases: tuple[str, ...] = ()


ACTIONS: tuple[KeyAction, ...] = (
    KeyAction("app.interrupt", "Abort the run (queued messages return to the editor); twice: /tree",
              ("escape",), "interrupt", ("interrupt",)),
    KeyAction("app.clear", "Clear the editor; twice quits", ("ctrl+c",), "clear", ("clear",)),
    KeyAction("app.exit", "Quit when the editor is empty", ("ctrl+d",), "exit_if_empty", ("exit",)),
    KeyAction("app.thinking.cycle", "Cycle the thinking level", ("shift+tab",), "cycle_thinking",
              ("cycleThinkingLevel",)),
    KeyAction("app.model.select", "Open the model picker", ("ctrl+l",), "select_model", ("selectModel",)),
    KeyAction("app.tools.expand", "Expand or collapse tool output and summaries", ("ctrl+o",),
              "toggle_tools", ("expandTools",)),
    KeyAction("app.thinking.toggle", "Show or hide thinking blocks", ("ctrl+t",), "toggle_thinking",
              ("toggleThinking",)),
    KeyAction("app.message.followUp", "Queue a follow-up while the agent runs (else submit)",
              ("alt+enter",), "", ("followUp",)),
    KeyAction("app.message.dequeue", "Pull queued messages back into the editor", ("alt+up",),
              "dequeue", ("dequeue",)),
    KeyAction("app.events.toggle", "Show or hide the context events pane", ("f2",), "toggle_events"),
    KeyAction("app.session.tree", "Open the session tree", (), "open_tree", ("tree",)),
    KeyAction("app.session.resume", "Open the session picker", (), "open_resume", ("resume",)),
    KeyAction("app.session.new", "Start a new session", (), "new_session", ("newSession",)),
    KeyAction("app.hotkeys", "List the keys", ("f1",), "open_hotkeys"),
    KeyAction("tui.input.submit", "Send the message (steer while the agent runs)", ("enter",), "",
              ("submit",)),
    KeyAction("tui.input.newLine", "Insert a new line", ("shift+enter", "ctrl+j"), "", ("newLine",)),
    KeyAction("tui.input.tab", "Complete a command or a file path", ("tab",), "", ("tab",)),
    KeyAction("tui.editor.historyPrevious", "Previous message from history (on the first line)",
              ("up",), ""),
    KeyAction("tui.editor.historyNext", "Next message from history (on the last line)", ("down",), ""),
    KeyAction("tui.select.up", "Move up in a list", ("up",), ""),
    KeyAction("tui.select.down", "Move down in a list", ("down",), ""),
    KeyAction("tui.select.confirm", "Choose the selected item", ("enter",), ""),
    KeyAction("tui.select.cancel", "Close the list", ("escape",), ""),
)

_KEY_SPELLING = {"esc": "escape", "return": "enter", "ctrl+-": "ctrl+minus", "del": "delete"}


def to_textual_key(key: str) -> str:
    """pi's key spelling → Textual's (``esc`` → ``escape``, ``shift+ctrl+p`` → ``ctrl+shift+p``)."""
    key = key.strip().lower()
    key = _KEY_SPELLING.get(key, key)
    parts = key.split("+")
    if len(parts) > 1:
        order = {"ctrl": 0, "alt": 1, "shift": 2, "meta": 3, "super": 4}
        modifiers = sorted(parts[:-1], key=lambda m: order.get(m, 9))
        key = "+".join([*modifiers, parts[-1]])
    return key


@dataclass(slots=True)
class Keymap:
    """The effective bindings: defaults merged with the user's overrides."""

    keys: dict[str, tuple[str, ...]] = field(default_factory=dict)
    diagnostics: list[str] = field(default_factory=list)

    @classmethod
    def defaults(cls) -> Keymap:
        return cls({a.id: tuple(to_textual_key(k) for k in a.defaults) for a in ACTIONS})

    @classmethod
    def load(cls, agent_dir: Path | None) -> Keymap:
        """Defaults plus ``<agent_dir>/keybindings.json`` when it exists."""
        keymap = cls.defaults()
        if agent_dir is None:
            return keymap
        path = agent_dir / "keybindings.json"
        if not path.is_file():
            return keymap
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as err:
            keymap.diagnostics.append(f"{path}: not valid JSON ({err}); using the default keys")
            return keymap
        if not isinstance(data, dict):
            keymap.diagnostics.append(f"{path}: expected an object {{action: key}}; using the default keys")
            return keymap
        keymap.apply(data, source=str(path))
        return keymap

    def apply(self, overrides: dict[str, object], *, source: str = "keybindings") -> None:
        by_name = {a.id: a.id for a in ACTIONS} | {alias: a.id for a in ACTIONS for alias in a.aliases}
        for name, value in overrides.items():
            action_id = by_name.get(name)
            if action_id is None:
                continue  # pi's editor-only actions we do not implement are not errors
            keys = [value] if isinstance(value, str) else value
            if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
                self.diagnostics.append(f"{source}: {name} must be a key or a list of keys")
                continue
            self.keys[action_id] = tuple(to_textual_key(k) for k in keys)

    def keys_for(self, action_id: str) -> tuple[str, ...]:
        return self.keys.get(action_id, ())

    def matches(self, action_id: str, key: str) -> bool:
        return key in self.keys.get(action_id, ())

    def screen_bindings(self) -> list[Binding]:
        """Textual bindings for every action that runs a screen action.

        They are priority bindings so the editor (a TextArea) cannot swallow them; modal screens
        are separate screens and keep their own keys.
        """
        bindings: list[Binding] = []
        for action in ACTIONS:
            if not action.textual_action:
                continue
            for key in self.keys.get(action.id, ()):
                bindings.append(
                    Binding(key, action.textual_action, action.description, show=False, priority=True, id=action.id)
                )
        return bindings

    def describe(self) -> list[tuple[str, str, str]]:
        """(keys, action id, description) rows for /hotkeys."""
        return [(", ".join(self.keys.get(a.id, ())) or "(unbound)", a.id, a.description) for a in ACTIONS]
