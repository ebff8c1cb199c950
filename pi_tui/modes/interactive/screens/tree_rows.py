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

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, TypeAlias

TreeFilter: TypeAlias = Literal["default", "no-tools", "user-only", "labeled-only", "all"]
TREE_FILTERS: tuple[TreeFilter, ...] = ("default", "no-tools", "user-only", "labeled-only", "all")
"""In the order ctrl+o cycles through them."""

RowKind: TypeAlias = Literal["user", "assistant", "tool", "error", "summary", "meta"]

ROW_TEXT_LIMIT = 240
"""Characters of an entry's text kept in a row (the screen truncates to its width anyway)."""
ERROR_TEXT_LIMIT = 80
"""pi shows the first 80 characters of an assistant error."""

_HIDDEN_BY_DEFAULT = frozenset({"label", "custom", "model_change", "thinking_level_change"})

FOLD_OPEN = "⊟"
FOLD_CLOSED = "⊞"


@dataclass(frozen=True, slots=True)
class TreeNode:
    """One node of ``SessionManager.get_tree()``, in a shape this module can rely on."""

    entry: Mapping[str, Any]
    children: tuple[TreeNode, ...]
    label: str | None = None

    @property
    def entry_id(self) -> str:
        return str(self.entry["id"])


def as_tree_nodes(raw_roots: Iterable[Any]) -> list[TreeNode]:
    """Adapt the store's tree nodes (objects with ``entry/children/label`` or dicts) without recursion."""
    converted: dict[int, TreeNode] = {}
    roots = list(raw_roots)
    stack: list[tuple[Any, bool]] = [(node, False) for node in reversed(roots)]
    while stack:
        node, expanded = stack.pop()
        children = _field(node, "children") or []
        if not expanded:
            stack.append((node, True))
            stack.extend((child, False) for child in children)
            continue
        converted[id(node)] = TreeNode(
            entry=_field(node, "entry"),
            children=tuple(converted[id(child)] for child in children),
            label=_field(node, "label") or None,
        )
    return [converted[id(node)] for node in roots]


def _field(node: Any, name: str) -> Any:
    if isinstance(node, Mapping):
        return node.get(name)
    return getattr(node, name, None)


@dataclass(frozen=True, slots=True, kw_only=True)
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

    @property
    def search_text(self) -> str:
        return f"{self.label or ''} {self.text}".lower()


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


def build_rows(roots: Sequence[TreeNode], *, leaf_id: str | None, view: TreeView) -> list[TreeRow]:
    """The rows to show for ``roots`` under ``view`` (filter, search tokens, folded ids)."""
    active = active_path_ids(roots, leaf_id)
    tool_calls = _tool_calls_by_id(roots)
    tokens = view.search.lower().split()
    forest = _visible_forest(roots, active=active, leaf_id=leaf_id, view=view, tokens=tokens, tool_calls=tool_calls)
    rows = _layout(forest, active=active, leaf_id=leaf_id, folded=view.folded)
    position = next((i for i, row in enumerate(rows) if row.is_leaf), None)
    if position is None:
        position = next((i for i in range(len(rows) - 1, -1, -1) if rows[i].on_active_path), None)
    if position is not None:
        rows[position] = replace(rows[position], is_position=True)
    return rows


def active_path_ids(roots: Sequence[TreeNode], leaf_id: str | None) -> frozenset[str]:
    """Ids on the path root → leaf."""
    if leaf_id is None:
        return frozenset()
    parent_of: dict[str, str | None] = {}
    stack: list[tuple[TreeNode, str | None]] = [(root, None) for root in roots]
    while stack:
        node, parent = stack.pop()
        parent_of[node.entry_id] = parent
        stack.extend((child, node.entry_id) for child in node.children)
    path: set[str] = set()
    current: str | None = leaf_id if leaf_id in parent_of else None
    while current is not None and current not in path:
        path.add(current)
        current = parent_of.get(current)
    return frozenset(path)


def _tool_calls_by_id(roots: Sequence[TreeNode]) -> dict[str, Mapping[str, Any]]:
    calls: dict[str, Mapping[str, Any]] = {}
    stack = list(roots)
    while stack:
        node = stack.pop()
        message = node.entry.get("message") if node.entry.get("type") == "message" else None
        if isinstance(message, Mapping) and message.get("role") == "assistant":
            for block in message.get("content") or []:
                if isinstance(block, Mapping) and block.get("type") == "toolCall":
                    calls[str(block.get("id"))] = block
        stack.extend(node.children)
    return calls


def _visible_forest(
    roots: Sequence[TreeNode],
    *,
    active: frozenset[str],
    leaf_id: str | None,
    view: TreeView,
    tokens: list[str],
    tool_calls: Mapping[str, Mapping[str, Any]],
) -> list[_Visible]:
    forest: list[_Visible] = []
    # Pre-order walk carrying the nearest visible ancestor; children pushed in reverse so the
    # active child (listed first) is visited first.
    stack: list[tuple[TreeNode, _Visible | None]] = [(root, None) for root in reversed(_ordered(roots, active))]
    while stack:
        node, visible_parent = stack.pop()
        text, kind = describe_entry(node.entry, tool_calls)
        shown = _passes_filter(node, kind, view.filter, is_leaf=node.entry_id == leaf_id) and _matches(
            f"{node.label or ''} {text}".lower(), tokens
        )
        carrier = visible_parent
        if shown:
            item = _Visible(node=node, text=text, kind=kind)
            (visible_parent.children if visible_parent else forest).append(item)
            carrier = item
        stack.extend((child, carrier) for child in reversed(_ordered(node.children, active)))
    return forest


def _ordered(nodes: Sequence[TreeNode], active: frozenset[str]) -> list[TreeNode]:
    return sorted(nodes, key=lambda node: node.entry_id not in active)


def _matches(haystack: str, tokens: list[str]) -> bool:
    return all(token in haystack for token in tokens)


def _passes_filter(node: TreeNode, kind: RowKind, tree_filter: TreeFilter, *, is_leaf: bool) -> bool:
    entry = node.entry
    entry_type = entry.get("type")
    if tree_filter == "all":
        return True
    if tree_filter == "labeled-only":
        return node.label is not None
    if tree_filter == "user-only":
        return entry_type == "message" and _role(entry) == "user"
    if entry_type in _HIDDEN_BY_DEFAULT:
        return False
    if _is_tool_call_only_assistant(entry) and not is_leaf:
        return False
    return not (tree_filter == "no-tools" and kind == "tool")


def _role(entry: Mapping[str, Any]) -> str | None:
    message = entry.get("message")
    return str(message.get("role")) if isinstance(message, Mapping) else None


def _is_tool_call_only_assistant(entry: Mapping[str, Any]) -> bool:
    message = entry.get("message")
    if entry.get("type") != "message" or not isinstance(message, Mapping) or message.get("role") != "assistant":
        return False
    if message.get("stopReason") in ("error", "aborted"):
        return False
    blocks = [b for b in message.get("content") or [] if isinstance(b, Mapping)]
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
        entry_id = item.node.entry_id
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


# --------------------------------------------------------------------------- entry text


def describe_entry(entry: Mapping[str, Any], tool_calls: Mapping[str, Mapping[str, Any]]) -> tuple[str, RowKind]:
    """The row text of an entry and the kind that colours it."""
    entry_type = entry.get("type")
    if entry_type == "message" and isinstance(entry.get("message"), Mapping):
        return _describe_message(entry["message"], tool_calls)
    if entry_type == "compaction":
        return f"[compaction: {round(int(entry.get('tokensBefore') or 0) / 1000)}k tokens]", "summary"
    if entry_type == "branch_summary":
        return _clip(f"[branch summary]: {entry.get('summary', '')}"), "summary"
    if entry_type == "custom_message":
        return _clip(f"[{entry.get('customType', 'custom')}]: {_text_of(entry.get('content'))}"), "meta"
    if entry_type == "model_change":
        return f"[model: {entry.get('provider', '?')}/{entry.get('modelId', '?')}]", "meta"
    if entry_type == "thinking_level_change":
        return f"[thinking: {entry.get('thinkingLevel', '?')}]", "meta"
    if entry_type == "label":
        label = entry.get("label")
        return (f"[label: {label}]" if label else "[label cleared]"), "meta"
    if entry_type == "session_info":
        return f"[session name: {entry.get('name') or '(cleared)'}]", "meta"
    if entry_type == "custom":
        return f"[custom: {entry.get('customType', '?')}]", "meta"
    return f"[{entry_type}]", "meta"


def _describe_message(message: Mapping[str, Any], tool_calls: Mapping[str, Mapping[str, Any]]) -> tuple[str, RowKind]:
    role = message.get("role")
    if role == "user":
        return _clip(f"user: {_text_of(message.get('content'))}"), "user"
    if role == "assistant":
        return _describe_assistant(message)
    if role == "toolResult":
        call = tool_calls.get(str(message.get("toolCallId")))
        name = str(message.get("toolName", "tool"))
        text = format_tool_call(name, call.get("arguments") if call else None)
        return (f"{text} (error)", "error") if message.get("isError") else (text, "tool")
    if role == "bashExecution":
        return _clip(f"[!{message.get('command', '')}]"), "tool"
    if role == "custom":
        return _clip(f"[{message.get('customType', 'custom')}]: {_text_of(message.get('content'))}"), "meta"
    return f"[{role}]", "meta"


def _describe_assistant(message: Mapping[str, Any]) -> tuple[str, RowKind]:
    blocks = [b for b in message.get("content") or [] if isinstance(b, Mapping)]
    text = " ".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text").strip()
    if text:
        return _clip(f"assistant: {text}"), "assistant"
    if message.get("stopReason") == "aborted":
        return "assistant: (aborted)", "error"
    if message.get("stopReason") == "error":
        error = _flatten(str(message.get("errorMessage") or "error"))[:ERROR_TEXT_LIMIT]
        return f"assistant: {error}", "error"
    calls = [b for b in blocks if b.get("type") == "toolCall"]
    if calls:
        return _clip("assistant: " + ", ".join(format_tool_call(str(c.get("name")), c.get("arguments")) for c in calls)), "assistant"
    return "assistant: (no content)", "assistant"


_MAIN_ARGUMENT = {"bash": "command", "read": "path", "edit": "path", "write": "path", "ls": "path", "grep": "pattern", "find": "pattern"}


def format_tool_call(name: str, arguments: Any) -> str:
    """``[bash: echo hello]``, ``[read: src/app.py]``, or the arguments as compact JSON."""
    if not isinstance(arguments, Mapping):
        return f"[{name}]"
    main = _MAIN_ARGUMENT.get(name)
    if main and isinstance(arguments.get(main), str):
        return _clip(f"[{name}: {_flatten(arguments[main])}]", 120)
    rendered = json.dumps(arguments, ensure_ascii=False, separators=(",", ":"))
    return _clip(f"[{name}: {rendered}]", 120)


def format_token_count(tokens: int) -> str:
    """pi's compact figures: 999, 1.2k, 12k, 1.2M, 12M."""
    if tokens < 1000:
        return str(tokens)
    if tokens < 10_000:
        return f"{tokens / 1000:.1f}k"
    if tokens < 1_000_000:
        return f"{round(tokens / 1000)}k"
    if tokens < 10_000_000:
        return f"{tokens / 1_000_000:.1f}M"
    return f"{round(tokens / 1_000_000)}M"


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return _flatten(content)
    if isinstance(content, list):
        return _flatten(" ".join(str(b.get("text", "")) for b in content if isinstance(b, Mapping) and b.get("type") == "text"))
    return ""


def _flatten(text: str) -> str:
    return " ".join(text.split())


def _clip(text: str, limit: int = ROW_TEXT_LIMIT) -> str:
    text = _flatten(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"
