"""Ordering and matching of the session picker's rows (pi-behaviour.md §8.5), without Textual.

Three sorts, cycled with ctrl+s: ``threaded`` (forks nested under the session they came from),
``recent`` (newest activity first) and ``relevance`` (best search match first).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TypeAlias

from pi_tui.core.session.listing import SessionInfo

SessionSort: TypeAlias = Literal["threaded", "recent", "relevance"]
SESSION_SORTS: tuple[SessionSort, ...] = ("threaded", "recent", "relevance")

_NAME_WEIGHT = 3
_FIRST_MESSAGE_WEIGHT = 2


@dataclass(frozen=True, slots=True)
class PickerRow:
    """One listed session and its nesting depth (threaded sort)."""

    info: SessionInfo
    depth: int = 0


def session_matches(info: SessionInfo, tokens: Sequence[str]) -> bool:
    """Every search token appears in the name, a message or the cwd (case-insensitive)."""
    haystack = f"{info.name or ''} {info.first_message} {info.all_messages_text} {info.cwd}".lower()
    return all(token in haystack for token in tokens)


def relevance(info: SessionInfo, tokens: Sequence[str]) -> int:
    """Matches in the name count most, then the first message, then anything else."""
    name, first = (info.name or "").lower(), info.first_message.lower()
    rest = info.all_messages_text.lower()
    return sum(
        _NAME_WEIGHT * name.count(token) + _FIRST_MESSAGE_WEIGHT * first.count(token) + rest.count(token)
        for token in tokens
    )


def order_sessions(
    infos: Sequence[SessionInfo], *, sort: SessionSort, tokens: Sequence[str] = (), named_only: bool = False
) -> list[PickerRow]:
    """The rows to list: filtered by ``tokens``/``named_only``, in ``sort`` order."""
    matching = [info for info in infos if session_matches(info, tokens) and (info.name or not named_only)]
    recent = sorted(matching, key=lambda info: info.modified, reverse=True)
    if sort == "recent":
        return [PickerRow(info) for info in recent]
    if sort == "relevance":
        ranked = sorted(recent, key=lambda info: relevance(info, tokens), reverse=True)  # stable: ties stay recent-first
        return [PickerRow(info) for info in ranked]
    return _threaded(recent)


def _threaded(recent: list[SessionInfo]) -> list[PickerRow]:
    by_path = {_key(info.path): info for info in recent}
    children: dict[str, list[SessionInfo]] = {}
    roots: list[SessionInfo] = []
    for info in recent:
        parent = info.parent_session_path
        if parent and _key(Path(parent)) in by_path and _key(Path(parent)) != _key(info.path):
            children.setdefault(_key(Path(parent)), []).append(info)
        else:
            roots.append(info)
    rows: list[PickerRow] = []
    seen: set[str] = set()
    stack: list[tuple[SessionInfo, int]] = [(info, 0) for info in reversed(roots)]
    while stack:
        info, depth = stack.pop()
        key = _key(info.path)
        if key in seen:
            continue
        seen.add(key)
        rows.append(PickerRow(info, depth))
        stack.extend((child, depth + 1) for child in reversed(children.get(key, [])))
    # A parent cycle leaves sessions unreached: list them flat rather than lose them.
    rows.extend(PickerRow(info) for info in recent if _key(info.path) not in seen)
    return rows


def _key(path: Path) -> str:
    return str(path.expanduser().resolve(strict=False))
