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
from typing import Any

from pi_tui.core.context.compaction import (
    CompactionResult,
    CompactionSettings,
    coerce_compaction_settings,
    fit_to_window,
    prepare_compaction,
)
from pi_tui.core.errors import PiError
from pi_tui.core.messages import AgentMessage, AssistantMessage
from pi_tui.core.overflow import is_context_overflow
from pi_tui.core.provider import ModelInfo
from pi_tui.core.session.entries import ms_from_iso
from pi_tui.core.tokens import calculate_context_tokens, estimate_context_tokens, should_compact
from pi_tui.session.compaction_steps import (
    CANCELLED,
    CompactionFailed,
    CompactionHost,
    CompactionSteps,
)
from pi_tui.session.summarizer import SummaryCancelled

__all__ = ["CANCELLED", "CompactionFailed", "CompactionHost", "CompactionRunner"]

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


class CompactionRunner(CompactionSteps):
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
        self._pipeline_summary_at: int | None = None
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
        settings = coerce_compaction_settings(raw)
        return fit_to_window(settings, model.context_window) if model is not None else settings

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
