"""Snapshots in the session file: pi ``custom`` entries of pi-tui's own type.

Each entry's ``data`` names the snapshot (``commit``, ``tree``) and the entry it belongs to
(``entryId``; null = the root, i.e. before the first entry). The entry's own place in the tree
does not matter — pi's ``appendCustomEntry`` makes it a child of whatever the leaf is — only the
binding does. A node's files are the *latest* snapshot (in file order) bound to it or, if none,
to its nearest ancestor; the root's binding covers every node above which nothing is bound.
pi ignores the entries (its ``/tree`` hides custom entries, and they never reach the model).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

CUSTOM_TYPE = "pi-tui.checkpoint"
ROOT = ""
"""The key the root binding (``entryId`` null) is kept under."""


@dataclass(frozen=True, slots=True)
class Binding:
    entry_id: str
    """The custom entry's own id."""
    bound_to: str | None
    commit: str | None
    tree: str | None
    reason: str
    data: Mapping[str, Any]

    @property
    def usable(self) -> bool:
        return bool(self.commit and self.tree)


def is_checkpoint(entry: Mapping[str, Any]) -> bool:
    return entry.get("type") == "custom" and entry.get("customType") == CUSTOM_TYPE


def bindings(entries: Iterable[Mapping[str, Any]]) -> list[Binding]:
    """Every checkpoint entry of the file, in file order (malformed ones are ignored)."""
    found: list[Binding] = []
    for entry in entries:
        if not is_checkpoint(entry):
            continue
        data = entry.get("data")
        if not isinstance(data, dict):
            continue
        bound = data.get("entryId")
        commit, tree = data.get("commit"), data.get("tree")
        found.append(Binding(
            entry_id=str(entry.get("id")), bound_to=bound if isinstance(bound, str) else None,
            commit=commit if isinstance(commit, str) else None, tree=tree if isinstance(tree, str) else None,
            reason=str(data.get("reason", "")), data=data,
        ))
    return found


def latest_by_node(entries: Iterable[Mapping[str, Any]]) -> dict[str, Binding]:
    latest: dict[str, Binding] = {}
    for binding in bindings(entries):
        if binding.usable:
            latest[binding.bound_to or ROOT] = binding
    return latest


def node_of(by_id: Mapping[str, Mapping[str, Any]], entry_id: str | None) -> str | None:
    """The node ``entry_id`` stands for: itself, or — for one of our own checkpoint entries,
    which are bookkeeping, not conversation — the nearest ancestor that is not one."""
    current = entry_id
    while current is not None:
        entry = by_id.get(current)
        if entry is None or not is_checkpoint(entry):
            return current
        parent = entry.get("parentId")
        current = parent if isinstance(parent, str) else None
    return None


def effective(by_id: Mapping[str, Mapping[str, Any]], latest: Mapping[str, Binding], node: str | None) -> Binding | None:
    """The files of ``node``: the latest snapshot bound to it or to its nearest ancestor."""
    current = node
    seen: set[str] = set()
    while current is not None and current not in seen:
        seen.add(current)
        if current in latest:
            return latest[current]
        entry = by_id.get(current)
        parent = entry.get("parentId") if entry is not None else None
        current = parent if isinstance(parent, str) else None
    return latest.get(ROOT)


def entry_data(*, commit: str, tree: str, bound_to: str | None, reason: str, ms: int,
               changes: Mapping[str, list[str]] | None, counts: Mapping[str, int] | None,
               skipped: Iterable[str] = ()) -> dict[str, Any]:
    data: dict[str, Any] = {"v": 1, "commit": commit, "tree": tree, "entryId": bound_to, "reason": reason, "ms": ms}
    if changes is not None:
        data["files"] = dict(changes)
    if counts is not None:
        data["counts"] = dict(counts)
    skipped = list(skipped)
    if skipped:
        data["skipped"] = skipped[:50]
    return data


def skipped_data(*, bound_to: str | None, reason: str, why: str, ms: int) -> dict[str, Any]:
    return {"v": 1, "commit": None, "tree": None, "entryId": bound_to, "reason": reason, "ms": ms, "skippedBecause": why}


@dataclass(slots=True)
class SnapshotSeen:
    """Whether a session's custom entries (``SessionManager.custom_entries``) hold a usable
    checkpoint, read incrementally: the question is asked before every prompt and every tool that
    can change files. Entries are only ever appended, so once a checkpoint is
    seen it stays seen and otherwise only the entries after the last look are read; another
    session (or a list that shrank: a reload) starts again from the top."""

    session: object = None
    looked_at: int = 0
    found: bool = False

    def any_usable(self, session: object, entries: Sequence[Mapping[str, Any]]) -> bool:
        if session != self.session or len(entries) < self.looked_at:
            self.session, self.looked_at, self.found = session, 0, False
        if not self.found and self.looked_at < len(entries):
            fresh = entries[self.looked_at:]  # (islice would step through the old ones to skip them)
            self.found = any(binding.usable for binding in bindings(fresh))
            self.looked_at = len(entries)
        return self.found

