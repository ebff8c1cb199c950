"""``SessionManager``: one session's entry tree, its leaf, labels and file (pi-behaviour.md §1).

Construction reads and migrates the file, takes the OS lock, and keeps a backup of anything it
must rewrite. Appends make a child of the leaf and move the leaf to it; they are written as soon
as the session has a user message (deferred persistence; pi waits for the assistant's). Replacing
the session (new, branched, fork) is planned in ``branching.py`` (pure: entries in, entries out)
and installed here.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from types import MappingProxyType, TracebackType

from pi_tui.core.errors import EntryNotFoundError
from pi_tui.core.messages import AgentMessage, JsonValue, UserContent
from pi_tui.core.session import entries as E
from pi_tui.core.session.branching import (
    ForkPosition,
    ForkResult,
    branched_entries,
    fork_plan,
    read_fork_source,
)
from pi_tui.core.session.entries import Entry
from pi_tui.core.session.gc_pause import collector_paused
from pi_tui.core.session.ids import artifact_dir_for, new_entry_id, session_file_name, uuid7
from pi_tui.core.session.listing import find_most_recent_session
from pi_tui.core.session.loading import load_for_open
from pi_tui.core.session.persistence import Persistence
from pi_tui.core.session.projection import (
    LAST_ENTRY,
    LastEntry,
    SessionContext,
    build_session_context,
)
from pi_tui.core.session.tree import (
    LabelState,
    TreeNode,
    build_tree,
    children_of,
    index_entries,
    latest_on_path,
    path_to,
)
from pi_tui.core.session.validation import CheckedEntries


class SessionManager:
    """Use the constructors ``create``, ``open``, ``in_memory`` and ``continue_recent``."""

    def __init__(self, *, cwd: Path, session_dir: Path | None, session_file: Path | None) -> None:
        self.cwd = cwd
        self.session_dir = session_dir
        self.load_warnings: list[str] = []
        self.migrated_from: int | None = None
        """The file's version before it was migrated on open (None: no migration)."""
        self.backup_file: Path | None = None
        """Where the original was kept when the file was rewritten on open."""
        self._persistence = Persistence(session_file)
        self._header: Entry = {}
        self._entries: list[Entry] = []
        self._by_id: dict[str, Entry] = {}
        self._custom: list[Entry] = []
        self._labels = LabelState()
        self._leaf_id: str | None = None
        self._session_name: str | None = None
        self._temp_artifacts: Path | None = None

    # ----------------------------------------------------------------- construction

    @classmethod
    def create(cls, cwd: Path, session_dir: Path) -> SessionManager:
        """A new session in ``session_dir``; the file appears with the first user message."""
        manager = cls(cwd=cwd, session_dir=session_dir, session_file=None)
        manager.new_session()
        return manager

    @classmethod
    def in_memory(cls, cwd: Path) -> SessionManager:
        manager = cls(cwd=cwd, session_dir=None, session_file=None)
        manager.new_session()
        return manager

    @classmethod
    def open(cls, path: Path, *, cwd: Path) -> SessionManager:
        """Open (and lock) a session file; a missing path becomes a new session at that path.

        Raises ``SessionLockedError`` if another process holds the file.
        """
        path = Path(path)
        manager = cls(cwd=cwd, session_dir=path.parent, session_file=path)
        loaded = [0]
        with collector_paused(loaded):  # acyclic JSON data: see gc_pause.py
            outcome = load_for_open(path, manager._persistence)
            manager.load_warnings = outcome.warnings
            manager.migrated_from = outcome.migrated_from
            manager.backup_file = outcome.backup_file
            if outcome.header is None:
                manager._start_new(parent_session=None, session_id=None)
                if outcome.rewrite_header:
                    manager._persistence.rewrite(manager._header, [])
            else:
                manager._install(outcome.header, outcome.entries, outcome.index)
                manager._persistence.mark_all_on_disk(len(outcome.entries))
            loaded[0] = len(outcome.entries)
        return manager

    @classmethod
    def continue_recent(cls, cwd: Path, session_dir: Path) -> SessionManager:
        recent = find_most_recent_session(session_dir)
        if recent is None:
            return cls.create(cwd, session_dir)
        return cls.open(recent, cwd=cwd)

    @classmethod
    def fork_from(cls, source: Path, target_cwd: Path, session_dir: Path) -> SessionManager:
        """Copy another session into a new file under ``session_dir`` (``--fork``), written now."""
        checked = read_fork_source(source)
        header = E.make_header(uuid7(), E.iso_now(), str(target_cwd), str(source))
        manager = cls(cwd=target_cwd, session_dir=session_dir, session_file=None)
        manager.load_warnings = checked.warnings
        manager._replace_file(session_dir / session_file_name(str(header["timestamp"]), str(header["id"])))
        manager._install(header, checked.entries, checked.index)
        manager._persistence.rewrite(manager._header, manager._entries)
        return manager

    # ----------------------------------------------------------------- state

    @property
    def session_id(self) -> str:
        return str(self._header.get("id", ""))

    @property
    def session_file(self) -> Path | None:
        return self._persistence.path

    @property
    def header(self) -> Entry:
        return self._header

    @property
    def leaf_id(self) -> str | None:
        return self._leaf_id

    @property
    def session_name(self) -> str | None:
        return self._session_name

    @property
    def is_persisted(self) -> bool:
        """The session is backed by a file (it may not have been written yet)."""
        return self._persistence.enabled

    @property
    def entries_on_disk(self) -> int:
        """How many tree entries the file holds (header not counted)."""
        return self._persistence.entries_on_disk

    @property
    def header_on_disk(self) -> bool:
        return self._persistence.header_on_disk

    @property
    def artifact_dir(self) -> Path:
        """``<session-stem>.artifacts/`` beside the file; a temp dir for in-memory sessions."""
        if self.session_file is not None:
            return artifact_dir_for(self.session_file)
        if self._temp_artifacts is None:
            self._temp_artifacts = Path(tempfile.mkdtemp(prefix="pi-tui-artifacts-"))
        return self._temp_artifacts

    # ----------------------------------------------------------------- internals

    def _install(self, header: Entry, entries: list[Entry], index: CheckedEntries | None = None) -> None:
        """Make ``header`` + ``entries`` the session; the leaf is the last entry. ``index``: what
        the load's checks learned about ``entries`` (by id, and where the entries other than
        plain messages are), so a large file is not walked again here."""
        self._header = header
        self._entries = entries
        self._labels = LabelState()
        self._session_name = None
        self._custom = []
        if index is None:
            self._by_id = index_entries(entries)
            irregular: Iterable[Entry] = entries
        else:
            self._by_id = index.by_id
            irregular = map(entries.__getitem__, index.irregular)
        for entry in irregular:
            self._note_kind(entry)
        self._persistence.started = any(map(E.starts_the_file, entries))  # stops at the first prompt
        last_id = entries[-1].get("id") if entries else None
        self._leaf_id = last_id if isinstance(last_id, str) else None

    def _note_kind(self, entry: Entry) -> None:
        """What the kind of entry changes besides the tree: labels, the session name, the custom
        entries (``custom_entries``)."""
        kind = entry.get("type")
        if kind == "label":
            self._labels.apply(entry)
        elif kind == "session_info":
            self._session_name = E.session_name_of(entry)
        elif kind == "custom":
            self._custom.append(entry)

    def _start_new(self, *, parent_session: str | None, session_id: str | None) -> None:
        timestamp = E.iso_now()
        header = E.make_header(session_id or uuid7(), timestamp, str(self.cwd), parent_session)
        self._install(header, [])
        self._persistence.started = False

    def _replace_file(self, path: Path | None) -> None:
        """Release the current file and its lock; later writes go to ``path``."""
        self._persistence.close()
        self._persistence = Persistence(path)

    def _new_file_path(self, header: Entry) -> Path | None:
        if self.session_dir is None:  # in-memory
            return None
        return self.session_dir / session_file_name(str(header["timestamp"]), str(header["id"]))

    def _append(self, entry: Entry) -> str:
        entry_id: str = entry["id"]
        self._entries.append(entry)
        self._by_id[entry_id] = entry
        self._leaf_id = entry_id
        self._note_kind(entry)
        if not self._persistence.started and E.starts_the_file(entry):
            self._persistence.started = True
        self._persistence.flush(self._header, self._entries)
        return entry_id

    def _next(self) -> tuple[str, str | None, str]:
        return new_entry_id(self._by_id), self._leaf_id, E.iso_now()

    # ----------------------------------------------------------------- appends

    def append_message(self, message: AgentMessage) -> str:
        return self._append(E.make_message_entry(*self._next(), message))

    def append_model_change(self, provider: str, model_id: str) -> str:
        return self._append(E.make_model_change_entry(*self._next(), provider, model_id))

    def append_thinking_level_change(self, level: str) -> str:
        return self._append(E.make_thinking_level_entry(*self._next(), level))

    def append_compaction(
        self,
        summary: str,
        first_kept_entry_id: str,
        tokens_before: int,
        details: JsonValue = None,
        from_hook: bool = False,
    ) -> str:
        entry = E.make_compaction_entry(
            *self._next(),
            summary=summary,
            first_kept_entry_id=first_kept_entry_id,
            tokens_before=tokens_before,
            details=details,
            from_hook=from_hook,
        )
        return self._append(entry)

    def append_custom_entry(self, custom_type: str, data: JsonValue = None) -> str:
        return self._append(E.make_custom_entry(*self._next(), custom_type, data))

    def append_custom_message_entry(
        self, custom_type: str, content: str | list[UserContent], display: bool, details: JsonValue = None
    ) -> str:
        entry = E.make_custom_message_entry(
            *self._next(), custom_type=custom_type, content=content, display=display, details=details
        )
        return self._append(entry)

    def append_label_change(self, target_id: str, label: str | None) -> str:
        """Set (or, with ``None``/``""``, clear) the label of an existing entry."""
        if target_id not in self._by_id:
            raise EntryNotFoundError(target_id)
        return self._append(E.make_label_entry(*self._next(), target_id, label))

    def append_session_info(self, name: str) -> str:
        """Name the session (trimmed); an empty name clears it (pi 0.73.1)."""
        return self._append(E.make_session_info_entry(*self._next(), name.strip()))

    # ----------------------------------------------------------------- leaf moves

    def branch(self, entry_id: str) -> None:
        if entry_id not in self._by_id:
            raise EntryNotFoundError(entry_id)
        self._leaf_id = entry_id

    def reset_leaf(self) -> None:
        """The next entry becomes a new root."""
        self._leaf_id = None

    def branch_with_summary(
        self, from_id: str | None, summary: str, details: JsonValue = None, from_hook: bool = False
    ) -> str:
        """Move the leaf to ``from_id`` and append a ``branch_summary`` there (§1.6)."""
        if from_id is not None and from_id not in self._by_id:
            raise EntryNotFoundError(from_id)
        self._leaf_id = from_id
        entry = E.make_branch_summary_entry(
            *self._next(), from_id=from_id or "root", summary=summary, details=details, from_hook=from_hook
        )
        return self._append(entry)

    # ----------------------------------------------------------------- reads

    def get_entry(self, entry_id: str) -> Entry | None:
        return self._by_id.get(entry_id)

    def get_entries(self) -> list[Entry]:
        """Every tree entry in file order (the header excluded). Do not mutate."""
        return self._entries

    def entries_by_id(self) -> Mapping[str, Entry]:
        """id -> entry for every tree entry (a read-only view of the manager's own index)."""
        return MappingProxyType(self._by_id)

    def custom_entries(self) -> list[Entry]:
        """The ``custom`` entries of ``get_entries()``, in file order (extensions' and the
        checkpoints' own state: read at every prompt, so kept apart). Do not mutate."""
        return self._custom

    def get_branch(self, from_id: str | None = None) -> list[Entry]:
        """Root → ``from_id`` (default: the leaf); ``[]`` for an unknown id or a null leaf."""
        return path_to(self._by_id, from_id if from_id is not None else self._leaf_id)

    def latest_on_branch(self, entry_type: str) -> Entry | None:
        """The entry of ``entry_type`` nearest the leaf on the current branch, if any."""
        return latest_on_path(self._by_id, self._leaf_id, entry_type)

    def get_tree(self) -> list[TreeNode]:
        return build_tree(self._entries, self._labels)

    def get_label(self, entry_id: str) -> str | None:
        return self._labels.labels.get(entry_id)

    def get_label_timestamp(self, entry_id: str) -> str | None:
        return self._labels.timestamps.get(entry_id)

    def labels(self) -> dict[str, str]:
        return dict(self._labels.labels)

    def get_children(self, entry_id: str) -> list[Entry]:
        return children_of(self._entries, entry_id)

    def build_session_context(self, leaf_id: str | LastEntry | None = LAST_ENTRY) -> SessionContext:
        """Project from ``leaf_id`` (default: the current leaf; ``None`` gives an empty context)."""
        target = self._leaf_id if isinstance(leaf_id, LastEntry) else leaf_id
        if target is None:
            return SessionContext()
        return build_session_context(self._entries, target, by_id=self._by_id)

    # ----------------------------------------------------------------- replacing the session

    def new_session(self, parent_session: str | None = None, *, session_id: str | None = None) -> None:
        """Start an empty session (new header, null leaf); its file appears with an assistant."""
        self._start_new(parent_session=parent_session, session_id=session_id)
        self._replace_file(self._new_file_path(self._header))

    def create_branched_session(self, leaf_id: str) -> Path | None:
        """Copy root → ``leaf_id`` into a new session file (labels re-created; branching.py).

        Returns the new file (None for in-memory sessions). Written now if the path has a user or
        assistant message; otherwise with the first one, as any new session.
        """
        path = self.get_branch(leaf_id)
        if not path:
            raise EntryNotFoundError(leaf_id)
        entries = branched_entries(path, self._labels)
        old_file = self.session_file
        header = E.make_header(uuid7(), E.iso_now(), str(self.cwd), str(old_file) if old_file else None)
        self._replace_file(self._new_file_path(header))
        self._install(header, entries)
        self._persistence.flush(self._header, self._entries)
        return self.session_file

    def fork(self, entry_id: str, position: ForkPosition = "before") -> ForkResult:
        """``/fork`` (§13.1): ``before`` a user message (default) or ``at`` any entry."""
        plan = fork_plan(entry_id, position, self.get_entry)
        if plan.branch_from is not None:
            return ForkResult(plan.selected_text, self.create_branched_session(plan.branch_from))
        old_file = self.session_file
        self.new_session(parent_session=str(old_file) if old_file else None)
        return ForkResult(plan.selected_text, self.session_file)

    # ----------------------------------------------------------------- lifetime

    def close(self) -> None:
        """Release the file lock (and remove an in-memory session's temp artifact dir)."""
        self._persistence.close()
        if self._temp_artifacts is not None:
            shutil.rmtree(self._temp_artifacts, ignore_errors=True)
            self._temp_artifacts = None

    def relock(self) -> None:
        """Take the file lock again after ``close()`` (a ``/resume`` whose target failed to open
        keeps this session). A file not written yet stays unlocked until its first write."""
        file = self._persistence.file
        if file is not None and file.path.exists():
            file.open()

    def __enter__(self) -> SessionManager:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None) -> None:
        self.close()
