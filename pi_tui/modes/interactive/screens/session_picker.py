"""/resume: pick a session of this project (Tab: all projects) to open (pi-behaviour.md §8.5).

Sessions come from the store's listing (``core/session/listing.py``), read off the event loop.
Rows show the name or first message, the age and the message count; typing searches every
message's text; Ctrl+D (or Ctrl+Backspace with an empty search) deletes after a confirmation, to
the trash where there is one (``core/session/trash.py``). The rebindable keys are pi's ids
(``app.session.*``, from the keymap); the fixed ones are listed in ``BINDINGS``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from pi_tui.core.errors import PiError
from pi_tui.core.session.listing import SessionInfo, list_all_sessions, list_sessions
from pi_tui.core.session.manager import SessionManager
from pi_tui.modes.interactive.keymap import Keymap, install_screen_keys
from pi_tui.modes.interactive.screens.confirm import ConfirmScreen, TextInputScreen
from pi_tui.modes.interactive.screens.row_list import RowList, row_navigation_bindings
from pi_tui.modes.interactive.screens.session_order import (
    SESSION_SORTS,
    PickerRow,
    SessionSort,
    order_sessions,
)
from pi_tui.modes.interactive.screens.tree_text import clip_line

AGE_WIDTH = 5
COUNT_WIDTH = 9


def delete_session_file(path: Path) -> str:
    """Move to the trash (the ``trash`` CLI as pi does, else the freedesktop home trash), else
    delete — and then forget its file snapshots (docs/checkpoints.md; a trashed file keeps them,
    it may come back). Returns ``trash`` or ``deleted``."""
    from pi_tui.core.session.trash import move_to_trash

    if move_to_trash(path) is not None:
        return "trash"
    from pi_tui.checkpoints.prune import prune_deleted_session, session_header
    from pi_tui.resources.locations import agent_dir

    header = session_header(path)
    path.unlink()
    if header is not None:
        prune_deleted_session(agent_dir(), header[1], header[0])  # refs gone, gc in the background
    return "deleted"


def rename_session_file(path: Path, name: str) -> None:
    """Append a ``session_info`` entry to a session that is not open (pi's ctrl+r)."""
    manager = SessionManager.open(path, cwd=path.parent)
    try:
        manager.append_session_info(name)
    finally:
        manager.close()


def format_age(moment: datetime, now: datetime) -> str:
    """``now``, ``5m``, ``3h``, ``2d``, ``4w``, ``6mo``, ``1y``."""
    seconds = max(0.0, (now - moment).total_seconds())
    for unit, size in (("y", 365 * 86400), ("mo", 30 * 86400), ("w", 7 * 86400), ("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit}"
    return "now"


class SessionPickerScreen(ModalScreen[Path | None]):
    """Sessions to resume; Enter returns the chosen session file."""

    CSS_PATH = "session_picker.tcss"
    BINDINGS = [  # noqa: RUF012
        *row_navigation_bindings("picker"),
        Binding("tab", "toggle_scope", "All projects", priority=True, id="picker.toggle_scope"),
        Binding("escape", "close", "Close", id="picker.cancel"),
    ]

    def __init__(
        self,
        *,
        session_dir: Path,
        sessions_root: Path,
        current_session: Path | None = None,
        delete: Callable[[Path], object] = delete_session_file,
        rename: Callable[[Path, str], None] = rename_session_file,
        rename_current: Callable[[str], object] | None = None,
        now: Callable[[], datetime] | None = None,
        keymap: Keymap | None = None,
    ) -> None:
        """Args:
        session_dir: this project's session folder.
        sessions_root: the folder holding every project's session folder (Tab).
        current_session: the open session (marked, and never deleted from here).
        delete: how a file is removed (returning ``"trash"`` when it went to the trash).
        rename: how a closed session is named (runs in a thread).
        rename_current: how the open session is named (``AgentSession.set_session_name``; runs
            on the event loop); without it the open session is not renamed here.
        now: the clock for ages (fixed in tests and snapshots).
        keymap: where the rebindable keys come from (default: the app's).
        """
        super().__init__()
        self._session_dir = session_dir
        self._sessions_root = sessions_root
        self._current = current_session
        self._delete = delete
        self._rename = rename
        self._rename_current = rename_current
        self._sort: SessionSort = "threaded"
        self._show_paths = False
        self._now = now or (lambda: datetime.now(UTC))
        self._all_projects = False
        self._named_only = False
        self._loaded: dict[bool, list[SessionInfo]] = {}
        self._shown: list[PickerRow] = []
        self._row_width = 80
        self._row_now = self._now()
        self._keymap = keymap

    def compose(self) -> ComposeResult:
        with Vertical(id="picker-panel"):
            yield Static("", id="picker-title")
            yield Input(placeholder="type to search", id="picker-search")
            yield RowList(self.session_row, id="picker-rows")
            yield Static("Loading sessions…", id="picker-empty")
            yield Static("", id="picker-help")

    def on_mount(self) -> None:
        install_screen_keys(self, "picker", self._keymap)
        keymap = self._keymap or getattr(self.app, "keymap", None) or Keymap.defaults()

        def key(action_id: str) -> str:
            return next(iter(keymap.spelled.get(action_id, ())), "(unbound)")

        self.query_one("#picker-help", Static).update(
            f"↑/↓ move  enter open  tab this project/all  {key('app.session.toggleSort')} sort  "
            f"{key('app.session.toggleNamedFilter')} named  {key('app.session.togglePath')} paths  "
            f"{key('app.session.rename')} rename  {key('app.session.delete')} delete  esc close")
        self.query_one("#picker-search", Input).focus()
        self._refresh_title()
        self._load(all_projects=False)

    @property
    def shown(self) -> list[SessionInfo]:
        """The sessions listed right now, in order (for tests and the app)."""
        return [row.info for row in self._shown]

    @property
    def sort(self) -> SessionSort:
        return self._sort

    @property
    def all_projects(self) -> bool:
        return self._all_projects

    @work(group="session-listing", exclusive=True)
    async def _load(self, *, all_projects: bool) -> None:
        if all_projects:
            infos = await asyncio.to_thread(list_all_sessions, self._sessions_root)
        else:
            infos = await asyncio.to_thread(list_sessions, self._session_dir)
        self._loaded[all_projects] = infos
        if all_projects == self._all_projects:
            self._render_rows()

    @property
    def _rows(self) -> RowList:
        return self.query_one("#picker-rows", RowList)

    def _render_rows(self, *, keep: Path | None = None) -> None:
        infos = self._loaded.get(self._all_projects)
        cursor = self._rows.cursor
        if keep is None and cursor is not None and cursor < len(self._shown):
            keep = self._shown[cursor].info.path
        tokens = self.query_one("#picker-search", Input).value.lower().split()
        self._shown = order_sessions(infos or [], sort=self._sort, tokens=tokens, named_only=self._named_only)
        self._row_width = max(40, self.app.size.width - 6)
        self._row_now = self._now()
        paths = [row.info.path for row in self._shown]
        self._rows.set_rows(len(paths), cursor=paths.index(keep) if keep in paths else (0 if paths else None))
        empty = self.query_one("#picker-empty", Static)
        empty.display = not self._shown
        if infos is None:
            empty.update("Loading sessions…")
        else:
            empty.update("No sessions match." if tokens or self._named_only else "No sessions yet.")
        self._refresh_title()

    def session_row(self, index: int, is_cursor: bool = False) -> Content:
        row = self._shown[index]
        info = row.info
        width = self._row_width
        muted = "" if is_cursor else "$foreground-muted"
        marker = ("● ", "" if is_cursor else "$accent") if info.path == self._current else ("  ", "")
        nesting = ("  " * (row.depth - 1) + "└ ") if row.depth else ""
        count = f"{info.message_count} msg" + ("s" if info.message_count != 1 else "")
        where = ""
        if self._show_paths:
            where = f"  {_fit_left(_home_relative(str(info.path)), width // 2)}"
        elif self._all_projects:
            where = f"  {_home_relative(info.cwd)}"
        room = width - 2 - len(nesting) - AGE_WIDTH - COUNT_WIDTH - 2 - len(where)
        first = " ".join(info.first_message.split())
        # A named session shows its name, then its first message dimmed.
        title, after = (info.name, first) if info.name else (first, "")
        if info.subagent is not None and not info.name:  # a task child, told apart from a fork
            title, after = f"subagent · {info.subagent}", first
        title = clip_line(title, room)
        rest = "  " + clip_line(after, room - len(title) - 2) if after and room - len(title) > 6 else ""
        return Content.assemble(
            marker,
            (nesting, muted),
            (title, "bold" if info.name else ""),
            (rest.ljust(room - len(title)), muted),
            (where, muted),
            (f"  {format_age(info.modified, self._row_now):>{AGE_WIDTH}}", muted),
            (f"{count:>{COUNT_WIDTH}}", muted),
        )

    def _refresh_title(self) -> None:
        scope = "all projects" if self._all_projects else "this project"
        named = " · named only" if self._named_only else ""
        count = f" · {len(self._shown)}" if self._all_projects in self._loaded else ""
        self.query_one("#picker-title", Static).update(
            Content.assemble(
                ("Resume session", "bold $text-primary"),
                (f"  {scope}{named}{count} · sorted: {self._sort}", "$foreground-muted"),
            )
        )

    @on(Input.Changed, "#picker-search")
    def _search_changed(self) -> None:
        self._render_rows()

    @on(Input.Submitted, "#picker-search")
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._open_highlighted()

    @on(RowList.Selected, "#picker-rows")
    def _clicked(self, event: RowList.Selected) -> None:
        event.stop()
        self._open_highlighted()

    def _highlighted(self) -> SessionInfo | None:
        index = self._rows.cursor
        return self._shown[index].info if index is not None and index < len(self._shown) else None

    def _open_highlighted(self) -> None:
        info = self._highlighted()
        if info is not None:
            self.dismiss(info.path)

    def action_move(self, delta: int) -> None:
        self._rows.move_by(delta)

    def action_page(self, direction: int) -> None:
        self._rows.page(direction)

    def action_toggle_scope(self) -> None:
        self._all_projects = not self._all_projects
        if self._all_projects not in self._loaded:
            self._load(all_projects=self._all_projects)
        self._render_rows()

    def action_toggle_named(self) -> None:
        self._named_only = not self._named_only
        self._render_rows()

    def action_close(self) -> None:
        self.dismiss(None)

    def action_cycle_sort(self) -> None:
        self._sort = SESSION_SORTS[(SESSION_SORTS.index(self._sort) + 1) % len(SESSION_SORTS)]
        self._render_rows()

    def action_toggle_path(self) -> None:
        self._show_paths = not self._show_paths
        self._render_rows()

    def action_rename(self) -> None:
        info = self._highlighted()
        if info is None:
            return

        def named(name: str | None) -> None:
            if name is not None:
                self._rename_session(info.path, name.strip())

        self.app.push_screen(TextInputScreen(title="Session name (empty clears it)", value=info.name or ""), named)

    @work(group="session-rename")
    async def _rename_session(self, path: Path, name: str) -> None:
        try:
            if path == self._current:
                if self._rename_current is None:
                    self.app.notify("Use /name to rename the open session.", severity="warning")
                    return
                self._rename_current(name)
            else:
                await asyncio.to_thread(self._rename, path, name)
        except (OSError, PiError) as err:
            self.app.notify(f"Could not rename {path.name}: {err}", severity="error")
            return
        for scope, infos in self._loaded.items():
            self._loaded[scope] = [replace(i, name=name or None) if i.path == path else i for i in infos]
        self._render_rows(keep=path)

    def action_delete_noninvasive(self) -> None:
        """pi's ctrl+backspace: delete the session only when the search is empty; otherwise the
        key edits the search (deletes the word before the cursor)."""
        search = self.query_one("#picker-search", Input)
        if search.value:
            search.action_delete_left_word()
            return
        self.action_delete()

    def action_delete(self) -> None:
        info = self._highlighted()
        if info is None:
            return
        if info.path == self._current:
            self.app.notify("That is the open session; switch to another one before deleting it.", severity="warning")
            return
        title = " ".join((info.name or info.first_message).split())[:60]

        def answered(yes: bool | None) -> None:
            if yes:
                self._delete_file(info.path)

        self.app.push_screen(ConfirmScreen(f"Delete session “{title}”?", detail=str(info.path)), answered)

    @work(group="session-delete")
    async def _delete_file(self, path: Path) -> None:
        try:
            how = await asyncio.to_thread(self._delete, path)
        except OSError as err:
            self.app.notify(f"Could not delete {path}: {err}", severity="error")
            return
        for scope, infos in self._loaded.items():
            self._loaded[scope] = [info for info in infos if info.path != path]
        self._render_rows()
        self.app.notify(f"Moved {path.name} to the trash" if how == "trash" else f"Deleted {path.name}")


def _fit_left(text: str, room: int) -> str:
    """Keep the end (a path's file name matters most)."""
    return text if len(text) <= room else "…" + text[len(text) - room + 1 :]


def _home_relative(cwd: str) -> str:
    home = str(Path.home())
    return "~" + cwd[len(home) :] if cwd == home or cwd.startswith(home + "/") else cwd
