"""Where a compaction cuts the session path (pi-behaviour.md §2.3, §13.2).

Works on *path entries*: the session entries from the root to the leaf, as plain JSON dicts in
pi's v3 shapes. Only the entries' ``type``, ``id``, ``message`` and summary fields are read, so
this module does not depend on the session store.

The rule that matters most: a cut never lands on a tool result. A tool result without the
assistant message that called it is meaningless to the model (and rejected by most providers), so
the kept part always starts at a user-like message or an assistant message.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pi_tui.core.messages import AgentMessage
from pi_tui.core.session.entries import Entry
from pi_tui.core.session.projection import compaction_summary_message, entry_to_message
from pi_tui.core.tokens import estimate_tokens

_CUTTABLE_ROLES = frozenset({"user", "assistant", "bashExecution", "custom", "branchSummary", "compactionSummary"})
_TURN_START_ROLES = frozenset({"user", "bashExecution"})
_USER_LIKE_ENTRY_TYPES = frozenset({"branch_summary", "custom_message"})


@dataclass(frozen=True, slots=True)
class CutPoint:
    first_kept_entry_index: int
    turn_start_index: int
    """Index of the user-like entry that starts the turn being split, or -1."""
    is_split_turn: bool


def entry_message(entry: Entry) -> AgentMessage | None:
    """The agent message an entry contributes to a summarizer's input (compaction view).

    ``message`` entries give their message; summaries and custom messages give their app-role
    message (a compaction entry gives its summary message); state entries (model, thinking,
    label, custom, session_info) give nothing.
    """
    if entry.get("type") == "compaction":
        return compaction_summary_message(entry)
    return entry_to_message(entry)


def _message_role(entry: Entry) -> str | None:
    if entry.get("type") != "message":
        return None
    message = entry.get("message")
    return message.get("role") if isinstance(message, dict) else None


def is_cut_point(entry: Entry) -> bool:
    """May the kept part of the context start at this entry? Never at a tool result."""
    if entry.get("type") in _USER_LIKE_ENTRY_TYPES:
        return True
    return _message_role(entry) in _CUTTABLE_ROLES


def _turn_start_index(entries: Sequence[Entry], cut_index: int, start: int) -> int:
    for i in range(cut_index, start - 1, -1):
        entry = entries[i]
        if entry.get("type") in _USER_LIKE_ENTRY_TYPES or _message_role(entry) in _TURN_START_ROLES:
            return i
    return -1


Measure = Callable[[AgentMessage], int]


def find_cut_point(
    entries: Sequence[Entry], start: int, end: int, keep_recent_tokens: int, *, measure: Measure = estimate_tokens
) -> CutPoint:
    """Choose the first kept entry so that roughly ``keep_recent_tokens`` stay verbatim.

    Walks back from ``end - 1`` summing the estimates of ``message`` entries; where the sum first
    reaches the budget, the cut is the first valid cut point at or after that index. Without a
    budget hit the cut is the first valid cut point (everything is kept). ``measure`` is pi's
    chars/4 estimate; the pipeline measures the budget in request bytes instead.
    """
    cut_points = [i for i in range(start, end) if is_cut_point(entries[i])]
    if not cut_points:
        return CutPoint(start, -1, False)
    cut_index = cut_points[0]
    accumulated = 0
    for i in range(end - 1, start - 1, -1):
        entry = entries[i]
        if entry.get("type") != "message":
            continue
        accumulated += measure(entry["message"])
        if accumulated >= keep_recent_tokens:
            cut_index = next((c for c in cut_points if c >= i), cut_points[0])
            break
    # Keep the state entries (model/thinking changes, labels, ...) that sit right before the cut.
    while cut_index > start:
        previous = entries[cut_index - 1]
        if previous.get("type") in ("message", "compaction"):
            break
        cut_index -= 1
    if _message_role(entries[cut_index]) == "user":
        return CutPoint(cut_index, -1, False)
    turn_start = _turn_start_index(entries, cut_index, start)
    return CutPoint(cut_index, turn_start, turn_start != -1)
