"""The pipeline strategy at request time (spec/context-pipeline.md steps 2–6).

Called by the agent loop while it prepares a model call (never inside one): snip and micro on
the request copy through the preparation cache, and, only when the copy is still larger than the
summary threshold, one strict-JSON summary that is recorded as a ``compaction`` entry so a
reload projects the same request. A rejected or failed summary leaves the request as it was and
counts towards the runner's circuit breaker.

The summarizer reads the *prepared* history (micro already applied) of the part being
summarized: cheaper than the canonical text, while the session file keeps everything. It is only
called once every entry it summarizes is on disk ("transcript first").
"""

from __future__ import annotations

import copy
from typing import Any

from pi_tui.agent.types import TransformContext
from pi_tui.core.context.compaction import (
    CompactionSettings,
    kept_messages,
    prepare_compaction,
)
from pi_tui.core.context.file_ops import format_file_operations
from pi_tui.core.context.pipeline import (
    PipelineConfig,
    build_units,
    coerce_pipeline_config,
    message_bytes,
    reduce_units,
)
from pi_tui.core.context.pipeline_cache import Prepared, RequestPreparer, cache_aware_budgets
from pi_tui.core.context.pipeline_summary import (
    PIPELINE_SUMMARY_SYSTEM_PROMPT,
    pipeline_summary_prompt,
    render_pipeline_summary,
    validate_summary_answer,
)
from pi_tui.core.context.summary_cap import (
    cap_previous_summary,
    capped_notice,
    previous_summary_budget,
)
from pi_tui.core.context.summary_fit import dropped_notice, fit_summary_request
from pi_tui.core.messages import AgentMessage, user_message
from pi_tui.core.provider import CompletionRequest
from pi_tui.session.compaction_ops import CompactionOps
from pi_tui.session.hooks import run_hooks
from pi_tui.session.summarizer import SummaryCancelled, call_summarizer

SUMMARY_MAX_TOKENS = 4096


def pipeline_config(settings: Any) -> PipelineConfig:
    getter = getattr(settings, "pipeline_settings", None)
    return coerce_pipeline_config(getter() if callable(getter) else None)


def preparer_for(runner: CompactionOps) -> RequestPreparer:
    config = pipeline_config(runner.host.settings)
    preparer = runner.request_preparer
    if not isinstance(preparer, RequestPreparer) or preparer.config != config:
        preparer = RequestPreparer(config, strategy="pipeline")
        runner.request_preparer = preparer
    if config.cache_aware:
        _note_bounded_budgets(runner, config)
    return preparer


def _note_bounded_budgets(runner: CompactionOps, config: PipelineConfig) -> None:
    """The cache-aware budgets are bounded by the summary threshold (``cache_aware_budgets``);
    say so once when the configured ones were larger, with the numbers actually used."""
    protect, gain = cache_aware_budgets(config)
    if (protect, gain) == (config.cache_aware_protect_tokens, config.cache_aware_min_gain_tokens):
        return
    runner.note_once(
        f"cache-aware:{config.cache_aware_protect_tokens}:{config.cache_aware_min_gain_tokens}:{config.summary_threshold_bytes}",
        f"cache-aware pruning: cacheAwareProtectTokens {config.cache_aware_protect_tokens:,} → {protect:,} and "
        f"cacheAwareMinGainTokens {config.cache_aware_min_gain_tokens:,} → {gain:,} (at most a quarter and an eighth "
        f"of summaryThresholdBytes {config.summary_threshold_bytes:,} ≈ {config.summary_threshold_bytes // 4:,} tokens, "
        "so that pruning keeps the request below the summary threshold)",
        level="info",
    )


async def prepare_request_messages(
    runner: CompactionOps, messages: list[AgentMessage], transform: TransformContext | None = None
) -> list[AgentMessage]:
    """``transform``: what the loop ran on ``messages`` before (the extensions' ``context``
    handlers, the SDK's ``transform_context``); after a summary the request is rebuilt from the
    session and passes it again, on a copy as the loop's does."""
    host = runner.host
    preparer = preparer_for(runner)
    prepared = preparer.prepare(messages)
    runner.last_request_bytes = prepared.bytes
    runner.preparation_reuse[prepared.reused] += 1
    for event in prepared.events:
        host.emit(event)
    config = preparer.config
    if prepared.bytes <= config.summary_threshold_bytes or runner.pipeline_circuit_open:
        return prepared.messages
    model = host.current_model()
    if model is None or not runner.settings_for(model).enabled:
        return prepared.messages
    state = runner.state
    tried = (len(messages), host.session_manager.leaf_id)
    if state.pipeline_summary_at == tried:
        return prepared.messages  # already tried for exactly this history
    state.pipeline_summary_at = tried
    with runner.operation():
        summarized = await _summarize(runner, prepared, config)
    if summarized:
        hooks = getattr(host, "pipeline_summarized", None)
        if hooks and host.session_manager.leaf_id is not None:
            await run_hooks(hooks, host.session_manager.leaf_id,
                            lambda message, level: host.emit({"type": "notify", "level": level, "message": message}),
                            "A pipeline-summary hook")
        fresh = list(host.session_manager.build_session_context().messages)
        runner.replace_messages()
        if transform is not None:
            fresh = await transform(copy.deepcopy(fresh))
        again = preparer_for(runner).prepare(fresh)
        runner.last_request_bytes = again.bytes
        host.emit({
            "type": "context_reduced", "step": "summary", "bytesBefore": prepared.bytes, "bytesAfter": again.bytes,
            "tokensBefore": _tokens(prepared), "tokensAfter": _tokens(again),
            "detail": "earlier history replaced by a JSON summary (compaction entry)",
        })
        return again.messages
    return prepared.messages


def _tokens(prepared: Prepared) -> int:
    return prepared.reduction.tokens_after if prepared.reduction is not None else 0


def _reject(runner: CompactionOps, prepared: Prepared, reason: str) -> bool:
    runner.host.emit({
        "type": "context_reduced", "step": "summary_rejected", "bytesBefore": prepared.bytes, "bytesAfter": prepared.bytes,
        "tokensBefore": _tokens(prepared), "tokensAfter": _tokens(prepared), "detail": reason,
    })
    runner.record_pipeline_failure()
    return False


def kept_tail_bytes(config: PipelineConfig) -> int:
    """How much of the newest history a summary keeps verbatim, in request bytes (the unit of
    the threshold: a tail counted in chars/4 tokens was ~3x larger in bytes for CJK text, and
    the request stayed above the threshold after every summary). A third of the threshold
    leaves room for the summary itself and for the turns until the next one."""
    return max(1, config.summary_threshold_bytes // 3)


async def _summarize(runner: CompactionOps, prepared: Prepared, config: PipelineConfig) -> bool:
    host = runner.host
    sm = host.session_manager
    model = host.current_model()
    assert model is not None
    base = runner.settings_for(model)
    settings = CompactionSettings(reserve_tokens=base.reserve_tokens, keep_recent_tokens=kept_tail_bytes(config))
    path = sm.get_branch()
    preparation = prepare_compaction(path, settings, measure=message_bytes)
    if preparation is None or preparation.nothing_to_summarize:
        return False
    if sm.session_file is not None and sm.entries_on_disk < len(sm.get_entries()):
        return _reject(runner, prepared, "the transcript is not on disk yet; no summary requested")
    units, _ = build_units(preparation.messages_to_summarize + preparation.turn_prefix_messages)
    summarized = reduce_units(units, PipelineConfig(variant="exact")).messages
    previous = preparation.previous_summary
    budget = previous_summary_budget(previous or "", summarized, context_window=model.context_window,
                                     system_prompt=PIPELINE_SUMMARY_SYSTEM_PROMPT,
                                     prompt_text=lambda prev: pipeline_summary_prompt("", prev))
    if previous and budget is not None:  # cut for the request only: the file keeps it whole
        capped = cap_previous_summary(previous, budget)
        previous = capped.text
        if capped.cut_chars:
            host.emit({"type": "notify", "level": "warning",
                       "message": capped_notice("Pipeline summary", capped, model.id, model.context_window)})
    fitted = fit_summary_request(summarized, context_window=model.context_window, max_tokens=SUMMARY_MAX_TOKENS,
                                 fixed_text=pipeline_summary_prompt("", previous),
                                 system_prompt=PIPELINE_SUMMARY_SYSTEM_PROMPT)
    if fitted.dropped:
        host.emit({"type": "notify", "level": "warning",
                   "message": dropped_notice("Pipeline summary", fitted.dropped, model.id, model.context_window)})
    request = CompletionRequest(
        model=model, system_prompt=PIPELINE_SUMMARY_SYSTEM_PROMPT,
        messages=[user_message(pipeline_summary_prompt(fitted.text, previous))], tools=[],
        max_tokens=fitted.max_tokens, reasoning=None, session_id=None, api_key=runner.require_key(model),
    )
    try:
        answer = await runner.guarded(call_summarizer(host.provider_for(model), request))
    except SummaryCancelled:
        return False  # aborted by the user: nothing recorded, not a failure
    except Exception as err:  # a broken summarizer must not break the run
        return _reject(runner, prepared, f"summary failed: {err}")
    verdict = validate_summary_answer(answer)
    if not verdict.accepted or verdict.fields is None:
        return _reject(runner, prepared, f"summary rejected: {verdict.reason}")
    read_files, modified_files = preparation.file_ops.lists()
    summary = render_pipeline_summary(verdict.fields) + format_file_operations(read_files, modified_files)
    after = _request_bytes_after(config, summary, kept_messages(path, preparation.first_kept_index))
    if after >= prepared.bytes:
        return _reject(runner, prepared, f"summary rejected: it did not make the request smaller ({prepared.bytes} → {after} bytes)")
    if after >= config.summary_threshold_bytes:
        return _reject(runner, prepared, f"summary rejected: the request would still be above the threshold "
                                         f"({after} ≥ {config.summary_threshold_bytes} bytes)")
    if runner.current_signal is not None and runner.current_signal.aborted:
        return False
    sm.append_compaction(summary, preparation.first_kept_entry_id, preparation.tokens_before,
                         {"readFiles": read_files, "modifiedFiles": modified_files}, False)
    runner.state.pipeline.failures = 0
    return True


def _request_bytes_after(config: PipelineConfig, summary: str, kept: list[AgentMessage]) -> int:
    """The prepared request's size if the summary were recorded: what the next request would be."""
    summary_message: AgentMessage = {"role": "compactionSummary", "summary": summary, "tokensBefore": 0, "timestamp": 0}
    return RequestPreparer(config, strategy="pipeline").prepare([summary_message, *kept]).bytes
