"""The /tree navigator's rows: session tree → filtered, searched, folded ASCII rows (§8.4).

Pure data, no Textual: the screen renders these rows and keeps the cursor. Everything here is
iterative (no recursion), because a long linear session is a chain thousands of entries deep.

Layout rules:

* a chain of single children continues at the same indentation;
* the children of a branch point get a connector (``├─`` / ``└─``) and their subtree is indented
  under a ``│`` rail (or blanks for the last child);
* the child that lies on the active path (root → current leaf) is listed first;
* a branch child with descendants is foldable (``⊟``; ``⊞`` once folded).

Entries hidden by the filter or the search do not cut the tree: their visible descendants hang
from the nearest visible ancestor.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeAlias

from pi_tui.modes.interactive.screens.tree_text import (
    RowKind,
    describe_entry,
)

TreeFilter: TypeAlias = Literal["default", "no-tools", "user-only", "labeled-only", "all"]
TREE_FILTERS: tuple[TreeFilter, ...] = ("default", "no-tools", "user-only", "labeled-only", "all")
"""In the order ctrl+o cycles through them."""



_HIDDEN_BY_DEFAULT = frozenset({"label", "custom", "model_change", "thinking_level_change"})

_CALL_SEARCH_DEPTH = 64
"""How far up a tool result looks for the assistant message that called it."""

FOLD_OPEN = "⊟"
FOLD_CLOSED = "⊞"


class TreeNode(Protocol):
    """A node of ``SessionManager.get_tree()`` (``core/session/tree.py``'s ``TreeNode`` fits)."""

    @property
    def entry(self) -> Mapping[str, Any]: ...

    @property
    def children(self) -> Sequence[TreeNode]: ...

    @property
    def label(self) -> str | None: ...


def _id(node: TreeNode) -> str:
    return str(node.entry["id"])


@dataclass(slots=True, kw_only=True)
class TreeRow:
    """One visible line of the navigator."""

    entry_id: str
    prefix: str
    """Rails and connector drawn before the text (``│   ├─⊟ ``)."""
    text: str
    kind: RowKind
    label: str | None
    on_active_path: bool
    is_leaf: bool
    foldable: bool
    folded: bool
    segment_start: bool
    """A root or a child of a branch point: where ctrl+←/→ jump to."""
    is_position: bool = False
    """Marked ``← active``: the leaf, or its nearest shown ancestor when the leaf is filtered out."""


@dataclass(slots=True)
class _Visible:
    node: TreeNode
    text: str
    kind: RowKind
    children: list[_Visible] = field(default_factory=list)


@dataclass(frozen=True, slots=True, kw_only=True)
class TreeView:
    """The inputs of one rendering; change any of them and rebuild the rows."""

    filter: TreeFilter = "default"
    search: str = ""
    folded: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class _NodeFacts:
    """What filtering and searching need of one node, computed once per tree."""

    text: str
    kind: RowKind
    haystack: str
    entry_type: str
    is_user: bool
    tool_call_only: bool


class TreeIndex:
    """A session tree prepared once for one leaf: pre-order, parent links and per-node facts.

    The pre-order lists the child on the active path first. Filter, search and fold changes then
    only re-run the linear pass of ``build_rows``.
    """

    def __init__(self, roots: Sequence[TreeNode], leaf_id: str | None) -> None:
        self.leaf_id = leaf_id
        parent_of: dict[str, str | None] = {}
        stack: list[tuple[TreeNode, str | None]] = [(root, None) for root in roots]
        while stack:
            node, parent = stack.pop()
            entry_id = _id(node)
            parent_of[entry_id] = parent
            stack.extend((child, entry_id) for child in node.children)
        self.parent_of = parent_of
        self.active = self.active_path(leaf_id)
        self.nodes: list[TreeNode] = []
        self.ids: list[str] = []
        self.parents: list[int] = []
        """Position of each node's parent in the pre-order (-1 for roots)."""
        walk: list[tuple[TreeNode, int]] = [(root, -1) for root in reversed(_ordered(roots, self.active))]
        while walk:
            node, parent_pos = walk.pop()
            position = len(self.nodes)
            self.nodes.append(node)
            self.ids.append(_id(node))
            self.parents.append(parent_pos)
            children = node.children
            if len(children) == 1:
                walk.append((children[0], position))
            elif children:
                walk.extend((child, position) for child in reversed(_ordered(children, self.active)))
        changed = _files_changed_at(self.nodes)
        self.facts = [_facts_of(node, self._calls_above(position), changed.get(self.ids[position]))
                      for position, node in enumerate(self.nodes)]

    def _calls_above(self, position: int) -> Mapping[str, Mapping[str, Any]]:
        """The tool calls of the nearest assistant above a tool result (ids repeat across turns)."""
        entry = self.nodes[position].entry
        message = entry.get("message")
        if not isinstance(message, dict) or message.get("role") != "toolResult":
            return {}
        current = self.parents[position]
        for _ in range(_CALL_SEARCH_DEPTH):
            if current < 0:
                break
            calls = _tool_calls_of(self.nodes[current])
            if str(message.get("toolCallId")) in calls:
                return calls
            current = self.parents[current]
        return {}

    def active_path(self, leaf_id: str | None) -> frozenset[str]:
        """Ids on the path root → leaf."""
        path: set[str] = set()
        current = leaf_id if leaf_id in self.parent_of else None
        while current is not None and current not in path:
            path.add(current)
            current = self.parent_of.get(current)
        return frozenset(path)


def _files_changed_at(nodes: Sequence[TreeNode]) -> dict[str, int]:
    """How many files each node's file snapshots changed (docs/checkpoints.md), by node id."""
    from pi_tui.checkpoints.binding import CUSTOM_TYPE

    changed: dict[str, int] = {}
    for node in nodes:
        entry = node.entry
        if entry.get("type") != "custom" or entry.get("customType") != CUSTOM_TYPE:
            continue
        data = entry.get("data")
        counts = data.get("counts") if isinstance(data, dict) else None
        bound = data.get("entryId") if isinstance(data, dict) else None
        if isinstance(counts, dict) and isinstance(bound, str):
            total = sum(v for v in counts.values() if isinstance(v, int))
            if total:
                changed[bound] = changed.get(bound, 0) + total
    return changed


def _facts_of(node: TreeNode, tool_calls: Mapping[str, Mapping[str, Any]], files_changed: int | None = None) -> _NodeFacts:
    entry = node.entry
    text, kind = describe_entry(entry, tool_calls)
    if files_changed:
        text = f"{text}  ✎ {files_changed} file{'s' if files_changed != 1 else ''}"
    message = entry.get("message")
    role = message.get("role") if isinstance(message, dict) else None
    return _NodeFacts(
        text=text,
        kind=kind,
        haystack=f"{node.label or ''} {text}".lower(),
        entry_type=str(entry.get("type")),
        is_user=entry.get("type") == "message" and role == "user",
        tool_call_only=_is_tool_call_only_assistant(entry),
    )


def build_rows(tree: TreeIndex | Sequence[TreeNode], *, leaf_id: str | None, view: TreeView) -> list[TreeRow]:
    """The rows to show for ``tree`` under ``view`` (filter, search tokens, folded ids)."""
    index = tree if isinstance(tree, TreeIndex) else TreeIndex(tree, leaf_id)
    if index.leaf_id != leaf_id:
        raise ValueError(f"the tree index was built for leaf {index.leaf_id!r}, not {leaf_id!r}")
    tokens = view.search.lower().split()
    forest = _visible_forest(index, view=view, tokens=tokens)
    rows = _layout(forest, active=index.active, leaf_id=leaf_id, folded=view.folded)
    position = next((i for i, row in enumerate(rows) if row.is_leaf), None)
    if position is None:
        position = next((i for i in range(len(rows) - 1, -1, -1) if rows[i].on_active_path), None)
    if position is not None:
        rows[position].is_position = True
    return rows


def _tool_calls_of(node: TreeNode) -> dict[str, Mapping[str, Any]]:
    message = node.entry.get("message") if node.entry.get("type") == "message" else None
    if not isinstance(message, dict) or message.get("role") != "assistant":
        return {}
    return {
        str(block.get("id")): block
        for block in message.get("content") or []
        if isinstance(block, dict) and block.get("type") == "toolCall"
    }


def _visible_forest(index: TreeIndex, *, view: TreeView, tokens: list[str]) -> list[_Visible]:
    """One linear pass over the pre-order; hidden nodes pass their visible ancestor down."""
    forest: list[_Visible] = []
    tree_filter = view.filter
    leaf_id = index.leaf_id
    carriers: list[_Visible | None] = []
    for node, entry_id, parent_pos, fact in zip(index.nodes, index.ids, index.parents, index.facts, strict=True):
        carrier = carriers[parent_pos] if parent_pos >= 0 else None
        if _passes_filter(node, fact, tree_filter, is_leaf=entry_id == leaf_id) and (
            not tokens or all(token in fact.haystack for token in tokens)
        ):
            item = _Visible(node=node, text=fact.text, kind=fact.kind)
            (carrier.children if carrier is not None else forest).append(item)
            carrier = item
        carriers.append(carrier)
    return forest


def _ordered(nodes: Sequence[TreeNode], active: frozenset[str]) -> list[TreeNode]:
    return sorted(nodes, key=lambda node: _id(node) not in active)


def _passes_filter(node: TreeNode, fact: _NodeFacts, tree_filter: TreeFilter, *, is_leaf: bool) -> bool:
    if tree_filter == "all":
        return True
    if tree_filter == "labeled-only":
        return node.label is not None
    if tree_filter == "user-only":
        return fact.is_user
    if fact.entry_type in _HIDDEN_BY_DEFAULT:
        return False
    if fact.tool_call_only and not is_leaf:
        return False
    return not (tree_filter == "no-tools" and fact.kind == "tool")


def _is_tool_call_only_assistant(entry: Mapping[str, Any]) -> bool:
    message = entry.get("message")
    if entry.get("type") != "message" or not isinstance(message, dict) or message.get("role") != "assistant":
        return False
    if message.get("stopReason") in ("error", "aborted"):
        return False
    blocks = [b for b in message.get("content") or [] if isinstance(b, dict)]
    has_call = any(b.get("type") == "toolCall" for b in blocks)
    has_text = any(b.get("type") == "text" and str(b.get("text", "")).strip() for b in blocks)
    return has_call and not has_text


def _layout(
    forest: list[_Visible], *, active: frozenset[str], leaf_id: str | None, folded: frozenset[str]
) -> list[TreeRow]:
    rows: list[TreeRow] = []
    # (item, rail prefix for its own line, rail prefix for its descendants, connector, segment start)
    stack: list[tuple[_Visible, str, str, str, bool]] = []
    roots_are_branches = len(forest) > 1
    for index in range(len(forest) - 1, -1, -1):
        last = index == len(forest) - 1
        connector = ("└─" if last else "├─") if roots_are_branches else ""
        rail = ("    " if last else "│   ") if roots_are_branches else ""
        stack.append((forest[index], "", rail, connector, True))
    while stack:
        item, own_prefix, child_prefix, connector, segment_start = stack.pop()
        entry_id = _id(item.node)
        foldable = bool(connector) and bool(item.children)
        is_folded = foldable and entry_id in folded
        glyph = (FOLD_CLOSED if is_folded else FOLD_OPEN) if foldable else ("─" if connector else "")
        rows.append(
            TreeRow(
                entry_id=entry_id,
                prefix=f"{own_prefix}{connector}{glyph}{' ' if connector else ''}",
                text=item.text,
                kind=item.kind,
                label=item.node.label,
                on_active_path=entry_id in active,
                is_leaf=entry_id == leaf_id,
                foldable=foldable,
                folded=is_folded,
                segment_start=segment_start,
            )
        )
        if is_folded:
            continue
        children = item.children
        if len(children) == 1:
            stack.append((children[0], child_prefix, child_prefix, "", False))
            continue
        for index in range(len(children) - 1, -1, -1):
            last = index == len(children) - 1
            stack.append(
                (
                    children[index],
                    child_prefix,
                    child_prefix + ("    " if last else "│   "),
                    "└─" if last else "├─",
                    True,
                )
            )
    return rows
