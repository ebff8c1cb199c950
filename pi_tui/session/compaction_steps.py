"""The steps of one compaction, shared by every trigger (mixin of ``CompactionRunner``).

Model and key checks, the ``session_before_compact`` hook, the summarizer calls (history and
turn prefix in parallel, as pi 0.73.1), the "must make the context smaller" check, rebuilding the
agent's messages, and the events that report the outcome.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Sequence
from typing import Any, Protocol, TypeVar

from pi_tui.agent.abort import AbortSignal
from pi_tui.core.context.compaction import (
    CompactionPreparation,
    CompactionResult,
    assemble_result,
    estimate_tokens_now_and_after,
    history_request,
    needs_history_call,
    summary_reasoning,
    turn_prefix_request,
)
from pi_tui.core.context.summary_cap import capped_notice
from pi_tui.core.context.summary_fit import dropped_notice
from pi_tui.core.errors import PiError
from pi_tui.core.provider import ModelInfo, Provider
from pi_tui.session.summarizer import (
    SummaryCancelled,
    call_summarizer,
    summary_request,
    summary_text_or_raise,
)

CANCELLED = "Compaction cancelled"
T = TypeVar("T")


class CompactionFailed(PiError):
    pass


class CompactionHost(Protocol):
    """What the runner needs from its session: ``AgentSession``'s ``CompactionPort``, or a fake
    with a real SessionManager in tests. Read-only, so a port's properties satisfy it. The
    runner also uses, when the host has them: ``lock``, ``subscribe``, ``agent``,
    ``replace_messages``, ``require_model`` and ``check_credentials``."""

    @property
    def session_manager(self) -> Any: ...
    @property
    def settings(self) -> Any: ...
    @property
    def extensions(self) -> Any: ...
    @property
    def thinking_level(self) -> Any: ...

    def emit(self, event: dict[str, Any]) -> None: ...
    def current_model(self) -> ModelInfo | None: ...
    def provider_for(self, model: ModelInfo) -> Provider: ...
    def api_key_for(self, model: ModelInfo) -> str | None: ...


class CompactionSteps:
    host: CompactionHost
    current_signal: AbortSignal | None
    request_preparer: Any

    # ------------------------------------------------------------------ abort

    def raise_if_aborted(self) -> None:
        if self.current_signal is not None and self.current_signal.aborted:
            raise SummaryCancelled(CANCELLED)

    async def guarded(self, awaitable: Awaitable[T]) -> T:
        """Await under the operation's abort signal: an abort cancels it and raises
        ``SummaryCancelled`` (a cancellation from outside still propagates as such)."""
        signal = self.current_signal
        if signal is None:
            return await awaitable
        if signal.aborted:  # never started: close it, or it is reported as never awaited
            close = getattr(awaitable, "close", None)
            if callable(close):
                close()
            raise SummaryCancelled(CANCELLED)
        task = signal.spawn(awaitable)
        try:
            result = await task
        except asyncio.CancelledError:
            if signal.aborted:
                raise SummaryCancelled(CANCELLED) from None
            raise
        self.raise_if_aborted()
        return result

    # ------------------------------------------------------------------ steps

    def _require_model(self) -> ModelInfo:
        model = self.host.current_model()
        if model is None:
            require = getattr(self.host, "require_model", None)
            if callable(require):
                require()
            raise PiError("No model selected.\n\nThen use /model to select a model.")
        return model

    def require_key(self, model: ModelInfo) -> str | None:
        check = getattr(self.host, "check_credentials", None)
        if callable(check):
            check(model)
        return self.host.api_key_for(model)

    async def _ask_extensions(
        self, preparation: CompactionPreparation, path: list[Any], custom_instructions: str | None, reason: str, will_retry: bool
    ) -> dict[str, Any] | None:
        extensions = self.host.extensions
        emit = getattr(extensions, "emit_session_before_compact", None)
        if not callable(emit):
            return None
        decision = await self.guarded(emit(
            preparation=preparation.to_json(), branch_entries=list(path), custom_instructions=custom_instructions,
            reason=reason, will_retry=will_retry, signal=self.current_signal,
        ))
        if getattr(decision, "cancel", False):
            raise SummaryCancelled(CANCELLED)
        compaction = getattr(decision, "compaction", None)
        return compaction if isinstance(compaction, dict) else None

    async def _summarize(
        self, preparation: CompactionPreparation, model: ModelInfo, api_key: str | None, custom_instructions: str | None,
    ) -> CompactionResult:
        provider = self.host.provider_for(model)
        reasoning = summary_reasoning(model.reasoning, str(self.host.thinking_level))
        specs: list[tuple[Any, str]] = []
        with_history = needs_history_call(preparation, context_window=model.context_window)
        if with_history:
            spec = history_request(preparation, custom_instructions=custom_instructions, reasoning=reasoning,
                                   context_window=model.context_window)
            specs.append((spec, "Summarization failed"))
        if preparation.is_split_turn and preparation.turn_prefix_messages:
            spec = turn_prefix_request(preparation, reasoning=reasoning, context_window=model.context_window)
            specs.append((spec, "Turn prefix summarization failed"))
        for spec, _ in specs:
            if spec.capped is not None and spec.capped.cut_chars:
                self.host.emit({"type": "notify", "level": "warning", "message": capped_notice(
                    "Compaction", spec.capped, model.id, model.context_window)})
            if spec.dropped:
                self.host.emit({"type": "notify", "level": "warning", "message": dropped_notice(
                    "Compaction", spec.dropped, model.id, model.context_window)})
        calls = [self.summarize_call(provider, summary_request(model, spec, api_key), prefix) for spec, prefix in specs]
        texts = await _all_or_none(calls)  # pi 0.73.1 runs the two calls in parallel
        # Growth is judged on the whole compaction (``_check_gain``), never on one part: a
        # turn prefix of one short user message has a summary longer than itself.
        history = texts[0] if with_history else None
        prefix_text = texts[-1] if preparation.is_split_turn and preparation.turn_prefix_messages else None
        return assemble_result(preparation, history, prefix_text)

    async def summarize_call(self, provider: Provider, request: Any, failure_prefix: str | None, *, whole_summary: bool = True) -> str:
        message = await self.guarded(call_summarizer(provider, request))
        return summary_text_or_raise(message, failure_prefix, max_tokens=request.max_tokens if whole_summary else None)

    def _check_gain(
        self, path: Sequence[Any], preparation: CompactionPreparation, result: CompactionResult, from_extension: bool,
        *, manual: bool,
    ) -> tuple[int, int]:
        """The chars/4 estimates ``(before, after)``. An automatic pi-made summary must make the
        context smaller. A manual one that does not is written anyway, as pi does (the user asked
        for it; RPC ``compact`` must behave as pi's), with a warning."""
        kept_index = next((i for i, e in enumerate(path) if e.get("id") == result.first_kept_entry_id), preparation.first_kept_index)
        before, after = estimate_tokens_now_and_after(path, kept_index, result.summary)
        if not from_extension and after >= before:
            growth = f"the summary did not make the context smaller ({before} → {after} estimated tokens)"
            if not manual:
                raise CompactionFailed(growth)
            self.host.emit({"type": "notify", "level": "warning",
                            "message": f"Compacted as asked, but {growth}."})
        return before, after

    def replace_messages(self, *, drop_trailing_error: bool = False) -> None:
        """The agent continues from the rebuilt context (summary + kept + newer)."""
        messages = list(self.host.session_manager.build_session_context().messages)
        if drop_trailing_error and messages and messages[-1].get("role") == "assistant" and messages[-1].get("stopReason") == "error":
            messages.pop()  # the failed answer stays in the session file, not in the retry
        if self.request_preparer is not None:
            self.request_preparer.invalidate()
        replace = getattr(self.host, "replace_messages", None)
        if callable(replace):
            replace(messages)
            return
        agent = getattr(self.host, "agent", None)
        if agent is not None:
            agent.context.messages = messages

    async def _emit_session_compact(self, entry: Any, from_extension: bool) -> None:
        emit = getattr(self.host.extensions, "emit_session_compact", None)
        if callable(emit):
            await emit(dict(entry), from_extension)

    async def _emit_failed(self, reason: str, error: str, *, aborted: bool, will_retry: bool) -> None:
        emit = getattr(self.host.extensions, "emit_session_compact_failed", None)
        if callable(emit):
            await emit(reason=reason, error_message=error, aborted=aborted, will_retry=will_retry, from_extension=False)

    def _end_event(self, reason: str, result: CompactionResult, tokens_after: int, started: float, *, will_retry: bool) -> dict[str, Any]:
        return {
            "type": "compaction_end", "reason": reason, "result": result.to_json(), "aborted": False,
            "willRetry": will_retry, "tokensAfter": tokens_after, "durationMs": int((time.monotonic() - started) * 1000),
        }



async def _all_or_none(calls: Sequence[Awaitable[str]]) -> list[str]:
    """Every call's answer; the first failure cancels the others (no orphan summarizer call)."""
    tasks = [asyncio.ensure_future(call) for call in calls]
    try:
        return list(await asyncio.gather(*tasks))
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
