"""Branch summaries on tree navigation, the pure half (pi-behaviour.md §3, §13.3).

When the user moves the leaf to another point of the tree, the branch being left can be
summarized so that its work is not lost from the context. This module collects that branch,
fits it into a token budget (newest first: the most recent work matters most) and builds the
summarizer request and the stored summary text.

pi's quirks kept on purpose (§12 surprises 4 and 5): the walk does not stop at compactions (their
summaries are included), and tool results are skipped (the assistant's tool calls already say
what was done; the results are the bulk).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pi_tui.core.context.compaction import SummaryRequestSpec
from pi_tui.core.context.compaction_prompts import (
    BRANCH_SUMMARY_PREAMBLE,
    SUMMARIZATION_SYSTEM_PROMPT,
    branch_summary_prompt_text,
)
from pi_tui.core.context.cut_point import entry_message
from pi_tui.core.context.file_ops import FileOps, format_file_operations
from pi_tui.core.context.summary_fit import fit_summary_request
from pi_tui.core.messages import AgentMessage
from pi_tui.core.session.entries import Entry
from pi_tui.core.session.tree import path_to
from pi_tui.core.tokens import estimate_tokens

BRANCH_SUMMARY_MAX_TOKENS = 2048
DEFAULT_CONTEXT_WINDOW = 128_000
SUMMARY_FIT_RATIO = 0.9
"""An older summary still joins when the budget is hit, if less than 90% of it is used."""


@dataclass(frozen=True, slots=True)
class BranchCollection:
    entries: list[Entry]
    """Entries of the abandoned branch, oldest first (the common ancestor excluded)."""
    common_ancestor_id: str | None


def collect_entries_for_branch_summary(
    by_id: Mapping[str, Entry], old_leaf_id: str | None, target_id: str
) -> BranchCollection:
    """The walk from the old leaf up to (not including) the deepest entry shared with the target."""
    if old_leaf_id is None:
        return BranchCollection([], None)
    index = dict(by_id)
    target_path = {e["id"] for e in path_to(index, target_id)}
    old_path = [e["id"] for e in path_to(index, old_leaf_id)]
    ancestor: str | None = None
    for entry_id in reversed(old_path):
        if entry_id in target_path:
            ancestor = entry_id
            break
    start = old_path.index(ancestor) + 1 if ancestor is not None else 0
    return BranchCollection([by_id[i] for i in old_path[start:]], ancestor)


def _branch_view(entry: Entry) -> AgentMessage | None:
    if entry.get("type") == "message":
        message = entry.get("message")
        if isinstance(message, dict) and message.get("role") == "toolResult":
            return None
    return entry_message(entry)


@dataclass(slots=True)
class BranchPreparation:
    messages: list[AgentMessage] = field(default_factory=list)
    file_ops: FileOps = field(default_factory=FileOps)
    total_tokens: int = 0


def prepare_branch_entries(entries: Sequence[Entry], token_budget: int = 0) -> BranchPreparation:
    """Newest first until the budget (0 = unlimited) is reached; tool results skipped."""
    prep = BranchPreparation()
    for entry in entries:
        if entry.get("type") == "branch_summary" and not entry.get("fromHook"):
            prep.file_ops.add_details(entry.get("details"))
    newest_first: list[AgentMessage] = []
    for entry in reversed(entries):
        message = _branch_view(entry)
        if message is None:
            continue
        prep.file_ops.add_message(message)
        tokens = estimate_tokens(message)
        if token_budget > 0 and prep.total_tokens + tokens > token_budget:
            is_summary = entry.get("type") in ("compaction", "branch_summary")
            if is_summary and prep.total_tokens < token_budget * SUMMARY_FIT_RATIO:
                newest_first.append(message)
                prep.total_tokens += tokens
            break
        newest_first.append(message)
        prep.total_tokens += tokens
    prep.messages = newest_first[::-1]
    return prep


def branch_token_budget(context_window: int | None, reserve_tokens: int) -> int:
    return (context_window or DEFAULT_CONTEXT_WINDOW) - reserve_tokens


def branch_summary_request(
    messages: Sequence[AgentMessage],
    *,
    custom_instructions: str | None = None,
    replace_instructions: bool = False,
    context_window: int | None = None,
) -> SummaryRequestSpec:
    """``maxTokens`` 2048 and no reasoning option, as pi (§3, §14.3)."""
    fixed = branch_summary_prompt_text(
        "", custom_instructions=custom_instructions, replace_instructions=replace_instructions
    )
    fitted = fit_summary_request(messages, context_window=context_window, max_tokens=BRANCH_SUMMARY_MAX_TOKENS,
                                 fixed_text=fixed)
    return SummaryRequestSpec(
        system_prompt=SUMMARIZATION_SYSTEM_PROMPT,
        prompt_text=branch_summary_prompt_text(
            fitted.text, custom_instructions=custom_instructions, replace_instructions=replace_instructions
        ),
        max_tokens=fitted.max_tokens,
        reasoning=None,
        dropped=fitted.dropped,
    )


def branch_summary_text(model_text: str, file_ops: FileOps) -> tuple[str, dict[str, Any]]:
    """The stored summary (preamble + text + file tags) and its details."""
    read_files, modified_files = file_ops.lists()
    summary = BRANCH_SUMMARY_PREAMBLE + model_text + format_file_operations(read_files, modified_files)
    return summary, {"readFiles": read_files, "modifiedFiles": modified_files}
