"""Summary compaction, the pure half (pi-behaviour.md §2, as changed by §13.2).

Everything here is a function of the session path and the settings: what to summarize, what to
keep, what the summarizer is sent, and how its answers become the stored summary. The model call
itself, the events and the extension hooks live in ``pi_tui.session.compaction_runner``.

pi 0.73.1 semantics, followed on purpose:

* the range a compaction looks at starts at the previous compaction's *first kept entry*, so the
  messages the previous compaction kept are summarized by the next one (nothing silently drops
  out); the old summary reaches the model only as ``<previous-summary>``;
* ``tokensBefore`` is the estimate over exactly what the model currently sees.

pi-tui additions, each one a bound that pi lacks:

* ``nothing_to_summarize``: pi would send a summarizer an empty ``<conversation>``; we don't;
* ``summary_fit``: the summary request itself must fit the model's window in real tokens (its
  output budget gives way first, then tool results, and, as a last resort, the oldest text);
* ``estimate_tokens_after``: a summary that does not make the context smaller is a failure.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pi_tui.core.context.compaction_prompts import (
    NO_PRIOR_HISTORY,
    SPLIT_TURN_SEPARATOR,
    SUMMARIZATION_SYSTEM_PROMPT,
    summarization_prompt_text,
    turn_prefix_prompt_text,
)
from pi_tui.core.context.cut_point import Measure, entry_message, find_cut_point
from pi_tui.core.context.file_ops import FileOps, format_file_operations
from pi_tui.core.context.summary_cap import (
    CappedSummary,
    cap_previous_summary,
    previous_summary_budget,
)
from pi_tui.core.context.summary_fit import fit_summary_request
from pi_tui.core.messages import AgentMessage
from pi_tui.core.session.entries import Entry
from pi_tui.core.session.projection import build_session_context
from pi_tui.core.tokens import estimate_context_tokens, estimate_tokens

HISTORY_BUDGET_RATIO = 0.8
TURN_PREFIX_BUDGET_RATIO = 0.5


@dataclass(frozen=True, slots=True, kw_only=True)
class CompactionSettings:
    enabled: bool = True
    reserve_tokens: int = 16384
    keep_recent_tokens: int = 20000


def coerce_compaction_settings(value: Any) -> CompactionSettings:
    """Accept our dataclass, any object with the same attributes, or pi's camelCase JSON."""
    if isinstance(value, CompactionSettings):
        return value
    if value is None:
        return CompactionSettings()
    if isinstance(value, Mapping):
        get = value.get
        return CompactionSettings(
            enabled=bool(get("enabled", True)),
            reserve_tokens=int(get("reserveTokens", get("reserve_tokens", 16384))),
            keep_recent_tokens=int(get("keepRecentTokens", get("keep_recent_tokens", 20000))),
        )
    return CompactionSettings(
        enabled=bool(getattr(value, "enabled", True)),
        reserve_tokens=int(getattr(value, "reserve_tokens", 16384)),
        keep_recent_tokens=int(getattr(value, "keep_recent_tokens", 20000)),
    )


def fit_to_window(settings: CompactionSettings, context_window: int) -> CompactionSettings:
    """Bound reserve and keep-recent by the model's window (pi uses them as given).

    pi's defaults (reserve 16,384, keep 20,000) are sized for 128k+ windows:

    * a reserve as large as the whole window can never work; it becomes a quarter of the window;
    * keep-recent is at most half the threshold (``window − reserve``). A larger value keeps
      more than the threshold allows, so every compaction leaves the context above it and the
      next turn compacts again (a 32k model with pi's defaults: threshold 15,616, ~21k kept,
      one summary per turn). Half leaves the other half for the summary and the turns until the
      next compaction.

    Settings that already fit are returned as they are (the same object).
    """
    if context_window <= 0:
        return settings
    reserve = settings.reserve_tokens if settings.reserve_tokens < context_window else max(1, context_window // 4)
    keep = min(settings.keep_recent_tokens, max(1, (context_window - reserve) // 2))
    if reserve == settings.reserve_tokens and keep == settings.keep_recent_tokens:
        return settings
    return CompactionSettings(enabled=settings.enabled, reserve_tokens=reserve, keep_recent_tokens=keep)


def compaction_threshold(settings: CompactionSettings, context_window: int) -> int:
    """Context tokens above which automatic compaction runs (``shouldCompact``)."""
    return context_window - settings.reserve_tokens


def history_max_tokens(settings: CompactionSettings) -> int:
    """The history summarizer's own output budget: floor(0.8 × reserve), never the window."""
    return math.floor(HISTORY_BUDGET_RATIO * settings.reserve_tokens)


def turn_prefix_max_tokens(settings: CompactionSettings) -> int:
    return math.floor(TURN_PREFIX_BUDGET_RATIO * settings.reserve_tokens)


@dataclass(slots=True, kw_only=True)
class CompactionPreparation:
    """What ``session_before_compact`` handlers receive as ``preparation`` (pi's fields)."""

    first_kept_entry_id: str
    messages_to_summarize: list[AgentMessage]
    turn_prefix_messages: list[AgentMessage]
    is_split_turn: bool
    tokens_before: int
    previous_summary: str | None
    file_ops: FileOps
    settings: CompactionSettings
    first_kept_index: int = 0
    boundary_start: int = 0
    carried_history: str | None = None
    """A split turn that starts where the previous compaction kept from has no history of its
    own to summarize: the previous summary (without its file lists, which are recomputed) is
    then the history part, so it is not lost (pi 0.73.1 writes "No prior history." there)."""

    @property
    def nothing_to_summarize(self) -> bool:
        return not self.messages_to_summarize and not self.turn_prefix_messages

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "firstKeptEntryId": self.first_kept_entry_id,
            "messagesToSummarize": self.messages_to_summarize,
            "turnPrefixMessages": self.turn_prefix_messages,
            "isSplitTurn": self.is_split_turn,
            "tokensBefore": self.tokens_before,
            "fileOps": {
                "read": sorted(self.file_ops.read),
                "written": sorted(self.file_ops.written),
                "edited": sorted(self.file_ops.edited),
            },
            "settings": {
                "enabled": self.settings.enabled,
                "reserveTokens": self.settings.reserve_tokens,
                "keepRecentTokens": self.settings.keep_recent_tokens,
            },
        }
        if self.previous_summary is not None:
            data["previousSummary"] = self.previous_summary
        return data


@dataclass(slots=True, kw_only=True)
class CompactionResult:
    summary: str
    first_kept_entry_id: str
    tokens_before: int
    details: dict[str, Any] | None = field(default=None)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "summary": self.summary,
            "firstKeptEntryId": self.first_kept_entry_id,
            "tokensBefore": self.tokens_before,
        }
        if self.details is not None:
            data["details"] = self.details
        return data


def _last_index(entries: Sequence[Entry], kind: str) -> int:
    for i in range(len(entries) - 1, -1, -1):
        if entries[i].get("type") == kind:
            return i
    return -1


def context_messages(path_entries: Sequence[Entry]) -> list[AgentMessage]:
    """What the model sees for this path (the session projection of §1.5)."""
    return build_session_context(list(path_entries)).messages


def _messages_between(path: Sequence[Entry], start: int, end: int) -> list[AgentMessage]:
    messages = []
    for entry in path[start:end]:
        if entry.get("type") == "compaction":
            continue  # the old summary reaches the model as <previous-summary> only
        message = entry_message(entry)
        if message is not None:
            messages.append(message)
    return messages


def prepare_compaction(
    path_entries: Sequence[Entry], settings: CompactionSettings, *, measure: Measure = estimate_tokens
) -> CompactionPreparation | None:
    """Decide what to summarize and what to keep; None when the path ends in a compaction.

    With nothing to summarize the preparation is still returned (extensions may want it); the
    runner refuses to call a summarizer for it (``nothing_to_summarize``). ``measure`` is what
    ``keep_recent_tokens`` counts (the pipeline keeps a tail measured in request bytes).
    """
    path = list(path_entries)
    if not path or path[-1].get("type") == "compaction":
        return None
    previous_index = _last_index(path, "compaction")
    previous = path[previous_index] if previous_index >= 0 else None
    boundary_start = 0
    if previous is not None:
        boundary_start = previous_index + 1
        kept_id = previous.get("firstKeptEntryId")
        for i in range(previous_index):
            if path[i].get("id") == kept_id:
                boundary_start = i
                break
    tokens_before = estimate_context_tokens(context_messages(path)).tokens
    cut = find_cut_point(path, boundary_start, len(path), settings.keep_recent_tokens, measure=measure)
    if cut.first_kept_entry_index >= len(path):
        return None
    first_kept_id = path[cut.first_kept_entry_index].get("id")
    if not isinstance(first_kept_id, str) or not first_kept_id:
        return None
    history_end = cut.turn_start_index if cut.is_split_turn else cut.first_kept_entry_index
    to_summarize = _messages_between(path, boundary_start, history_end)
    turn_prefix = (
        _messages_between(path, cut.turn_start_index, cut.first_kept_entry_index) if cut.is_split_turn else []
    )
    file_ops = FileOps()
    if previous is not None and not previous.get("fromHook"):
        file_ops.add_details(previous.get("details"))
    file_ops.add_messages(to_summarize)
    file_ops.add_messages(turn_prefix)
    carried = _summary_without_file_lists(previous) if previous is not None and cut.is_split_turn and not to_summarize else None
    return CompactionPreparation(
        first_kept_entry_id=first_kept_id,
        messages_to_summarize=to_summarize,
        turn_prefix_messages=turn_prefix,
        is_split_turn=cut.is_split_turn,
        tokens_before=tokens_before,
        previous_summary=str(previous.get("summary", "")) if previous is not None else None,
        file_ops=file_ops,
        settings=settings,
        first_kept_index=cut.first_kept_entry_index,
        boundary_start=boundary_start,
        carried_history=carried,
    )


def _summary_without_file_lists(compaction: Entry) -> str:
    """A compaction's summary without the ``<read-files>``/``<modified-files>`` tail pi-made
    summaries end with (``assemble_result`` appends the cumulative lists again)."""
    summary = str(compaction.get("summary", ""))
    details = compaction.get("details")
    if compaction.get("fromHook") or not isinstance(details, Mapping):
        return summary
    read, modified = details.get("readFiles"), details.get("modifiedFiles")
    tail = format_file_operations(list(read) if isinstance(read, list) else [],
                                  list(modified) if isinstance(modified, list) else [])
    return summary[: -len(tail)] if tail and summary.endswith(tail) else summary


# --------------------------------------------------------------------------- summarizer requests


@dataclass(frozen=True, slots=True, kw_only=True)
class SummaryRequestSpec:
    """One summarizer call: no tools, its own output budget, one user message."""

    system_prompt: str
    prompt_text: str
    max_tokens: int
    reasoning: str | None
    dropped: str = ""
    """The oldest text left out so that the request fits the window (``summary_fit``)."""
    capped: CappedSummary | None = None
    """The previous summary, when it had to be cut to fit the window (``summary_cap``)."""


def summary_reasoning(model_supports_reasoning: bool, thinking_level: str | None) -> str | None:
    """0.73.1: the session thinking level, only for reasoning models and when not ``off``."""
    if model_supports_reasoning and thinking_level and thinking_level != "off":
        return thinking_level
    return None


def history_request(
    preparation: CompactionPreparation,
    *,
    custom_instructions: str | None = None,
    reasoning: str | None = None,
    context_window: int | None = None,
) -> SummaryRequestSpec:
    previous, capped = _previous_for_request(preparation, custom_instructions, context_window)
    fixed = summarization_prompt_text("", previous_summary=previous, custom_instructions=custom_instructions)
    fitted = fit_summary_request(preparation.messages_to_summarize, context_window=context_window,
                                 max_tokens=history_max_tokens(preparation.settings), fixed_text=fixed)
    return SummaryRequestSpec(
        system_prompt=SUMMARIZATION_SYSTEM_PROMPT,
        prompt_text=summarization_prompt_text(
            fitted.text, previous_summary=previous, custom_instructions=custom_instructions
        ),
        max_tokens=fitted.max_tokens,
        reasoning=reasoning,
        dropped=fitted.dropped,
        capped=capped,
    )


def _previous_budget(preparation: CompactionPreparation, summary: str, custom_instructions: str | None,
                     context_window: int | None) -> int | None:
    if not context_window:
        return None
    return previous_summary_budget(
        summary, preparation.messages_to_summarize, context_window=context_window,
        system_prompt=SUMMARIZATION_SYSTEM_PROMPT,
        prompt_text=lambda prev: summarization_prompt_text("", previous_summary=prev, custom_instructions=custom_instructions),
    )


def _previous_for_request(
    preparation: CompactionPreparation, custom_instructions: str | None, context_window: int | None
) -> tuple[str | None, CappedSummary | None]:
    """The previous summary as the history request carries it: whole, or capped to what fits
    the window (``summary_cap``; the session file keeps it whole)."""
    previous = preparation.previous_summary
    budget = _previous_budget(preparation, previous or "", custom_instructions, context_window)
    if previous is None or budget is None:
        return previous, None
    capped = cap_previous_summary(previous, budget)
    return capped.text, capped


def turn_prefix_request(
    preparation: CompactionPreparation, *, reasoning: str | None = None, context_window: int | None = None
) -> SummaryRequestSpec:
    fitted = fit_summary_request(preparation.turn_prefix_messages, context_window=context_window,
                                 max_tokens=turn_prefix_max_tokens(preparation.settings),
                                 fixed_text=turn_prefix_prompt_text(""))
    return SummaryRequestSpec(
        system_prompt=SUMMARIZATION_SYSTEM_PROMPT,
        prompt_text=turn_prefix_prompt_text(fitted.text),
        max_tokens=fitted.max_tokens,
        reasoning=reasoning,
        dropped=fitted.dropped,
    )


def nothing_to_do(preparation: CompactionPreparation, context_window: int | None) -> bool:
    """Nothing to summarize, and no previous summary too large for this window. Such a summary
    (a long one stranded by a switch to a small model) is the context's problem by itself: it is
    summarized again, capped, even when every message is among the kept ones."""
    if not preparation.nothing_to_summarize:
        return False
    previous = preparation.previous_summary
    return not previous or _previous_budget(preparation, previous, None, context_window) is None


def needs_history_call(preparation: CompactionPreparation, *, context_window: int | None = None) -> bool:
    """A split turn with no earlier history needs no history call: its history part is the
    previous summary (``carried_history``) or, with none, ``No prior history.``. A carried
    summary too large for this window (one that a summary request would have to cap) is
    summarized again instead: carried whole it would keep the context above the window."""
    if preparation.messages_to_summarize or not preparation.is_split_turn:
        return True
    carried = preparation.carried_history
    return bool(carried) and _previous_budget(preparation, carried or "", None, context_window) is not None


def assemble_result(
    preparation: CompactionPreparation, history_summary: str | None, turn_prefix_summary: str | None
) -> CompactionResult:
    """Join the summarizers' answers and append the cumulative file lists (§2.7)."""
    if history_summary is not None:
        summary = history_summary
    else:  # no history call: the carried previous summary, else pi's text
        summary = preparation.carried_history or NO_PRIOR_HISTORY
    if preparation.is_split_turn and turn_prefix_summary is not None:
        summary = summary + SPLIT_TURN_SEPARATOR + turn_prefix_summary
    read_files, modified_files = preparation.file_ops.lists()
    summary += format_file_operations(read_files, modified_files)
    return CompactionResult(
        summary=summary,
        first_kept_entry_id=preparation.first_kept_entry_id,
        tokens_before=preparation.tokens_before,
        details={"readFiles": read_files, "modifiedFiles": modified_files},
    )


def kept_messages(path_entries: Sequence[Entry], first_kept_index: int) -> list[AgentMessage]:
    """The messages a compaction keeping from ``first_kept_index`` leaves after its summary."""
    return _messages_between(path_entries, first_kept_index, len(path_entries))


def estimate_tokens_now_and_after(path_entries: Sequence[Entry], first_kept_index: int, summary: str) -> tuple[int, int]:
    """chars/4 estimates of the context now and after a compaction with ``summary``.

    Both sides are plain estimates (no provider usage), so they compare like with like.
    """
    now = sum(estimate_tokens(m) for m in context_messages(path_entries))
    kept = _messages_between(path_entries, first_kept_index, len(path_entries))
    after = math.ceil(len(summary) / 4) + sum(estimate_tokens(m) for m in kept)
    return now, after
