"""``CompactionRunner``: when and how the session compacts (pi-behaviour.md §2.8, §13.2, §3).

The pure decisions (what to cut, what to send) are in ``pi_tui.core.context``; this class makes
the model calls, runs the extension hooks, appends the entries and emits the events.

Bounds pi-tui adds on purpose (each one a failure mode users of coding agents have hit):

* one compact-and-retry per overflow; a second overflow ends with pi's "recovery failed" text;
* a circuit breaker: after 3 consecutive failed *automatic* compactions, automatic compaction
  stops (``compaction_circuit_open``); manual ``/compact`` still works and closes it again;
* a summary that does not make the context smaller is a failure, and nothing is written;
* no summarizer call when there is nothing to summarize (pi sends an empty conversation);
* manual, threshold and overflow compaction, the pipeline's summary and branch summaries never
  overlap each other or a run: they take the host's lock (the agent loop holds it while running);
* ``compaction.enabled = false`` means off, also on the overflow path, where the user gets a
  clear error instead.

Locking contract: the host must *not* hold its lock when it calls ``compact``,
``check_after_run``, ``check_before_prompt`` or ``navigate_tree``; ``prepare_request_messages`` runs
inside a model-call preparation (the loop holds the lock) and therefore takes no lock.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import Any, Protocol

from pi_tui.core.context.compaction import (
    CompactionPreparation,
    CompactionResult,
    CompactionSettings,
    assemble_result,
    coerce_compaction_settings,
    estimate_tokens_now_and_after,
    history_request,
    needs_history_call,
    prepare_compaction,
    summary_reasoning,
    turn_prefix_request,
)
from pi_tui.core.errors import PiError
from pi_tui.core.messages import AgentMessage, AssistantMessage
from pi_tui.core.overflow import is_context_overflow
from pi_tui.core.provider import ModelInfo, Provider
from pi_tui.core.session.entries import ms_from_iso
from pi_tui.core.tokens import calculate_context_tokens, estimate_context_tokens, should_compact
from pi_tui.session.summarizer import (
    SummaryCancelled,
    call_summarizer,
    summary_request,
    summary_text_or_raise,
)

CIRCUIT_BREAKER_FAILURES = 3
OVERFLOW_RECOVERY_FAILED = (
    "Context overflow recovery failed after one compact-and-retry attempt. "
    "Try reducing context or switching to a larger-context model."
)
OVERFLOW_WITH_COMPACTION_DISABLED = (
    "The request exceeded the model's context window, and automatic compaction is off "
    "(compaction.enabled = false). Run /compact, start a new session, or switch to a "
    "larger-context model."
)
CANCELLED = "Compaction cancelled"


class CompactionHost(Protocol):
    """What the runner needs from ``AgentSession`` (a fake with a real SessionManager in tests)."""

    session_manager: Any
    settings: Any
    extensions: Any
    thinking_level: Any

    def emit(self, event: dict[str, Any]) -> None: ...
    def current_model(self) -> ModelInfo | None: ...
    def provider_for(self, model: ModelInfo) -> Provider: ...
    def api_key_for(self, model: ModelInfo) -> str | None: ...


class CompactionFailed(PiError):
    pass


class CompactionRunner:
    def __init__(self, host: CompactionHost) -> None:
        self.host = host
        self._failures = 0
        self._circuit_open = False
        self._overflow_attempted = False
        self._active: set[asyncio.Task[Any]] = set()
        self._busy = 0
        self._cancel_requested = False
        self._preparer: Any = None
        self._own_lock: asyncio.Lock | None = None
        subscribe = getattr(host, "subscribe", None)
        if callable(subscribe):
            subscribe(self.observe)

    # ------------------------------------------------------------------ state

    @property
    def lock(self) -> asyncio.Lock:
        """The host's lock (``operation_lock``, or AgentSession's ``lock``); our own without one."""
        lock = getattr(self.host, "operation_lock", None) or getattr(self.host, "lock", None)
        if isinstance(lock, asyncio.Lock):
            return lock
        if self._own_lock is None:
            self._own_lock = asyncio.Lock()
        return self._own_lock

    @property
    def is_compacting(self) -> bool:
        return self._busy > 0

    @property
    def circuit_open(self) -> bool:
        return self._circuit_open

    @property
    def consecutive_failures(self) -> int:
        return self._failures

    def abort(self) -> None:
        """Cancel a running summarizer call; the operation ends as cancelled, nothing written."""
        self._cancel_requested = True
        for task in list(self._active):
            task.cancel()

    def observe(self, event: dict[str, Any]) -> None:
        """Session events reset the overflow guard: a new user message or a good answer."""
        if event.get("type") == "message_start" and event.get("message", {}).get("role") == "user":
            self._overflow_attempted = False
        elif event.get("type") == "message_end":
            message = event.get("message", {})
            if message.get("role") == "assistant" and message.get("stopReason") != "error":
                self._overflow_attempted = False

    def settings_for(self, model: ModelInfo | None) -> CompactionSettings:
        getter = getattr(self.host.settings, "compaction_settings", None)
        if not callable(getter):
            return CompactionSettings()
        raw = getter(model.provider, model.id) if model is not None else getter()
        return coerce_compaction_settings(raw)

    # ------------------------------------------------------------------ manual

    async def compact(self, custom_instructions: str | None = None) -> CompactionResult:
        """``/compact [focus]``: raises ``PiError`` with pi's messages on failure."""
        self.host.emit({"type": "compaction_start", "reason": "manual"})
        started = time.monotonic()
        try:
            async with self.lock:
                result, tokens_after = await self._compact_locked("manual", custom_instructions, will_retry=False)
        except BaseException as err:
            aborted = isinstance(err, SummaryCancelled | asyncio.CancelledError) or str(err) == CANCELLED
            end: dict[str, Any] = {"type": "compaction_end", "reason": "manual", "result": None, "aborted": aborted, "willRetry": False}
            if not aborted:
                end["errorMessage"] = f"Compaction failed: {err}"
            self.host.emit(end)
            await self._emit_failed("manual", str(err), aborted=aborted, will_retry=False)
            if isinstance(err, asyncio.CancelledError) and not self._cancel_requested:
                raise
            if aborted:
                raise PiError(CANCELLED) from None
            raise
        self._failures = 0
        self._circuit_open = False
        self.host.emit(self._end_event("manual", result, tokens_after, started, will_retry=False))
        return result

    # ------------------------------------------------------------------ automatic

    async def check_after_run(self, last_assistant: AssistantMessage) -> bool:
        """After a run: overflow → compact and tell the caller to ``continue()`` once (True)."""
        return await self._check(last_assistant, skip_aborted=True)

    async def check_before_prompt(self, last_assistant: AssistantMessage | None = None) -> None:
        """Before a new prompt: the last assistant in the agent's state, aborted ones included."""
        if last_assistant is None:
            last_assistant = self._last_assistant_in_state()
        if last_assistant is not None:
            await self._check(last_assistant, skip_aborted=False)

    def _last_assistant_in_state(self) -> AssistantMessage | None:
        agent = getattr(self.host, "agent", None)
        messages = list(getattr(agent, "messages", None) or self.host.session_manager.build_session_context().messages)
        for message in reversed(messages):
            if message.get("role") == "assistant":
                found: AssistantMessage = message
                return found
        return None

    async def _check(self, message: AssistantMessage, *, skip_aborted: bool) -> bool:
        model = self.host.current_model()
        if model is None:
            return False
        settings = self.settings_for(model)
        overflow = (
            message.get("provider") == model.provider
            and message.get("model") == model.id
            and is_context_overflow(message, model.context_window)
        )
        if not settings.enabled:
            if overflow and message.get("stopReason") == "error":
                self.host.emit({"type": "notify", "level": "error", "message": OVERFLOW_WITH_COMPACTION_DISABLED})
            return False
        if skip_aborted and message.get("stopReason") == "aborted":
            return False
        if message.get("timestamp", 0) <= self._latest_compaction_ms():
            return False  # usage from before the latest compaction says nothing about now
        if overflow:
            if self._overflow_attempted:
                self.host.emit({"type": "compaction_end", "reason": "overflow", "result": None, "aborted": False,
                                "willRetry": False, "errorMessage": OVERFLOW_RECOVERY_FAILED})
                return False
            self._overflow_attempted = True
            return await self._run_auto("overflow", will_retry=True)
        tokens = self._context_tokens(message)
        if tokens is not None and should_compact(tokens, model.context_window, enabled=True, reserve_tokens=settings.reserve_tokens):
            await self._run_auto("threshold", will_retry=False)
        return False

    def _latest_compaction_ms(self) -> int:
        for entry in reversed(self.host.session_manager.get_branch()):
            if entry.get("type") == "compaction":
                try:
                    return ms_from_iso(str(entry.get("timestamp", "")))
                except ValueError:
                    return 0
        return 0

    def _context_tokens(self, message: AssistantMessage) -> int | None:
        if message.get("stopReason") != "error":
            return calculate_context_tokens(message["usage"])
        messages = self.host.session_manager.build_session_context().messages
        estimate = estimate_context_tokens(messages)
        if estimate.last_usage_index is None:
            return None
        anchor = messages[estimate.last_usage_index]
        if anchor.get("timestamp", 0) <= self._latest_compaction_ms():
            return None
        return estimate.tokens

    async def _run_auto(self, reason: str, *, will_retry: bool) -> bool:
        if self._circuit_open:
            return False
        self.host.emit({"type": "compaction_start", "reason": reason})
        started = time.monotonic()
        try:
            async with self.lock:
                outcome = await self._compact_locked(reason, None, will_retry=will_retry, automatic=True)
        except (SummaryCancelled, asyncio.CancelledError) as err:
            self.host.emit({"type": "compaction_end", "reason": reason, "result": None, "aborted": True, "willRetry": False})
            await self._emit_failed(reason, str(err) or CANCELLED, aborted=True, will_retry=will_retry)
            return False
        except _NothingToDo as err:
            end: dict[str, Any] = {"type": "compaction_end", "reason": reason, "result": None, "aborted": False, "willRetry": False}
            if reason == "overflow":  # the user must learn why the request is not retried
                end["errorMessage"] = f"Context overflow recovery failed: {err}"
            self.host.emit(end)
            return False
        except Exception as err:
            prefix = "Context overflow recovery failed" if reason == "overflow" else "Auto-compaction failed"
            self.host.emit({"type": "compaction_end", "reason": reason, "result": None, "aborted": False,
                            "willRetry": False, "errorMessage": f"{prefix}: {err}"})
            await self._emit_failed(reason, str(err), aborted=False, will_retry=will_retry)
            self.record_failure()
            return False
        result, tokens_after = outcome
        self._failures = 0
        self.host.emit(self._end_event(reason, result, tokens_after, started, will_retry=will_retry))
        return will_retry

    def record_failure(self) -> None:
        """Count a failed automatic compaction; open the circuit at the limit."""
        self._failures += 1
        if self._failures >= CIRCUIT_BREAKER_FAILURES and not self._circuit_open:
            self._circuit_open = True
            self.host.emit({
                "type": "compaction_circuit_open",
                "failures": self._failures,
                "message": f"Automatic compaction failed {self._failures} times in a row and is paused. "
                           "Run /compact to try again by hand.",
            })

    # ------------------------------------------------------------------ the compaction itself

    async def _compact_locked(
        self, reason: str, custom_instructions: str | None, *, will_retry: bool, automatic: bool = False
    ) -> tuple[CompactionResult, int]:
        """Prepare, ask the extensions, summarize, check the gain, append. Caller holds the lock."""
        self._busy += 1
        self._cancel_requested = False
        try:
            model = self._require_model()
            api_key = self._require_key(model)
            settings = self.settings_for(model)
            sm = self.host.session_manager
            path = sm.get_branch()
            preparation = prepare_compaction(path, settings)
            if preparation is None:
                if path and path[-1].get("type") == "compaction":
                    raise _NothingToDo("Already compacted") if automatic else PiError("Already compacted")
                raise _NothingToDo("Nothing to compact (session too small)") if automatic else PiError(
                    "Nothing to compact (session too small)")
            decision = await self._ask_extensions(preparation, path, custom_instructions, reason, will_retry)
            from_extension = decision is not None
            if decision is not None:
                result = CompactionResult(
                    summary=decision["summary"], first_kept_entry_id=decision["firstKeptEntryId"],
                    tokens_before=int(decision["tokensBefore"]), details=decision.get("details"),
                )
            else:
                if preparation.nothing_to_summarize:
                    raise (_NothingToDo if automatic else PiError)("Nothing to compact (session too small)")
                result = await self._summarize(preparation, model, api_key, custom_instructions)
            tokens_after = self._check_gain(path, preparation, result, from_extension)
            entry_id = sm.append_compaction(
                result.summary, result.first_kept_entry_id, result.tokens_before, result.details, from_extension
            )
            self._replace_messages(drop_trailing_error=will_retry)
            await self._emit_session_compact(sm.get_entry(entry_id), from_extension)
            return result, tokens_after
        finally:
            self._busy -= 1

    def _require_model(self) -> ModelInfo:
        model = self.host.current_model()
        if model is None:
            require = getattr(self.host, "_require_model", None)
            if callable(require):
                require()
            raise PiError("No model selected.\n\nThen use /model to select a model.")
        return model

    def _require_key(self, model: ModelInfo) -> str | None:
        check = getattr(self.host, "_check_credentials", None)
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
        decision = await emit(
            preparation=preparation.to_json(), branch_entries=list(path), custom_instructions=custom_instructions,
            reason=reason, will_retry=will_retry, signal=None,
        )
        if getattr(decision, "cancel", False):
            raise SummaryCancelled(CANCELLED)
        compaction = getattr(decision, "compaction", None)
        return compaction if isinstance(compaction, dict) else None

    async def _summarize(
        self, preparation: CompactionPreparation, model: ModelInfo, api_key: str | None, custom_instructions: str | None
    ) -> CompactionResult:
        provider = self.host.provider_for(model)
        reasoning = summary_reasoning(model.reasoning, str(self.host.thinking_level))
        calls: list[Any] = []
        if needs_history_call(preparation):
            spec = history_request(preparation, custom_instructions=custom_instructions, reasoning=reasoning,
                                   context_window=model.context_window)
            calls.append(self._call(provider, summary_request(model, spec, api_key), "Summarization failed"))
        if preparation.is_split_turn and preparation.turn_prefix_messages:
            spec = turn_prefix_request(preparation, reasoning=reasoning, context_window=model.context_window)
            calls.append(self._call(provider, summary_request(model, spec, api_key), "Turn prefix summarization failed"))
        texts = await asyncio.gather(*calls)  # pi 0.73.1 runs the two calls in parallel
        history = texts[0] if needs_history_call(preparation) else None
        prefix = texts[-1] if preparation.is_split_turn and preparation.turn_prefix_messages else None
        return assemble_result(preparation, history, prefix)

    async def _call(self, provider: Provider, request: Any, failure_prefix: str) -> str:
        task = asyncio.ensure_future(call_summarizer(provider, request))
        self._active.add(task)
        try:
            message = await task
        except asyncio.CancelledError:
            if self._cancel_requested:
                raise SummaryCancelled(CANCELLED) from None
            raise
        finally:
            self._active.discard(task)
        return summary_text_or_raise(message, failure_prefix)

    def _check_gain(self, path: Sequence[Any], preparation: CompactionPreparation, result: CompactionResult, from_extension: bool) -> int:
        """A pi-made summary must make the context smaller; returns the estimate after."""
        kept_index = next((i for i, e in enumerate(path) if e.get("id") == result.first_kept_entry_id), preparation.first_kept_index)
        before, after = estimate_tokens_now_and_after(path, kept_index, result.summary)
        if not from_extension and after >= before:
            raise CompactionFailed(f"the summary did not make the context smaller ({before} → {after} estimated tokens)")
        return after

    def _replace_messages(self, *, drop_trailing_error: bool = False) -> None:
        """The agent continues from the rebuilt context (summary + kept + newer)."""
        messages = list(self.host.session_manager.build_session_context().messages)
        if drop_trailing_error and messages and messages[-1].get("role") == "assistant" and messages[-1].get("stopReason") == "error":
            messages.pop()  # the failed answer stays in the session file, not in the retry
        if self._preparer is not None:
            self._preparer.invalidate()
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

    # ------------------------------------------------------------------ tree and pipeline

    async def navigate_tree(self, target_id: str, **options: Any) -> Any:
        from pi_tui.session.branch_navigation import navigate_tree

        return await navigate_tree(self, target_id, **options)

    async def prepare_request_messages(self, messages: list[AgentMessage]) -> list[AgentMessage]:
        """The built-in request reducer (``context.strategy = "pipeline"``), between model calls."""
        from pi_tui.session.pipeline_runner import prepare_request_messages

        return await prepare_request_messages(self, messages)


class _NothingToDo(PiError):
    """Automatic compaction found nothing to cut: not a failure, no summarizer call."""
