"""Every key of the interactive mode, in one registry (pi-behaviour.md §8.2, §13.9).

Widgets never compare ``event.key`` with a literal: they ask the keymap which action a key means,
or install the bindings it generates. ``<agentDir>/keybindings.json`` overrides the defaults with
``{action: key | [keys]}``; pi 0.73.1's namespaced ids (``app.interrupt``) and the older short
names (``interrupt``) are both accepted, so one file configures pi and pi-tui. An override
replaces the action's default keys (``[]`` unbinds it). A bad file or entry is reported (a
diagnostic line naming the file and the entry), never fatal.

Keys are written in pi's spelling (``ctrl+c``, ``shift+ctrl+p``, ``ctrl+]``, ``esc``) and
translated to Textual's key names here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal, NamedTuple

from textual.binding import Binding

Scope = Literal["app", "editor", "input", "picker", "tree"]
"""Where an action is handled: ``app`` a priority binding of the chat screen; ``editor`` a binding
of the prompt editor (so the editor's own keys are exactly these); ``input`` read by the editor's
key handler and the lists (submit, new line, completion menu); ``picker`` / ``tree`` a binding of
the /resume picker or the /tree navigator (``screen_bindings_for``)."""


class KeyAction(NamedTuple):
    """One rebindable action: its id, what runs it, and a description for /hotkeys. (A
    NamedTuple, not a dataclass: building a dataclass costs ~2 ms of the first frame.)"""

    id: str
    description: str
    defaults: tuple[str, ...]
    handler: str = ""
    """The ``action_*`` name on the chat screen (scope ``app``) or the editor (scope ``editor``)."""
    scope: Scope = "app"
    aliases: tuple[str, ...] = ()


def _app(id_: str, description: str, defaults: tuple[str, ...], handler: str, *aliases: str) -> KeyAction:
    return KeyAction(id_, description, defaults, handler, "app", aliases)


def _edit(name: str, description: str, defaults: tuple[str, ...], handler: str) -> KeyAction:
    return KeyAction(f"tui.editor.{name}", description, defaults, handler, "editor", (name,))


def _in(scope: Scope, id_: str, description: str, defaults: tuple[str, ...], handler: str,
        *aliases: str) -> KeyAction:
    return KeyAction(id_, description, defaults, handler, scope, aliases)


def _input(id_: str, description: str, defaults: tuple[str, ...], *aliases: str) -> KeyAction:
    return KeyAction(id_, description, defaults, "", "input", aliases)


ACTIONS: tuple[KeyAction, ...] = (
    _app("app.interrupt", "Abort the run (queued messages return to the editor); twice: /tree",
         ("escape",), "interrupt", "interrupt"),
    # Before app.clear: with a selection ctrl+c copies it (pi's tui.input.copy), else it clears.
    _app("tui.input.copy", "Copy the editor's selection to the clipboard (no selection: app.clear)",
         ("ctrl+c",), "copy_selection", "copy"),
    _app("app.clear", "Clear the editor; twice quits", ("ctrl+c",), "clear", "clear"),
    _app("app.exit", "Quit when the editor is empty", ("ctrl+d",), "exit_if_empty", "exit"),
    _app("app.suspend", "Suspend pi-tui to the background (fg resumes it)", ("ctrl+z",), "suspend",
         "suspend"),
    _app("app.thinking.cycle", "Cycle the thinking level", ("shift+tab",), "cycle_thinking",
         "cycleThinkingLevel"),
    # Shift+Tab stays pi's thinking-level key (Claude Code cycles modes there): pi users keep their
    # habit; the permission mode has its own key, rebindable in keybindings.json.
    _app("app.permissions.cycle", "Cycle the permission mode (default, acceptEdits, auto, plan)", ("alt+m",),
         "cycle_permission_mode", "cyclePermissionMode"),
    _app("app.model.cycleForward", "Next model (enabledModels if set, else models with keys)",
         ("ctrl+p",), "cycle_model_forward", "cycleModelForward"),
    _app("app.model.cycleBackward", "Previous model", ("shift+ctrl+p",), "cycle_model_backward",
         "cycleModelBackward"),
    _app("app.model.select", "Open the model picker", ("ctrl+l",), "select_model", "selectModel"),
    _app("app.tools.expand", "Expand or collapse tool output and summaries", ("ctrl+o",),
         "toggle_tools", "expandTools"),
    _app("app.thinking.toggle", "Show or hide thinking blocks", ("ctrl+t",), "toggle_thinking",
         "toggleThinking"),
    _app("app.editor.external", "Edit the message in $VISUAL / $EDITOR", ("ctrl+g",),
         "external_editor", "externalEditor"),
    _app("app.clipboard.pasteImage", "Paste an image from the clipboard (sent with the message)", ("ctrl+v",),
         "paste_image", "pasteImage"),
    # Alt+Enter is read by the editor (it submits), so it is an input action with an app id.
    _input("app.message.followUp", "Queue a follow-up while the agent runs (else submit)",
           ("alt+enter",), "followUp"),
    _app("app.message.dequeue", "Pull queued messages back into the editor", ("alt+up",),
         "dequeue", "dequeue"),
    _app("app.session.new", "Start a new session", (), "new_session", "newSession"),
    _app("app.session.tree", "Open the session tree", (), "open_tree", "tree"),
    _app("app.session.fork", "Fork from an earlier message (/fork)", (), "fork", "fork"),
    _app("app.session.resume", "Open the session picker", (), "open_resume", "resume"),
    _app("app.events.toggle", "Show or hide the context events pane", ("f2",), "toggle_events"),
    _app("app.hotkeys", "List the keys", ("f1",), "open_hotkeys"),
    _edit("cursorUp", "Cursor up (on the first line: previous message from history)", ("up",),
          "cursor_up_or_history"),
    _edit("cursorDown", "Cursor down (on the last line: next message from history)", ("down",),
          "cursor_down_or_history"),
    _edit("historyPrevious", "Previous message from history", (), "history_previous"),
    _edit("historyNext", "Next message from history", (), "history_next"),
    _edit("cursorLeft", "Cursor left", ("left", "ctrl+b"), "cursor_left"),
    _edit("cursorRight", "Cursor right", ("right", "ctrl+f"), "cursor_right"),
    _edit("cursorWordLeft", "Cursor one word left", ("alt+left", "ctrl+left", "alt+b"), "cursor_word_left"),
    _edit("cursorWordRight", "Cursor one word right", ("alt+right", "ctrl+right", "alt+f"),
          "cursor_word_right"),
    _edit("cursorLineStart", "Cursor to line start", ("home", "ctrl+a"), "cursor_line_start"),
    _edit("cursorLineEnd", "Cursor to line end", ("end", "ctrl+e"), "cursor_line_end"),
    _edit("jumpForward", "Jump to the next occurrence of the next typed character", ("ctrl+]",),
          "jump_forward"),
    _edit("jumpBackward", "Jump to the previous occurrence of the next typed character",
          ("ctrl+alt+]",), "jump_backward"),
    _edit("pageUp", "Cursor one page up", ("pageUp",), "cursor_page_up"),
    _edit("pageDown", "Cursor one page down", ("pageDown",), "cursor_page_down"),
    _edit("deleteCharBackward", "Delete the character before the cursor", ("backspace",), "delete_left"),
    _edit("deleteCharForward", "Delete the character under the cursor (ctrl+d: when not empty)",
          ("delete", "ctrl+d"), "delete_right"),
    _edit("deleteWordBackward", "Delete the word before the cursor (to the kill ring)",
          ("ctrl+w", "alt+backspace"), "kill_word_left"),
    _edit("deleteWordForward", "Delete the word after the cursor (to the kill ring)",
          ("alt+d", "alt+delete"), "kill_word_right"),
    _edit("deleteToLineStart", "Delete to line start (to the kill ring)", ("ctrl+u",), "kill_to_line_start"),
    _edit("deleteToLineEnd", "Delete to line end (to the kill ring)", ("ctrl+k",), "kill_to_line_end"),
    _edit("yank", "Paste the last deleted text (kill ring)", ("ctrl+y",), "yank"),
    _edit("yankPop", "After a yank: replace it with the older kill ring entry", ("alt+y",), "yank_pop"),
    _edit("undo", "Undo", ("ctrl+-",), "undo"),
    # Not in pi (its editor has no selection); TextArea's shift+motion selection, kept rebindable.
    _edit("selectLeft", "Extend the selection left (pi-tui)", ("shift+left",), "cursor_left(True)"),
    _edit("selectRight", "Extend the selection right (pi-tui)", ("shift+right",), "cursor_right(True)"),
    _edit("selectUp", "Extend the selection up (pi-tui)", ("shift+up",), "cursor_up(True)"),
    _edit("selectDown", "Extend the selection down (pi-tui)", ("shift+down",), "cursor_down(True)"),
    _edit("selectWordLeft", "Extend the selection one word left (pi-tui)", ("ctrl+shift+left",),
          "cursor_word_left(True)"),
    _edit("selectWordRight", "Extend the selection one word right (pi-tui)", ("ctrl+shift+right",),
          "cursor_word_right(True)"),
    _edit("selectLineStart", "Extend the selection to line start (pi-tui)", ("shift+home",),
          "cursor_line_start(True)"),
    _edit("selectLineEnd", "Extend the selection to line end (pi-tui)", ("shift+end",),
          "cursor_line_end(True)"),
    _input("tui.input.submit", "Send the message (steer while the agent runs)", ("enter",), "submit"),
    _input("tui.input.newLine", "Insert a new line", ("shift+enter", "ctrl+j"), "newLine"),
    _input("tui.input.tab", "Complete a command or a file path", ("tab",), "tab"),
    _input("tui.select.up", "Move up in a list", ("up",), "selectUp"),
    _input("tui.select.down", "Move down in a list", ("down",), "selectDown"),
    _input("tui.select.pageUp", "Move a page up in a list", ("pageUp",), "selectPageUp"),
    _input("tui.select.pageDown", "Move a page down in a list", ("pageDown",), "selectPageDown"),
    _input("tui.select.confirm", "Choose the selected item", ("enter",), "selectConfirm"),
    _input("tui.select.cancel", "Close the list", ("escape",), "selectCancel"),
    _in("picker", "app.session.toggleSort", "Cycle the sort: threaded, recent, relevance", ("ctrl+s",),
        "cycle_sort", "toggleSessionSort"),
    _in("picker", "app.session.toggleNamedFilter", "Show named sessions only, or all", ("ctrl+n",),
        "toggle_named", "toggleSessionNamedFilter"),
    _in("picker", "app.session.togglePath", "Show or hide the session files' paths", ("ctrl+p",),
        "toggle_path", "toggleSessionPath"),
    _in("picker", "app.session.rename", "Rename the highlighted session", ("ctrl+r",), "rename",
        "renameSession"),
    _in("picker", "app.session.delete", "Delete the highlighted session (asks first; to the trash)",
        ("ctrl+d",), "delete", "deleteSession"),
    _in("picker", "app.session.deleteNoninvasive", "Delete the highlighted session when the search is empty "
        "(else deletes a word of it)", ("ctrl+backspace",), "delete_noninvasive", "deleteSessionNoninvasive"),
    _in("tree", "app.tree.foldOrUp", "Fold the branch, or jump to the previous segment start",
        ("ctrl+left", "alt+left"), "fold_or_up", "treeFoldOrUp"),
    _in("tree", "app.tree.unfoldOrDown", "Unfold the branch, or jump to the next segment start or the branch end",
        ("ctrl+right", "alt+right"), "unfold_or_down", "treeUnfoldOrDown"),
    _in("tree", "app.tree.editLabel", "Set or clear the label of the selected entry", ("shift+l",), "edit_label",
        "treeEditLabel"),
    _in("tree", "app.tree.filter.default", "Filter: the default view", ("ctrl+d",), "set_filter('default')"),
    _in("tree", "app.tree.filter.noTools", "Filter: hide tool results (again: default)", ("ctrl+t",),
        "toggle_filter('no-tools')"),
    _in("tree", "app.tree.filter.userOnly", "Filter: user messages only (again: default)", ("ctrl+u",),
        "toggle_filter('user-only')"),
    _in("tree", "app.tree.filter.labeledOnly", "Filter: labeled entries only (again: default)", ("ctrl+l",),
        "toggle_filter('labeled-only')"),
    _in("tree", "app.tree.filter.all", "Filter: every entry (again: default)", ("ctrl+a",), "toggle_filter('all')"),
    _in("tree", "app.tree.filter.cycleForward", "Next filter", ("ctrl+o",), "cycle_filter(1)"),
    _in("tree", "app.tree.filter.cycleBackward", "Previous filter", ("shift+ctrl+o",), "cycle_filter(-1)"),
)

ACTIONS_BY_ID = {a.id: a for a in ACTIONS}

PI_ONLY_IDS = frozenset({
    # Later pi's: its tree can show when a label was set; pi-tui's tree shows no label times.
    "app.tree.toggleLabelTimestamp", "treeToggleLabelTimestamp",
    # pi's /scoped-models screen (choose and order the models ctrl+p cycles): pi-tui has none.
    "app.models.save", "app.models.enableAll", "app.models.clearAll", "app.models.toggleProvider",
    "app.models.reorderUp", "app.models.reorderDown",
})
"""pi's ids (and old short names) that pi-tui accepts in keybindings.json without acting on them
(one file serves both agents)."""

_KEY_NAMES = {
    "esc": "escape", "return": "enter", "del": "delete", "pageup": "pageup", "pagedown": "pagedown",
    "ins": "insert", " ": "space",
}
_SYMBOL_NAMES = {
    "-": "minus", "_": "underscore", "=": "equals_sign", "+": "plus", "[": "left_square_bracket",
    "]": "right_square_bracket", "{": "left_curly_bracket", "}": "right_curly_bracket",
    "\\": "backslash", "|": "vertical_line", ";": "semicolon", ":": "colon", "'": "apostrophe",
    '"': "quotation_mark", ",": "comma", ".": "full_stop", "/": "slash", "?": "question_mark",
    "<": "less_than_sign", ">": "greater_than_sign", "`": "grave_accent", "~": "tilde",
    "!": "exclamation_mark", "@": "at", "#": "number_sign", "$": "dollar_sign", "%": "percent_sign",
    "^": "circumflex_accent", "&": "ampersand", "*": "asterisk", "(": "left_parenthesis",
    ")": "right_parenthesis",
}
# What a legacy terminal sends for a key, when Textual names it differently: ctrl+- arrives as
# 0x1f, which Textual calls ctrl+underscore (the kitty protocol reports ctrl+minus).
_TERMINAL_EQUIVALENTS = {"ctrl+minus": ("ctrl+underscore",)}


def to_textual_key(key: str) -> str:
    """pi's key spelling → Textual's (``esc`` → ``escape``, ``shift+ctrl+p`` → ``ctrl+shift+p``,
    ``ctrl+]`` → ``ctrl+right_square_bracket``). Modifiers come in Textual's (alphabetical) order."""
    key = key.strip().lower()
    if key.endswith("++"):
        modifiers, base = key[:-2].split("+") if key[:-2] else [], "+"
    else:
        *modifiers, base = key.split("+")
    base = _KEY_NAMES.get(base, base)
    base = _SYMBOL_NAMES.get(base, base)
    return "+".join([*sorted(m for m in modifiers if m), base])


def textual_keys(key: str) -> tuple[str, ...]:
    """Every Textual key name that means ``key`` (usually one)."""
    name = to_textual_key(key)
    if len(name) == 7 and name.startswith("shift+") and name[-1].isalpha():
        return (name, name[-1].upper())  # most terminals send shift+l as a plain "L"
    return (name, *_TERMINAL_EQUIVALENTS.get(name, ()))


def _spell(key: str) -> str:
    return key.strip()


class Keymap:
    """The effective bindings: defaults merged with the user's overrides."""

    __slots__ = ("diagnostics", "keys", "spelled")

    def __init__(self, keys: dict[str, tuple[str, ...]] | None = None,
                 spelled: dict[str, tuple[str, ...]] | None = None, diagnostics: list[str] | None = None) -> None:
        self.keys: dict[str, tuple[str, ...]] = keys if keys is not None else {}
        """Action id → Textual key names."""
        self.spelled: dict[str, tuple[str, ...]] = spelled if spelled is not None else {}
        """Action id → the keys as pi spells them (for /hotkeys)."""
        self.diagnostics: list[str] = diagnostics if diagnostics is not None else []

    @classmethod
    def defaults(cls) -> Keymap:
        keymap = cls()
        for action in ACTIONS:
            keymap._bind(action.id, action.defaults)
        return keymap

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
            import json  # only when there is a file: json is not needed for the first frame otherwise

            data = json.loads(path.read_text(encoding="utf-8-sig"))
        except (OSError, ValueError, RecursionError) as err:
            why = "nested too deeply" if isinstance(err, RecursionError) else err
            keymap.diagnostics.append(f"{path}: not valid JSON ({why}); using the default keys")
            return keymap
        if not isinstance(data, dict):
            keymap.diagnostics.append(f"{path}: expected an object {{action: key}}; using the default keys")
            return keymap
        keymap.apply(data, source=str(path))
        return keymap

    def _bind(self, action_id: str, keys: tuple[str, ...] | list[str]) -> None:
        spelled = tuple(dict.fromkeys(_spell(k) for k in keys if k.strip()))
        self.spelled[action_id] = spelled
        self.keys[action_id] = tuple(dict.fromkeys(name for k in spelled for name in textual_keys(k)))

    def apply(self, overrides: dict[str, object], *, source: str = "keybindings") -> None:
        """Replace the keys of each named action; a namespaced id wins over its old short name."""
        by_name = {a.id: a.id for a in ACTIONS} | {alias: a.id for a in ACTIONS for alias in a.aliases}
        ordered = sorted(overrides.items(), key=lambda item: item[0] in ACTIONS_BY_ID)
        configured: set[str] = set()
        for name, value in ordered:
            action_id = by_name.get(name)
            if action_id is None:
                if name in PI_ONLY_IDS:
                    continue
                self.diagnostics.append(f"{source}: unknown action {name!r} (ignored; /hotkeys lists the ids)")
                continue
            keys = [value] if isinstance(value, str) else value
            if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
                self.diagnostics.append(
                    f"{source}: {name} must be a key or a list of keys, not {_json_text(value)}; "
                    "keeping its default keys")
                continue
            self._bind(action_id, keys)
            configured.add(action_id)
        self._settle_conflicts(configured, source)

    def _settle_conflicts(self, configured: set[str], source: str) -> None:
        """One key, several app/editor actions: only the first would ever run (app keys are
        priority bindings; within a scope the registry order decides). A key the user gives an
        action leaves the actions that only had it by default; two actions the user gives the
        same key are reported. Keys shared by design (ctrl+d: quit or delete) are left alone."""
        defaults = Keymap.defaults()
        owners: dict[str, list[str]] = {}
        for action in ACTIONS:
            if action.scope in ("app", "editor"):
                for key in self.keys.get(action.id, ()):
                    owners.setdefault(key, []).append(action.id)
        for key, ids in owners.items():
            if len(ids) < 2 or all(key in defaults.keys_for(i) for i in ids):
                continue
            chosen = [i for i in ids if i in configured]
            for loser in (i for i in ids if i not in configured):
                self._unbind_key(loser, key)
            if len(chosen) > 1:
                spelled = next((k for k in self.spelled[chosen[0]] if key in textual_keys(k)), key)
                self.diagnostics.append(f"{source}: {spelled} is bound to both {chosen[0]} and "
                                        f"{' and '.join(chosen[1:])}; {chosen[0]} wins")

    def _unbind_key(self, action_id: str, key: str) -> None:
        self.keys[action_id] = tuple(k for k in self.keys[action_id] if k != key)
        left = self.keys[action_id]
        self.spelled[action_id] = tuple(k for k in self.spelled[action_id] if any(n in left for n in textual_keys(k)))

    def keys_for(self, action_id: str) -> tuple[str, ...]:
        return self.keys.get(action_id, ())

    def matches(self, action_id: str, key: str) -> bool:
        return key in self.keys.get(action_id, ())

    def _bindings(self, scope: Scope, *, priority: bool) -> list[Binding]:
        return [
            Binding(key, action.handler, action.description, show=False, priority=priority, id=action.id)
            for action in ACTIONS if action.scope == scope
            for key in self.keys.get(action.id, ())
        ]

    def screen_bindings(self) -> list[Binding]:
        """The chat screen's bindings: every ``app`` action.

        They are priority bindings so the editor (a TextArea) cannot swallow them; modal screens
        are separate screens and keep their own keys.
        """
        return self._bindings("app", priority=True)

    def editor_bindings(self) -> list[Binding]:
        """The prompt editor's bindings: every ``editor`` action, in place of TextArea's own, so a
        rebinding moves the action (the default key stops working)."""
        return self._bindings("editor", priority=False)

    def screen_bindings_for(self, scope: Literal["picker", "tree"]) -> list[Binding]:
        """The rebindable keys of the /resume picker or the /tree navigator; each screen adds them
        to its fixed ones when it mounts. Priority bindings: the picker's search field has the
        focus, and the tree types printable keys into its search (shift+l labels)."""
        return self._bindings(scope, priority=True)

    def describe(self) -> list[tuple[str, str, str]]:
        """(keys, action id, description) rows for /hotkeys, keys in pi's spelling."""
        return [(", ".join(self.spelled.get(a.id, ())) or "(unbound)", a.id, a.description) for a in ACTIONS]


def install_screen_keys(screen: Any, scope: Literal["picker", "tree"], keymap: Keymap | None = None) -> None:
    """Give ``screen`` (the /resume picker or the /tree navigator) the keymap's keys for ``scope``,
    ahead of its fixed keys so a user's choice wins a shared key. The keymap is the app's
    (``keybindings.json`` applied) unless one is given."""
    from textual.binding import BindingsMap

    keymap = keymap or getattr(screen.app, "keymap", None) or Keymap.defaults()
    screen._bindings = BindingsMap.merge([BindingsMap(keymap.screen_bindings_for(scope)), screen._bindings])


def _json_text(value: object) -> str:
    import json

    return json.dumps(value)
