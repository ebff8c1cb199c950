"""The entry tree: index, paths, labels and ``get_tree`` (pi-behaviour.md §1.6, §13.1).

Everything here is iterative: a 100,000-entry linear session is a 100,000-deep tree.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from pi_tui.core.session.entries import Entry


@dataclass(slots=True)
class TreeNode:
    entry: Entry
    children: list[TreeNode] = field(default_factory=list)
    label: str | None = None
    label_timestamp: str | None = None
    """Timestamp of the label entry that set the current label (pi 0.73.1 ``labelTimestamp``)."""


def index_entries(entries: Iterable[Entry]) -> dict[str, Entry]:
    """id → entry for tree entries (entries without a string id are kept but not indexed)."""
    return {entry["id"]: entry for entry in entries if isinstance(entry.get("id"), str)}


def path_to(by_id: dict[str, Entry], leaf_id: str | None) -> list[Entry]:
    """Root → leaf following ``parentId``; a broken or cyclic chain simply ends the path."""
    path: list[Entry] = []
    seen: set[str] = set()
    current = by_id.get(leaf_id) if leaf_id is not None else None
    while current is not None:
        entry_id = current["id"]
        if entry_id in seen:
            break
        seen.add(entry_id)
        path.append(current)
        parent = current.get("parentId")
        current = by_id.get(parent) if isinstance(parent, str) else None
    path.reverse()
    return path


def latest_on_path(by_id: dict[str, Entry], leaf_id: str | None, entry_type: str) -> Entry | None:
    """The entry of ``entry_type`` nearest the leaf on its path, walking up only as far as it
    (``path_to`` builds the whole path: 100,000 entries to learn the last thinking level)."""
    seen: set[str] = set()
    current = by_id.get(leaf_id) if leaf_id is not None else None
    while current is not None:
        if current.get("type") == entry_type:
            return current
        entry_id = current["id"]
        if entry_id in seen:
            return None
        seen.add(entry_id)
        parent = current.get("parentId")
        current = by_id.get(parent) if isinstance(parent, str) else None
    return None


@dataclass(slots=True)
class LabelState:
    labels: dict[str, str] = field(default_factory=dict)
    timestamps: dict[str, str] = field(default_factory=dict)

    def apply(self, entry: Entry) -> None:
        """Replay one label entry: the last one wins, an empty or missing label clears."""
        target = entry.get("targetId")
        if not isinstance(target, str):
            return
        label = entry.get("label")
        if isinstance(label, str) and label:
            self.labels[target] = label
            self.timestamps[target] = entry.get("timestamp", "")
        else:
            self.labels.pop(target, None)
            self.timestamps.pop(target, None)


def replay_labels(entries: Iterable[Entry]) -> LabelState:
    state = LabelState()
    for entry in entries:
        if entry.get("type") == "label":
            state.apply(entry)
    return state


def _is_root(entry: Entry, by_id: dict[str, Entry]) -> bool:
    parent = entry.get("parentId")
    return parent is None or parent == entry.get("id") or parent not in by_id


def build_tree(entries: list[Entry], labels: LabelState) -> list[TreeNode]:
    """Root nodes; children sorted by timestamp, oldest first (stable for equal stamps)."""
    by_id = index_entries(entries)
    nodes: dict[str, TreeNode] = {}
    ordered: list[tuple[Entry, TreeNode]] = []
    for entry in entries:
        node = TreeNode(entry)
        entry_id = entry.get("id")
        if isinstance(entry_id, str):
            node.label = labels.labels.get(entry_id)
            node.label_timestamp = labels.timestamps.get(entry_id) if node.label else None
            nodes[entry_id] = node
        ordered.append((entry, node))
    roots: list[TreeNode] = []
    for entry, node in ordered:
        if _is_root(entry, by_id):
            roots.append(node)
        else:
            nodes[entry["parentId"]].children.append(node)
    for node in nodes.values():
        if len(node.children) > 1:
            node.children.sort(key=lambda child: str(child.entry.get("timestamp", "")))
    return roots


def children_of(entries: list[Entry], entry_id: str) -> list[Entry]:
    return [entry for entry in entries if entry.get("parentId") == entry_id and entry.get("id") != entry_id]
