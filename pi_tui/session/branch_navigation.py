"""``navigate_tree``: move the leaf, optionally summarizing the branch left behind (§3, §13.3).

Runs under the host's lock (it changes the leaf, so it must never overlap a run) and counts as
"compacting" while its summarizer runs. An aborted summary writes nothing and leaves the leaf
where it was.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pi_tui.core.context.branch_summary import (
    branch_summary_request,
    branch_summary_text,
    branch_token_budget,
    collect_entries_for_branch_summary,
    prepare_branch_entries,
)
from pi_tui.core.context.compaction_prompts import NO_BRANCH_CONTENT
from pi_tui.core.context.summary_fit import dropped_notice
from pi_tui.core.errors import EntryNotFoundError, PiError
from pi_tui.core.messages import text_of
from pi_tui.core.session.tree import index_entries
from pi_tui.session.compaction_ops import CompactionOps
from pi_tui.session.summarizer import SummaryCancelled, summary_request


@dataclass(frozen=True, slots=True)
class NavigateResult:
    cancelled: bool = False
    aborted: bool = False
    editor_text: str | None = None
    summary_entry: dict[str, Any] | None = None
    files: dict[str, Any] | None = None
    """With ``restore_files``: what the restore changed (``checkpoints.RestorePlan.preview``)."""


def _branch_reserve(settings: Any) -> int:
    getter = getattr(settings, "branch_summary_settings", None)
    return int(getattr(getter(), "reserve_tokens", 16384)) if callable(getter) else 16384


def _new_leaf(target: dict[str, Any]) -> tuple[str | None, str | None]:
    """``(new leaf, editor text)``: a user-like target goes back to its parent, its text to the editor."""
    if target.get("type") == "message" and target.get("message", {}).get("role") == "user":
        return target.get("parentId"), text_of(target["message"].get("content", ""))
    if target.get("type") == "custom_message":
        return target.get("parentId"), text_of(target.get("content", ""))
    return target["id"], None


async def navigate_tree(
    runner: CompactionOps,
    target_id: str,
    *,
    summarize: bool = False,
    custom_instructions: str | None = None,
    replace_instructions: bool = False,
    label: str | None = None,
) -> NavigateResult:
    host = runner.host
    sm = host.session_manager
    old_leaf = sm.leaf_id
    if target_id == old_leaf:
        return NavigateResult()
    target = sm.get_entry(target_id)
    if target is None:
        raise EntryNotFoundError(target_id)
    model = host.current_model()
    if summarize and model is None:
        raise PiError("No model available for summarization")
    with runner.operation():
        async with runner.lock:
            try:
                moved = await _move(runner, target, summarize, custom_instructions, replace_instructions, label)
            except SummaryCancelled:
                return NavigateResult(cancelled=True, aborted=True)
    if moved is None:
        return NavigateResult(cancelled=True)
    editor_text, summary_entry, from_extension = moved
    emit_tree = getattr(host.extensions, "emit_session_tree", None)
    if callable(emit_tree):
        await emit_tree(new_leaf_id=sm.leaf_id, old_leaf_id=old_leaf, summary_entry=summary_entry, from_extension=from_extension)
    return NavigateResult(editor_text=editor_text, summary_entry=summary_entry)


async def _move(
    runner: CompactionOps, target: dict[str, Any], summarize: bool, custom_instructions: str | None,
    replace_instructions: bool, label: str | None,
) -> tuple[str | None, dict[str, Any] | None, bool] | None:
    """Under the lock: ask the extensions, summarize, move the leaf. None when an extension
    cancelled; ``SummaryCancelled`` on abort (nothing written: the check comes before the move)."""
    host = runner.host
    sm = host.session_manager
    old_leaf, target_id = sm.leaf_id, str(target["id"])
    collection = collect_entries_for_branch_summary(index_entries(sm.get_entries()), old_leaf, target_id)
    preparation = {
        "targetId": target_id, "oldLeafId": old_leaf, "commonAncestorId": collection.common_ancestor_id,
        "entriesToSummarize": collection.entries, "userWantsSummary": summarize,
        "customInstructions": custom_instructions, "replaceInstructions": replace_instructions, "label": label,
    }
    extension_summary: dict[str, Any] | None = None
    emit = getattr(host.extensions, "emit_session_before_tree", None)
    if callable(emit):
        decision = await runner.guarded(emit(preparation, runner.current_signal))
        if decision.cancel:
            return None
        extension_summary = decision.summary
        if decision.custom_instructions is not None:
            custom_instructions = decision.custom_instructions
        if decision.replace_instructions is not None:
            replace_instructions = decision.replace_instructions
        if decision.label is not None:
            label = decision.label
    summary: str | None = None
    details: Any = None
    from_extension = False
    if summarize and extension_summary is not None:
        summary, details, from_extension = extension_summary["summary"], extension_summary.get("details"), True
    elif summarize and collection.entries:
        summary, details = await _summarize_branch(runner, collection.entries, custom_instructions, replace_instructions)
    runner.raise_if_aborted()
    new_leaf, editor_text = _new_leaf(target)
    summary_entry = None
    if summary is not None:
        summary_id = sm.branch_with_summary(new_leaf, summary, details, from_extension)
        summary_entry = dict(sm.get_entry(summary_id))
        if label:
            sm.append_label_change(summary_id, label)
    else:
        if new_leaf is None:
            sm.reset_leaf()
        else:
            sm.branch(new_leaf)
        if label:
            sm.append_label_change(target_id, label)
    runner.replace_messages()
    return editor_text, summary_entry, from_extension


async def _summarize_branch(
    runner: CompactionOps, entries: list[Any], custom_instructions: str | None, replace_instructions: bool
) -> tuple[str, dict[str, Any]]:
    host = runner.host
    model = host.current_model()
    assert model is not None
    api_key = runner.require_key(model)
    budget = branch_token_budget(model.context_window, _branch_reserve(host.settings))
    prepared = prepare_branch_entries(entries, budget)
    if not prepared.messages:
        read_files, modified_files = prepared.file_ops.lists()
        return NO_BRANCH_CONTENT, {"readFiles": read_files, "modifiedFiles": modified_files}
    spec = branch_summary_request(
        prepared.messages, custom_instructions=custom_instructions, replace_instructions=replace_instructions,
        context_window=model.context_window,
    )
    if spec.dropped:
        host.emit({"type": "notify", "level": "warning",
                   "message": dropped_notice("Branch summary", spec.dropped, model.id, model.context_window)})
    # pi raises the provider's message as it is (no prefix of its own), and keeps an empty answer
    text = await runner.summarize_call(host.provider_for(model), summary_request(model, spec, api_key), None, whole_summary=False)
    return branch_summary_text(text, prepared.file_ops)
