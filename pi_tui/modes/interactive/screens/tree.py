"""/tree: the session tree navigator (pi-behaviour.md §8.4, §3 interactive flow).

The screen reads the tree from a ``TreeSource`` (``SessionManager`` fits), draws the rows of
``tree_rows``, and returns a ``TreeChoice``. It never navigates itself: the app runs
``session.navigate_tree(...)`` in a worker, showing ``SummarizingScreen`` meanwhile.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.events import Key
from textual.screen import ModalScreen
from textual.widgets import Static

from pi_tui.modes.interactive.keymap import Keymap, install_screen_keys
from pi_tui.modes.interactive.screens.row_list import RowList, row_navigation_bindings
from pi_tui.modes.interactive.screens.tree_dialogs import (
    MOVE_OPTIONS,
    CustomInstructionsScreen,
    LabelEditScreen,
    SummarizeChoiceScreen,
)
from pi_tui.modes.interactive.screens.tree_rows import (
    TREE_FILTERS,
    TreeFilter,
    TreeIndex,
    TreeRow,
    TreeView,
    build_rows,
)

ALREADY_HERE = "Already at this point"
HELP_TEXT = (
    "↑/↓ move  ←/→ page  ctrl+←/→ fold  enter choose  shift+l label  "
    "ctrl+d/t/u/l/a/o filters  type to search  esc close"
)


_FILTER_IDS = ("default", "noTools", "userOnly", "labeledOnly", "all", "cycleForward")


def tree_help(keymap: Keymap) -> str:
    """``HELP_TEXT`` with the keys in effect (the same text with the default keys)."""
    def key(action_id: str) -> str:
        return next(iter(keymap.spelled.get(action_id, ())), "(unbound)")

    defaults = Keymap.defaults()
    text = HELP_TEXT
    fold, unfold = key("app.tree.foldOrUp"), key("app.tree.unfoldOrDown")
    if (fold, unfold) != ("ctrl+left", "ctrl+right"):
        text = text.replace("ctrl+←/→", f"{fold}/{unfold}")
    text = text.replace("shift+l label", f"{key('app.tree.editLabel')} label")
    filters = [f"app.tree.filter.{name}" for name in _FILTER_IDS]
    if any(keymap.spelled.get(i) != defaults.spelled.get(i) for i in filters):
        text = text.replace("ctrl+d/t/u/l/a/o filters", "/".join(key(i) for i in filters) + " filters")
    return text


class TreeSource(Protocol):
    """What the navigator reads (``SessionManager`` satisfies it)."""

    @property
    def leaf_id(self) -> str | None: ...

    def get_tree(self) -> Iterable[Any]: ...

    def append_label_change(self, target_id: str, label: str | None) -> str: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class TreeChoice:
    """Where to go, and how: the arguments of ``AgentSession.navigate_tree``."""

    target_id: str
    summarize: bool = False
    custom_instructions: str | None = None
    restore_files: bool = False
    """The files of that point come back too (the chooser's "restore files" switch)."""


@dataclass(frozen=True, slots=True)
class FilesPreview:
    """What the chooser shows about the files of a point: ``text`` (the preview, with a
    switch) when restoring would change files, ``blocked`` when they cannot come back."""

    text: str | None = None
    blocked: str | None = None


FilesPreviewer = Callable[[str], Awaitable[FilesPreview | None]]


_KIND_STYLE = {
    "user": "$text-primary",
    "assistant": "$text",
    "tool": "$foreground-muted",
    "error": "$text-error",
    "summary": "italic $text-secondary",
    "meta": "$foreground-muted italic",
}


ACTIVE_MARKER = "  ← active"
"""Drawn after the current position; never cut, whatever the width."""


class TreeScreen(ModalScreen[TreeChoice | None]):
    """The whole session tree; choose a node to move the leaf there."""

    CSS_PATH = "tree.tcss"
    BINDINGS = [  # noqa: RUF012 - Textual's declaration style
        *row_navigation_bindings("tree", page_keys=("left,pageup", "right,pagedown")),
        Binding("enter", "choose", "Choose", id="tree.choose"),
        Binding("escape", "clear_search_or_close", "Close", id="tree.cancel"),
        Binding("backspace", "search_backspace", "Delete search char", show=False, id="tree.search_backspace"),
        # The fold, label and filter keys are pi's ids (app.tree.*), from the keymap (on_mount).
    ]

    def __init__(
        self,
        source: TreeSource,
        *,
        skip_summary_prompt: bool = False,
        initial_filter: TreeFilter = "default",
        set_label: Callable[[str, str | None], object] | None = None,
        select_id: str | None = None,
        keymap: Keymap | None = None,
        files_preview: FilesPreviewer | None = None,
    ) -> None:
        """Args:
        source: the session's tree (re-read after a label change).
        skip_summary_prompt: the ``branchSummary.skipPrompt`` setting: choose without asking.
        initial_filter: the ``treeFilterMode`` setting.
        set_label: how to set (str) or clear (None) a label; defaults to the source's
            ``append_label_change``.
        select_id: the entry to start on (reopening after a cancelled summary); default the leaf.
        keymap: where the fold keys come from (default: the app's).
        files_preview: what restoring a point's files would change (docs/checkpoints.md);
            None when files never come back. The chooser shows it beside the summary choice.
        """
        super().__init__()
        self._source = source
        self._skip_summary_prompt = skip_summary_prompt
        self._set_label = set_label or source.append_label_change
        self._view = TreeView(filter=initial_filter if initial_filter in TREE_FILTERS else "default")
        self._rows: list[TreeRow] = []
        self._index = TreeIndex(list(source.get_tree()), source.leaf_id)
        self._initial_selection = select_id
        self._typed_search = ""
        self._search_pattern: re.Pattern[str] | None = None
        self._search_scheduled = False
        self._keymap = keymap
        self._files_preview = files_preview
        self._previews: dict[str, FilesPreview | None] = {}

    # ------------------------------------------------------------------ layout

    def compose(self) -> ComposeResult:
        with Vertical(id="tree-panel"):
            yield Static("Session Tree", id="tree-title")
            yield Static(HELP_TEXT, id="tree-help")
            yield Static("", id="tree-search")
            yield RowList(self._row_content, id="tree-rows")
            yield Static("", id="tree-status")

    def on_mount(self) -> None:
        install_screen_keys(self, "tree", self._keymap)
        keymap = self._keymap or getattr(self.app, "keymap", None) or Keymap.defaults()
        self.query_one("#tree-help", Static).update(tree_help(keymap))
        self._rebuild(keep=self._initial_selection or self._source.leaf_id)

    @property
    def _rows_widget(self) -> RowList:
        return self.query_one("#tree-rows", RowList)

    @property
    def rows(self) -> list[TreeRow]:
        """The rows as shown (for tests and the app)."""
        return list(self._rows)

    @property
    def view(self) -> TreeView:
        return self._view

    @property
    def selected(self) -> TreeRow | None:
        index = self._rows_widget.cursor
        return self._rows[index] if index is not None and 0 <= index < len(self._rows) else None

    def _rebuild(self, *, keep: str | None) -> None:
        leaf_id = self._source.leaf_id
        self._rows = build_rows(self._index, leaf_id=leaf_id, view=self._view)
        tokens = self._view.search.split()
        self._search_pattern = (
            re.compile("|".join(re.escape(token) for token in tokens), re.IGNORECASE) if tokens else None
        )
        self._rows_widget.set_rows(len(self._rows), cursor=self._index_for(keep))
        self._refresh_header()

    def _index_for(self, entry_id: str | None) -> int | None:
        if not self._rows:
            return None
        by_id = {row.entry_id: index for index, row in enumerate(self._rows)}
        if entry_id in by_id:
            return by_id[entry_id]
        position = next((i for i, row in enumerate(self._rows) if row.is_position), None)
        return position if position is not None else len(self._rows) - 1

    def _row_content(self, index: int, is_cursor: bool) -> Content:
        return self._render_row(self._rows[index], is_cursor=is_cursor,
                                width=self._rows_widget.scrollable_content_region.width)

    def _render_row(self, row: TreeRow, *, is_cursor: bool, width: int | None = None) -> Content:
        """One row; with ``width`` the entry text is shortened (``…``) so the rails, the label and
        the ``← active`` marker always stay visible (the list would otherwise cut the row's end)."""
        # On the cursor row the cursor's own colours win; only bold/italic cues stay.
        muted = "" if is_cursor else "$foreground-muted"
        head: list[Content | str | tuple[str, str]] = [(row.prefix, muted)]
        head.append(("• ", "" if is_cursor else "$accent") if row.on_active_path else "  ")
        if row.label:
            head.append((f"[{row.label}] ", "bold" if is_cursor else "$text-warning"))
        tail: list[Content | str | tuple[str, str]] = []
        if row.is_position:
            tail.append((ACTIVE_MARKER, "bold" if is_cursor else "bold $accent"))
        text = Content.styled(row.text, "bold" if is_cursor else _KIND_STYLE[row.kind])
        if self._search_pattern is not None:
            text = text.highlight_regex(self._search_pattern, style="underline" if is_cursor else "bold underline $text-accent")
        if width is not None and width > 0:
            fixed = Content.assemble(*head, *tail).cell_length
            room = max(1, width - fixed)
            if text.cell_length > room:
                text = text.truncate(room, ellipsis=True)
        return Content.assemble(*head, text, *tail)

    def _refresh_header(self) -> None:
        query = self._view.search
        search = self.query_one("#tree-search", Static)
        search.update(Content.assemble(("Type to search: ", "$foreground-muted"), (query, "bold")))
        index = self._rows_widget.cursor
        position = f"({(index or 0) + 1}/{len(self._rows)})" if self._rows else "(0/0)"
        if not self._rows:
            position = "(no entries match)" if query or self._view.filter != "default" else "(empty session)"
        filter_note = "" if self._view.filter == "default" else f"  [{self._view.filter}]"
        self.query_one("#tree-status", Static).update(Content(f"{position}{filter_note}"))

    @on(RowList.Highlighted)
    def _highlight_moved(self) -> None:
        self._refresh_header()

    @on(RowList.Selected)
    def _row_clicked(self, event: RowList.Selected) -> None:
        event.stop()
        self.action_choose()

    # ------------------------------------------------------------------ navigation

    def action_move(self, delta: int) -> None:
        self._rows_widget.move_by(delta)

    def action_page(self, direction: int) -> None:
        self._rows_widget.page(direction)

    def action_fold_or_up(self) -> None:
        row, index = self.selected, self._rows_widget.cursor
        if row is None or index is None:
            return
        if row.foldable and not row.folded:
            self._set_folded(row.entry_id, folded=True)
            return
        starts = [i for i in range(index) if self._rows[i].segment_start]
        if starts:
            self._rows_widget.move_to(starts[-1])

    def action_unfold_or_down(self) -> None:
        row, index = self.selected, self._rows_widget.cursor
        if row is None or index is None:
            return
        if row.folded:
            self._set_folded(row.entry_id, folded=False)
            return
        later = [i for i in range(index + 1, len(self._rows)) if self._rows[i].segment_start]
        self._rows_widget.move_to(later[0] if later else len(self._rows) - 1)

    def _set_folded(self, entry_id: str, *, folded: bool) -> None:
        ids = set(self._view.folded)
        if folded:
            ids.add(entry_id)
        else:
            ids.discard(entry_id)
        self._view = TreeView(filter=self._view.filter, search=self._view.search, folded=frozenset(ids))
        self._rebuild(keep=entry_id)

    # ------------------------------------------------------------------ filters and search

    def action_set_filter(self, name: str) -> None:
        self._apply_view(filter_name=name, search=self._view.search)

    def action_toggle_filter(self, name: str) -> None:
        self._apply_view(filter_name="default" if self._view.filter == name else name, search=self._view.search)

    def action_cycle_filter(self, step: int) -> None:
        index = TREE_FILTERS.index(self._view.filter)
        self._apply_view(filter_name=TREE_FILTERS[(index + step) % len(TREE_FILTERS)], search=self._view.search)

    def action_search_backspace(self) -> None:
        if self._typed_search:
            self._queue_search(self._typed_search[:-1])

    def action_clear_search_or_close(self) -> None:
        if self._typed_search or self._view.search:
            self._apply_view(filter_name=self._view.filter, search="")
        else:
            self.dismiss(None)

    def on_key(self, event: Key) -> None:
        # Type-to-search takes every printable character no binding claimed.
        if event.is_printable and event.character:
            event.stop()
            self._queue_search(self._typed_search + event.character)

    def _queue_search(self, text: str) -> None:
        """Show the typed text at once; filter once per burst of queued keys (big trees)."""
        self._typed_search = text
        self.query_one("#tree-search", Static).update(
            Content.assemble(("Type to search: ", "$foreground-muted"), (text, "bold"))
        )
        if not self._search_scheduled:
            self._search_scheduled = True
            self.call_later(self._apply_typed_search)

    def _apply_typed_search(self) -> None:
        self._search_scheduled = False
        if self._typed_search != self._view.search:
            self._apply_view(filter_name=self._view.filter, search=self._typed_search)

    def _apply_view(self, *, filter_name: str, search: str) -> None:
        keep = self.selected.entry_id if self.selected else self._source.leaf_id
        chosen: TreeFilter = next((f for f in TREE_FILTERS if f == filter_name), "default")
        # Filter and search changes reset the folds (§8.4).
        self._view = TreeView(filter=chosen, search=search)
        self._typed_search = search
        self._rebuild(keep=keep)

    # ------------------------------------------------------------------ labels

    def action_edit_label(self) -> None:
        row = self.selected
        if row is None:
            return
        target = row.entry_id

        def apply(label: str | None) -> None:
            if label is None:
                return
            self._set_label(target, label.strip() or None)
            self._index = TreeIndex(list(self._source.get_tree()), self._source.leaf_id)
            self._rebuild(keep=target)

        self.app.push_screen(LabelEditScreen(current=row.label or ""), apply)

    # ------------------------------------------------------------------ choosing

    def action_choose(self) -> None:
        row = self.selected
        if row is None:
            return
        if row.entry_id == self._source.leaf_id:
            self.app.notify(ALREADY_HERE)
            self.dismiss(None)
            return
        if self._files_preview is not None:
            self.run_worker(self._preview_then_ask(row.entry_id), group="tree-files", exclusive=True)
            return
        if self._skip_summary_prompt:
            self.dismiss(TreeChoice(target_id=row.entry_id))
            return
        self._ask_summary(row.entry_id)

    async def _preview_then_ask(self, target: str) -> None:
        if target not in self._previews:  # once per point: Esc and back does not snapshot again
            assert self._files_preview is not None
            self._previews[target] = await self._files_preview(target)
        files = self._previews[target]
        if self._skip_summary_prompt and (files is None or (files.text is None and files.blocked is None)):
            self.dismiss(TreeChoice(target_id=target))
            return
        self._ask_summary(target)

    def _ask_summary(self, target: str) -> None:
        files = self._previews.get(target)
        text, blocked = (files.text, files.blocked) if files else (None, None)
        if self._skip_summary_prompt:  # no summary question, only the files one
            dialog = SummarizeChoiceScreen(files=text, files_blocked=blocked, title="Move here?", options=MOVE_OPTIONS)
        else:
            dialog = SummarizeChoiceScreen(files=text, files_blocked=blocked)

        def chosen(choice: str | None) -> None:
            if choice is None:
                return  # Esc in the chooser: back to the tree
            if choice == "custom":
                self._ask_instructions(target, dialog.restore_files)
                return
            self.dismiss(TreeChoice(target_id=target, summarize=choice == "summarize",
                                    restore_files=dialog.restore_files))

        self.app.push_screen(dialog, chosen)

    def _ask_instructions(self, target: str, restore_files: bool = False) -> None:
        def written(instructions: str | None) -> None:
            if instructions is None:
                self._ask_summary(target)  # Esc in the editor: back to the chooser
                return
            self.dismiss(TreeChoice(target_id=target, summarize=True,
                                    custom_instructions=instructions.strip() or None, restore_files=restore_files))

        self.app.push_screen(CustomInstructionsScreen(), written)
