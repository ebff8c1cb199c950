"""``Checkpoints``: when to snapshot, what to bind it to, and how a restore goes.

The session calls in at a few points (``session/checkpoint_hooks.py``): start and resume,
before a prompt, each agent event (a tool that can change files starting, a turn ending), a
user ``!cmd``, and around ``/tree`` and ``/fork``. A session's first snapshot is taken just
before the first thing that could change a file (a tool other than read/grep/find/ls, a
``!cmd``) and bound to the root; it is written to the file only once a later snapshot differs
from it, so a session that never changes a file gets no entries at all. From then on every
snapshot that differs from its node's files is committed, kept reachable from the session's ref
and recorded as a ``custom`` entry.

A restore first snapshots the working tree and binds it to the leaf being left (going back
there brings that work back: this is also redo), then writes only the paths that differ between
that snapshot and the target's, deleting only files the current snapshot holds.
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pi_tui.checkpoints import binding as B
from pi_tui.checkpoints.background_fill import DEFAULT_FIRST_TIMEOUT_MS, BackgroundFill
from pi_tui.checkpoints.git_store import (
    Changes,
    CheckpointError,
    GitStore,
    SnapshotTimeout,
    TreeSnapshot,
)
from pi_tui.checkpoints.in_the_way import CHANGED_WHY, KEPT_WHY, in_the_way, kept_note
from pi_tui.checkpoints.prune import DEFAULT_WARN_STORE_BYTES, PENDING_REFS, ref_safe, size_warning
from pi_tui.core.cancellable_thread import run_in_thread
from pi_tui.core.session.manager import SessionManager

READ_ONLY_TOOLS = frozenset({"read", "grep", "find", "ls"})
LIST_LIMIT = 50
SIZE_CHECK_EVERY = 50
"""The store's size is looked at on a session's first snapshot and then every this many."""
Emit = Callable[[dict[str, Any]], None]


@dataclass(slots=True)
class _Pending:
    """The session's first snapshot, not yet written (nothing has differed from it yet)."""

    session_id: str
    snapshot: TreeSnapshot


@dataclass(frozen=True, slots=True)
class RestorePlan:
    """What a restore to ``node`` would do, worked out before anything is written."""

    node: str | None
    target_tree: str | None
    target_commit: str | None
    current_tree: str | None
    changes: Changes = field(default_factory=Changes)
    edited: Changes = field(default_factory=Changes)
    """Files that differ between the leaf's last snapshot and the working tree (the user, or
    another session, changed them since): a restore keeps them in the snapshot of the leaf left."""
    problem: str | None = None
    kept: tuple[str, ...] = ()
    """Paths the restore leaves as they are (``in_the_way``): named in ``skipped``, not written."""
    snapshot_skipped: tuple[str, ...] = ()
    """What the snapshot taken first left out (``name (why)``): a restore leaves those alone too."""
    left_node: str | None = None
    session_id: str | None = None
    """The node being left and its session: where a change found just before writing is bound."""

    def preview(self) -> dict[str, Any]:
        return self.result(self.changes, self.kept)

    def result(self, done: Changes, kept: tuple[str, ...], changed_since: tuple[str, ...] = ()) -> dict[str, Any]:
        left, since = set(kept), set(changed_since)
        files = Changes(*(tuple(p for p in paths if p not in left) for paths in (done.changed, done.created, done.deleted)))
        skipped = [kept_note(p, CHANGED_WHY if p in since else KEPT_WHY) for p in kept]
        skipped += [s for s in self.snapshot_skipped if not any(s.startswith(f"{p} (") for p in kept)]
        out: dict[str, Any] = {**files.as_dict(), "skipped": skipped, "editedSinceSnapshot": self.edited.as_dict()}
        if self.problem:
            out["problem"] = self.problem
        return out


@dataclass(slots=True)
class Checkpoints:
    store: GitStore | None
    current: Callable[[], SessionManager]
    emit: Emit
    timeout_ms: int = 5000
    off_reason: str | None = None
    first_timeout_ms: int = DEFAULT_FIRST_TIMEOUT_MS
    warn_store_bytes: int = DEFAULT_WARN_STORE_BYTES
    fill: BackgroundFill = field(default_factory=BackgroundFill)
    _pending: _Pending | None = None
    _commits: int = 0
    _told_size: bool = False
    _dirty: bool = False
    _told_off: bool = False
    redo_stack: list[str | None] = field(default_factory=list)
    _seen: B.SnapshotSeen = field(default_factory=B.SnapshotSeen)

    @property
    def enabled(self) -> bool:
        return self.store is not None and self.off_reason is None

    # ------------------------------------------------------------------ the session's calls

    async def on_start(self, reason: str = "startup") -> None:
        """Start and resume: a session that already has snapshots gets one now, so the user's
        edits between sessions are captured (a session without any waits for its first change).
        A fork's new file names the snapshots it copied: they are kept under its own ref, so
        deleting the session it came from frees none of them."""
        self._drop_pending()
        self._dirty = False
        self.redo_stack.clear()
        self._tell_off_once()
        if self.enabled and self._has_snapshots():
            if reason == "fork":
                await self._keep([b.commit for b in B.bindings(self.current().custom_entries()) if b.commit])
            await self.snapshot("start")

    async def before_prompt(self) -> None:
        self.redo_stack.clear()
        if self.enabled and (self._has_snapshots() or self._pending_here()):
            await self.snapshot("prompt")

    async def before_change(self) -> None:
        """A tool that can change files (or a ``!cmd``) is about to run."""
        self._dirty = True
        if not self.enabled or self._has_snapshots() or self._pending_here():
            return
        await self._take_base()

    async def after_change(self, reason: str) -> None:
        if self._dirty and self.enabled:
            self._dirty = False
            await self.snapshot(reason)

    # ------------------------------------------------------------------ snapshots

    def _deadline(self) -> float:
        return time.monotonic() + max(self.timeout_ms, 1) / 1000

    async def _tree(self, reason: str) -> TreeSnapshot | None:
        assert self.store is not None
        started = time.monotonic()
        if self.fill.running:
            self._skip(reason, 0, "the project's first snapshot is still being written in the background "
                                  f"({self.fill.left} new files were left)")
            return None
        try:
            snap = await run_in_thread(self.store.snapshot, self._deadline())
        except SnapshotTimeout as err:
            why = f"took longer than checkpoints.timeoutMs ({self.timeout_ms} ms): {err}"
            if err.left and self.fill.start(self.store, self.first_timeout_ms, err.left, self._filled):
                why += (f"; the rest goes on in the background (up to checkpoints.firstSnapshotTimeoutMs, "
                        f"{self.first_timeout_ms} ms)")
            self._skip(reason, int((time.monotonic() - started) * 1000), why)
            return None
        except (CheckpointError, OSError) as err:  # OSError: no space, a read-only or broken agent dir
            self.emit({"type": "checkpoint", "action": "failed", "reason": reason, "message": str(err)})
            return None
        for note in snap.notes:
            self.emit({"type": "notify", "message": f"Checkpoints: {note}", "level": "info"})
        return snap

    def _skip(self, reason: str, ms: int, why: str) -> None:
        self.emit({"type": "checkpoint", "action": "skipped", "reason": reason, "ms": ms, "message": why})
        sm = self.current()
        sm.append_custom_entry(B.CUSTOM_TYPE, B.skipped_data(bound_to=self._node(sm), reason=reason, why=why, ms=ms))

    def _filled(self, problem: str | None, ms: int) -> None:
        if problem is None:
            self.emit({"type": "checkpoint", "action": "filled", "ms": ms, "files": self.fill.left,
                       "message": "the project's first snapshot was finished in the background"})
        else:
            self.emit({"type": "checkpoint", "action": "failed", "reason": "background", "message":
                       f"the project's first snapshot could not be finished in the background: {problem}"})

    async def _take_base(self) -> None:
        snap = await self._tree("base")
        if snap is None:
            return
        # Committed only when written (most sessions never need it); until then a ref to the tree
        # keeps a gc of the store (another session deleted) from dropping it.
        session_id = self.current().session_id
        self._pending = _Pending(session_id, snap)
        store = self.store
        assert store is not None
        try:
            await run_in_thread(store.set_ref, f"{PENDING_REFS}/{ref_safe(session_id)}", snap.tree, self._deadline())
        except (CheckpointError, OSError):
            pass  # only the gc's grace protects it then

    def _drop_pending(self) -> None:
        pending, self._pending = self._pending, None
        if pending is not None and self.store is not None:
            (self.store.store / PENDING_REFS / ref_safe(pending.session_id)).unlink(missing_ok=True)

    def _ref(self) -> str:
        return f"refs/pi-tui/sessions/{ref_safe(self.current().session_id)}"

    async def _keep(self, commits: list[str]) -> None:
        """Keep ``commits`` (those still in the store) reachable from this session's ref."""
        store, ref = self.store, self._ref()
        if store is None or not commits:
            return
        try:
            await run_in_thread(store.keep_present, ref, commits, self._deadline())
        except (CheckpointError, OSError) as err:
            self.emit({"type": "checkpoint", "action": "failed", "reason": "keep", "message": str(err)})

    async def _commit(self, tree: str, parent: str | None, reason: str) -> str | None:
        assert self.store is not None
        store = self.store
        ref = self._ref()

        def work() -> str:
            deadline = self._deadline()
            commit = store.commit(tree, [parent] if parent else [], f"pi-tui checkpoint ({reason})", deadline)
            store.keep(ref, commit, deadline)
            return commit

        try:
            return await run_in_thread(work)
        except (CheckpointError, OSError) as err:
            self.emit({"type": "checkpoint", "action": "failed", "reason": reason, "message": str(err)})
            return None

    async def snapshot(self, reason: str) -> B.Binding | None:
        """Snapshot the working tree and bind it to the leaf's node unless
        that node's files are exactly this tree already. Returns the node's binding afterwards."""
        if not self.enabled:
            return None
        snap = await self._tree(reason)
        if snap is None:
            return None
        sm = self.current()
        return await self._bind(sm, snap, self._node(sm), reason)

    async def _bind(self, sm: SessionManager, snap: TreeSnapshot, node: str | None, reason: str) -> B.Binding | None:
        by_id, latest = self._index(sm)
        known = B.effective(by_id, latest, node)
        if known is not None and known.tree == snap.tree:
            return known
        if known is None and self._pending_here():
            assert self._pending is not None
            if self._pending.snapshot.tree == snap.tree:
                return None
            known = await self._write_pending(sm)
            if known is None:
                return None
        assert self.store is not None
        commit = await self._commit(snap.tree, known.commit if known else None, reason)
        if commit is None:
            return known
        changes = await self._diff(known.tree if known else None, snap.tree)
        data = B.entry_data(
            commit=commit, tree=snap.tree, bound_to=node, reason=reason, ms=snap.ms,
            changes=changes.as_dict(LIST_LIMIT) if changes is not None else None,
            counts=_counts(changes) if changes is not None else None, skipped=snap.skipped,
        )
        entry_id = sm.append_custom_entry(B.CUSTOM_TYPE, data)
        self.emit({"type": "checkpoint", "action": "snapshot", "reason": reason, "ms": snap.ms,
                   "files": changes.count if changes is not None else None, "entryId": node,
                   "skipped": list(snap.skipped[:10])})
        await self._check_size()
        return B.Binding(entry_id, node, commit, snap.tree, reason, data)

    async def _write_pending(self, sm: SessionManager) -> B.Binding | None:
        assert self._pending is not None
        pending = self._pending
        commit = await self._commit(pending.snapshot.tree, None, "base")
        if commit is None:
            return None
        self._drop_pending()
        data = B.entry_data(commit=commit, tree=pending.snapshot.tree, bound_to=None, reason="base",
                            ms=pending.snapshot.ms, changes=None, counts=None, skipped=pending.snapshot.skipped)
        entry_id = sm.append_custom_entry(B.CUSTOM_TYPE, data)
        return B.Binding(entry_id, None, commit, pending.snapshot.tree, "base", data)

    async def _diff(self, old: str | None, new: str) -> Changes | None:
        if old is None or self.store is None:
            return None
        store = self.store
        try:
            return await run_in_thread(lambda: store.diff(old, new, self._deadline()))
        except CheckpointError:
            return None

    async def _check_size(self) -> None:
        """Once per session, a warning when the store is past ``checkpoints.warnStoreBytes``."""
        self._commits += 1
        if self._told_size or self.store is None or (self._commits - 1) % SIZE_CHECK_EVERY:
            return
        folder, limit = self.store.store, self.warn_store_bytes
        line = await run_in_thread(size_warning, folder, limit)
        if line is not None:
            self._told_size = True
            self.emit({"type": "notify", "message": line, "level": "warning"})

    # ------------------------------------------------------------------ restore

    async def plan_restore(self, node: str | None) -> RestorePlan:
        """Snapshot now (bound to the leaf being left) and work out what restoring ``node`` does."""
        if not self.enabled:
            return RestorePlan(node, None, None, None, problem=self.off_reason or "checkpoints are off")
        sm = self.current()
        leaf_node = self._node(sm)
        by_id, latest = self._index(sm)
        leaf_files = B.effective(by_id, latest, leaf_node)
        if leaf_files is None and self._pending_here():
            assert self._pending is not None
            leaf_files = B.Binding("", None, None, self._pending.snapshot.tree, "base", {})
        # The target is looked up before the current files are bound: when it is the leaf's own
        # node, its recorded files are what comes back (the current ones stay recorded too).
        target = B.effective(by_id, latest, node)
        snap = await self._tree("restore")
        if snap is None:
            return RestorePlan(node, None, None, None, problem="the working tree could not be snapshotted first")
        leaf = sm.leaf_id
        had_pending = self._pending_here()
        await self._bind(sm, snap, leaf_node, "restore")
        if leaf is not None and sm.leaf_id != leaf:
            sm.branch(leaf)  # the move that follows starts from the leaf the user is on, not our entry
        if target is None and had_pending:  # the session's first snapshot, written just now or still held
            target = B.latest_by_node(sm.custom_entries()).get(B.ROOT)
            if target is None and self._pending_here():
                assert self._pending is not None
                target = B.Binding("", None, None, self._pending.snapshot.tree, "base", {})
        if target is None:
            return RestorePlan(node, None, None, snap.tree, problem="no file snapshot for that point")
        assert self.store is not None and target.tree is not None
        store, target_tree = self.store, target.tree
        present = await run_in_thread(lambda: store.tree_exists(target_tree, self._deadline()))
        if not present:
            return RestorePlan(node, target_tree, target.commit, snap.tree, problem=(
                f"snapshot {target.commit} is missing from the store {store.store}: files left as they are"))
        changes = await self._diff(snap.tree, target_tree) or Changes()
        edited = Changes()
        if leaf_files is not None and leaf_files.tree:
            edited = await self._diff(leaf_files.tree, snap.tree) or Changes()
        kept = in_the_way(store.work_tree, changes.created, changes.changed, changes.deleted)
        return RestorePlan(node, target_tree, target.commit, snap.tree, changes, edited, kept=kept,
                           snapshot_skipped=snap.skipped, left_node=leaf_node, session_id=sm.session_id)

    async def _recheck(self, plan: RestorePlan) -> tuple[RestorePlan, tuple[str, ...]]:
        """Just before writing, the files again (a stat pass): the user may have edited one while a
        branch summary was written. In the plan's session the new snapshot is bound to the node
        left (going back there brings the edit back) and the restore goes from it; in another
        session (a fork's new file, where that node is not) the paths changed since are left."""
        assert plan.current_tree is not None and plan.target_tree is not None
        snap = await self._tree("restore")
        if snap is None or snap.tree == plan.current_tree:
            return plan, ()
        sm = self.current()
        if sm.session_id != plan.session_id:
            since = await self._diff(plan.current_tree, snap.tree) or Changes()
            return plan, (*since.changed, *since.created, *since.deleted)
        leaf = sm.leaf_id
        await self._bind(sm, snap, plan.left_node, "restore")
        if leaf is not None and sm.leaf_id != leaf:
            sm.branch(leaf)
        changes = await self._diff(snap.tree, plan.target_tree) or Changes()
        return dataclasses.replace(plan, current_tree=snap.tree, changes=changes, snapshot_skipped=snap.skipped), ()

    async def apply(self, plan: RestorePlan) -> dict[str, Any]:
        """Write ``plan``'s target files; then bind them to the new leaf (a fork's new file)."""
        if plan.problem or plan.target_tree is None or plan.current_tree is None or self.store is None:
            return {**plan.preview(), "restored": False}
        plan, leave = await self._recheck(plan)
        store, target = self.store, plan.target_tree
        current = plan.current_tree
        assert target is not None and current is not None
        started = time.monotonic()
        try:
            done = await run_in_thread(lambda: store.restore(current, target, self._deadline() + 25, leave))
        except (CheckpointError, OSError) as err:
            self.emit({"type": "checkpoint", "action": "failed", "reason": "restore", "message": str(err)})
            return {**plan.preview(), "restored": False, "problem": str(err)}
        ms = int((time.monotonic() - started) * 1000)
        self.emit({"type": "checkpoint", "action": "restore", "ms": ms, "files": done.count, "counts": _counts(done),
                   **done.as_dict(10), **({"kept": list(done.kept[:10])} if done.kept else {})})
        sm = self.current()
        by_id, latest = self._index(sm)
        node = self._node(sm)
        known = B.effective(by_id, latest, node)
        if done.kept:  # the files are not the target's: the new node gets what is there
            snap = await self._tree("restored")
            if snap is not None:
                await self._bind(sm, snap, node, "restored")
        elif plan.target_commit and (known is None or known.tree != target):
            data = B.entry_data(commit=plan.target_commit, tree=target, bound_to=node, reason="restored", ms=ms,
                                changes=None, counts=None)
            sm.append_custom_entry(B.CUSTOM_TYPE, data)
            await self._keep([plan.target_commit])  # a fork's new file names it now
        return {**plan.result(done, done.kept, leave), "restored": True}

    # ------------------------------------------------------------------ views

    def changes_by_node(self) -> list[dict[str, Any]]:
        """Every node that changed files, in file order: ``{entryId, reason, counts, files}``."""
        out: list[dict[str, Any]] = []
        for found in B.bindings(self.current().custom_entries()):
            counts = found.data.get("counts")
            if isinstance(counts, dict) and any(counts.values()):
                out.append({"entryId": found.bound_to, "reason": found.reason, "commit": found.commit,
                            "counts": counts, "files": found.data.get("files")})
            elif not found.usable:
                out.append({"entryId": found.bound_to, "reason": found.reason,
                            "skipped": found.data.get("skippedBecause")})
        return out

    # ------------------------------------------------------------------ helpers

    def _index(self, sm: SessionManager) -> tuple[Mapping[str, Any], dict[str, B.Binding]]:
        return sm.entries_by_id(), B.latest_by_node(sm.custom_entries())

    def _node(self, sm: SessionManager) -> str | None:
        return B.node_of(sm.entries_by_id(), sm.leaf_id)

    def has_snapshots(self) -> bool:
        """Whether this session has any file snapshot (recorded, or its first one held back)."""
        return self._has_snapshots() or self._pending_here()

    def _has_snapshots(self) -> bool:
        manager = self.current()
        return self._seen.any_usable((id(manager), manager.session_id), manager.custom_entries())

    def _pending_here(self) -> bool:
        return self._pending is not None and self._pending.session_id == self.current().session_id

    def _tell_off_once(self) -> None:
        if self.off_reason and not self._told_off:
            self._told_off = True
            self.emit({"type": "notify", "message": f"Checkpoints are off: {self.off_reason}", "level": "warning"})


def _counts(changes: Changes) -> dict[str, int]:
    return {"changed": len(changes.changed), "created": len(changes.created), "deleted": len(changes.deleted)}


def refuse_reason(cwd: Path, home: Path | None = None) -> str | None:
    """Why ``cwd`` is not snapshotted at all (None: it is)."""
    real = Path(os.path.realpath(cwd))
    if real == Path(real.anchor):
        return f"the working folder is the file system root ({real}); nothing is snapshotted there"
    home_dir = Path(os.path.realpath(home if home is not None else Path.home()))
    if real == home_dir:
        return f"the working folder is your home folder ({real}); nothing is snapshotted there"
    return None


