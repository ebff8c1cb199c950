"""``CompactionRunner``: when and how the session compacts (pi-behaviour.md §2.8, §13.2, §3).

The pure decisions (what to cut, what to send) are in ``pi_tui.core.context``; this class makes
the model calls, runs the extension hooks, appends the entries and emits the events.

Bounds pi-tui adds on purpose (each one a failure mode users of coding agents have hit):

* one compact-and-retry per overflow; a second overflow ends with pi's "recovery failed" text;
* a circuit breaker: after 3 consecutive failed *automatic* compactions, automatic compaction
  stops (``compaction_circuit_open``); manual ``/compact`` still works and closes it again. It
  belongs to one session, and the pipeline's summary step has its own (``compaction_state``);
* an empty, thinking-only or truncated summary is a failure; an automatic summary that does
  not make the context smaller is a failure; nothing is written after a failure;
* keep-recent is bounded by the window (``fit_to_window``); a threshold compaction with nothing
  to cut, or one that would repeat a compaction that left the context above the threshold, is
  not started (no summarizer call, no empty start/end pair; the events pane says so once);
* no summarizer call when there is nothing to summarize (pi sends an empty conversation);
* an abort reaches every step (extension hooks get the signal and are cancelled, the
  summarizer calls are cancelled) and is checked right before the entry is written;
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
import contextlib
import copy
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, cast

from pi_tui.agent.abort import AbortSignal
from pi_tui.core.context.compaction import (
    CompactionResult,
    CompactionSettings,
    coerce_compaction_settings,
    compaction_threshold,
    fit_to_window,
    nothing_to_do,
    prepare_compaction,
)
from pi_tui.core.errors import PiError
from pi_tui.core.messages import AgentMessage, AssistantMessage
from pi_tui.core.overflow import is_context_overflow
from pi_tui.core.provider import ModelInfo
from pi_tui.core.session.entries import ms_from_iso
from pi_tui.core.tokens import calculate_context_tokens, estimate_context_tokens, should_compact
from pi_tui.session.compaction_state import (
    CIRCUIT_BREAKER_FAILURES,
    Breaker,
    SessionCompactionState,
)
from pi_tui.session.compaction_steps import (
    CANCELLED,
    CompactionFailed,
    CompactionHost,
    CompactionSteps,
)
from pi_tui.session.summarizer import SummaryCancelled

__all__ = ["CANCELLED", "CIRCUIT_BREAKER_FAILURES", "CompactionFailed", "CompactionHost", "CompactionRunner"]

OVERFLOW_RECOVERY_FAILED = (
    "Context overflow recovery failed after one compact-and-retry attempt. "
    "Try reducing context or switching to a larger-context model."
)
OVERFLOW_WITH_COMPACTION_DISABLED = (
    "The request exceeded the model's context window, and automatic compaction is off "
    "(compaction.enabled = false). Run /compact, start a new session, or switch to a "
    "larger-context model."
)


@dataclass(frozen=True, slots=True)
class _Outcome:
    result: CompactionResult
    tokens_before: int
    """chars/4 estimate of the messages before (what ``tokens_after`` compares with)."""
    tokens_after: int


class CompactionRunner(CompactionSteps):
    def __init__(self, host: CompactionHost) -> None:
        self.host = host
        self._states: dict[str | None, SessionCompactionState] = {}
        self._state_key: str | None = None
        self._busy = 0
        self.current_signal: AbortSignal | None = None
        self.request_preparer: Any = None
        self.last_request_bytes: int | None = None
        """Pipeline: the size of the last prepared request (what its summary threshold compared)."""
        self.preparation_reuse: Counter[str] = Counter()
        """Pipeline: how often the preparation cache reused its output (``identical``), the
        prepared prefix (``append``) or nothing (``none``)."""
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
    def state(self) -> SessionCompactionState:
        """The state of the session the host has now (a new session starts clean)."""
        key = getattr(self.host.session_manager, "session_id", None)
        if key != self._state_key:
            self._state_key = key
            if self.request_preparer is not None:
                self.request_preparer.invalidate()
        state = self._states.get(key)
        if state is None:
            state = self._states[key] = SessionCompactionState()
        return state

    @property
    def is_compacting(self) -> bool:
        return self._busy > 0

    @property
    def circuit_open(self) -> bool:
        """Automatic (threshold/overflow) compaction is paused in this session."""
        return self.state.automatic.open

    @property
    def pipeline_circuit_open(self) -> bool:
        return self.state.pipeline.open

    @property
    def consecutive_failures(self) -> int:
        return self.state.automatic.failures

    @contextmanager
    def operation(self) -> Iterator[AbortSignal]:
        """One compaction, pipeline summary or branch summary: ``is_compacting`` while it runs,
        and an abort signal that ``abort()`` fires."""
        signal, previous = AbortSignal(), self.current_signal
        self.current_signal = signal
        self._busy += 1
        try:
            yield signal
        finally:
            self._busy -= 1
            self.current_signal = previous

    def abort(self) -> None:
        """Abort the running operation wherever it is: an extension hook, a summarizer call, or
        between them. It ends as cancelled with nothing written."""
        if self.current_signal is not None:
            self.current_signal.abort()

    def observe(self, event: dict[str, Any]) -> None:
        """Session events reset the overflow guard: a new user message or a good answer."""
        if event.get("type") == "message_start" and event.get("message", {}).get("role") == "user":
            self.state.overflow_attempted = False
            self.state.threshold_attempted = False
        elif event.get("type") == "message_end":
            message = event.get("message", {})
            if message.get("role") == "assistant" and message.get("stopReason") != "error":
                self.state.overflow_attempted = False

    def settings_for(self, model: ModelInfo | None) -> CompactionSettings:
        getter = getattr(self.host.settings, "compaction_settings", None)
        if not callable(getter):
            return CompactionSettings()
        raw = getter(model.provider, model.id) if model is not None else getter()
        settings = coerce_compaction_settings(raw)
        return fit_to_window(settings, model.context_window) if model is not None else settings

    def note_once(self, key: str, message: str, *, level: str = "warning") -> None:
        """A notice shown once per session (events pane and every mode's notify)."""
        state = self.state
        if key not in state.notes_shown:
            state.notes_shown.add(key)
            self.host.emit({"type": "notify", "level": level, "message": message})

    def _note_bounded_keep(self, model: ModelInfo) -> None:
        getter = getattr(self.host.settings, "compaction_settings", None)
        if not callable(getter):
            return
        asked = coerce_compaction_settings(getter(model.provider, model.id))
        used = fit_to_window(asked, model.context_window)
        if used.keep_recent_tokens < asked.keep_recent_tokens:
            self.note_once(
                f"keep:{model.provider}/{model.id}:{asked.keep_recent_tokens}",
                f"compaction.keepRecentTokens {asked.keep_recent_tokens:,} is more than half of "
                f"{model.id}'s compaction threshold ({compaction_threshold(used, model.context_window):,} tokens); "
                f"compaction keeps {used.keep_recent_tokens:,} so that it brings the context below the threshold.",
            )

    # ------------------------------------------------------------------ manual

    async def compact(self, custom_instructions: str | None = None) -> CompactionResult:
        """``/compact [focus]``: raises ``PiError`` with pi's messages on failure."""
        self.host.emit({"type": "compaction_start", "reason": "manual"})
        started = time.monotonic()
        with self.operation() as signal:
            try:
                async with self.lock:
                    outcome = await self._compact_locked("manual", custom_instructions, will_retry=False)
            except BaseException as err:
                aborted = signal.aborted or isinstance(err, SummaryCancelled) or str(err) == CANCELLED
                end: dict[str, Any] = {"type": "compaction_end", "reason": "manual", "result": None, "aborted": aborted, "willRetry": False}
                if not aborted:
                    end["errorMessage"] = f"Compaction failed: {err}"
                self.host.emit(end)
                await self._emit_failed("manual", str(err), aborted=aborted, will_retry=False)
                if isinstance(err, asyncio.CancelledError) and not signal.aborted:
                    raise
                if aborted:
                    raise PiError(CANCELLED) from None
                raise
        state = self.state
        state.automatic.reset()
        state.pipeline.reset()
        state.threshold_stuck = None
        self.host.emit(self._end_event("manual", outcome.result, outcome.tokens_after, started, will_retry=False))
        return outcome.result

    # ------------------------------------------------------------------ automatic

    async def check_after_run(self, last_assistant: AssistantMessage) -> bool:
        """After a run: overflow → compact and tell the caller to ``continue()`` once (True).
        A one-shot session (a subagent child) has answered: no threshold compaction now."""
        return await self._check(last_assistant, skip_aborted=True, threshold=not getattr(self.host, "one_shot", False))

    async def compact_before_request(self, messages: list[AgentMessage], transform: Any = None) -> list[AgentMessage]:
        """A one-shot session's threshold check between its turns (the loop holds the lock): the
        request is rebuilt from the session after a compaction, through ``transform`` again."""
        last = cast("AssistantMessage | None", next((m for m in reversed(messages) if m.get("role") == "assistant"), None))
        if last is None or last.get("stopReason") in ("error", "aborted") or not await self._check(
                last, skip_aborted=True, overflow=False, held=True):
            return messages
        fresh = list(self.host.session_manager.build_session_context().messages)
        return list(await transform(copy.deepcopy(fresh))) if transform is not None else fresh

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

    async def _check(self, message: AssistantMessage, *, skip_aborted: bool, threshold: bool = True,
                     overflow: bool = True, held: bool = False) -> bool:
        """True after an overflow compaction (the caller retries) or, ``threshold`` only, after a
        threshold compaction; ``held``: the caller holds the lock (inside a run)."""
        model = self.host.current_model()
        if model is None:
            return False
        settings = self.settings_for(model)
        overflow = overflow and (
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
        state = self.state
        if overflow:
            if state.overflow_attempted:
                self.host.emit({"type": "compaction_end", "reason": "overflow", "result": None, "aborted": False,
                                "willRetry": False, "errorMessage": OVERFLOW_RECOVERY_FAILED})
                return False
            state.overflow_attempted = True
            return await self._run_auto("overflow", will_retry=True)
        tokens = self._context_tokens(message) if threshold else None
        if tokens is not None and should_compact(tokens, model.context_window, enabled=True, reserve_tokens=settings.reserve_tokens):
            if state.threshold_attempted or self._threshold_compaction_futile(model, settings):
                return False
            state.threshold_attempted = True
            leaf = self.host.session_manager.leaf_id
            await self._run_auto("threshold", will_retry=False, tokens=tokens, held=held)
            return held and self.host.session_manager.leaf_id != leaf  # written: the context changed
        return False

    def _stuck_key(self, model: ModelInfo, settings: CompactionSettings) -> tuple[object, ...]:
        """What "the same reason" means: the same model and settings, and the same latest
        compaction on the path (a /tree move to another branch is another context)."""
        latest = next((e.get("id") for e in reversed(self.host.session_manager.get_branch()) if e.get("type") == "compaction"), None)
        return (model.provider, model.id, model.context_window, settings.reserve_tokens, settings.keep_recent_tokens, latest)

    def _threshold_compaction_futile(self, model: ModelInfo, settings: CompactionSettings) -> bool:
        """Above the threshold, but a compaction would not help: don't start one (no summarizer
        call, no empty start/end pair); say why once."""
        self._note_bounded_keep(model)
        state = self.state
        threshold = compaction_threshold(settings, model.context_window)
        if state.threshold_stuck is not None and state.threshold_stuck == self._stuck_key(model, settings):
            self.note_once(
                f"stuck:{state.threshold_stuck}",
                f"The last compaction left the context above the compaction threshold ({threshold:,} tokens); "
                "compacting again would do the same, so automatic compaction waits (an overflow still "
                "compacts). Run /compact, lower compaction.keepRecentTokens, or pick a larger-context model.",
            )
            return True
        preparation = prepare_compaction(self.host.session_manager.get_branch(), settings)
        if preparation is None or nothing_to_do(preparation, model.context_window):
            self.note_once(
                f"nothing:{model.provider}/{model.id}",
                f"The context is above the compaction threshold ({threshold:,} tokens), but everything in it is "
                f"among the most recent {settings.keep_recent_tokens:,} tokens that compaction keeps (the system "
                "prompt and tools count too), so there is nothing to summarize.",
            )
            return True
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

    async def _run_auto(self, reason: str, *, will_retry: bool, tokens: int | None = None, held: bool = False) -> bool:
        state = self.state
        if state.automatic.open:
            return False
        self.host.emit({"type": "compaction_start", "reason": reason})
        started = time.monotonic()
        with self.operation():
            try:
                async with contextlib.nullcontext() if held else self.lock:
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
        state.automatic.failures = 0
        self._remember_if_stuck(reason, outcome, tokens)
        self.host.emit(self._end_event(reason, outcome.result, outcome.tokens_after, started, will_retry=will_retry))
        return will_retry

    def _remember_if_stuck(self, reason: str, outcome: _Outcome, tokens: int | None) -> None:
        """After a threshold compaction: is the context still above the threshold? The estimate
        after covers the messages only; what the provider counted beyond them at the trigger
        (system prompt, tools) is added back."""
        model = self.host.current_model()
        if model is None:
            return
        settings = self.settings_for(model)
        state = self.state
        overhead = max(0, tokens - outcome.tokens_before) if tokens is not None else 0
        above = outcome.tokens_after + overhead > compaction_threshold(settings, model.context_window)
        if reason == "threshold" and above:
            state.threshold_stuck = self._stuck_key(model, settings)
        elif not above:
            state.threshold_stuck = None

    def record_failure(self) -> None:
        """Count a failed automatic compaction; open the circuit at the limit."""
        breaker = self.state.automatic
        if breaker.failed():
            self._emit_circuit_open(breaker, "automatic", "Automatic compaction")

    def record_pipeline_failure(self) -> None:
        """Count a rejected or failed pipeline summary (its own breaker)."""
        breaker = self.state.pipeline
        if breaker.failed():
            self._emit_circuit_open(breaker, "pipeline", "The pipeline's summary step")

    def _emit_circuit_open(self, breaker: Breaker, source: str, what: str) -> None:
        self.host.emit({
            "type": "compaction_circuit_open",
            "failures": breaker.failures,
            "source": source,
            "message": f"{what} failed {breaker.failures} times in a row and is paused for this session. "
                       "Run /compact to try again by hand.",
        })

    # ------------------------------------------------------------------ the compaction itself

    async def _compact_locked(
        self, reason: str, custom_instructions: str | None, *, will_retry: bool, automatic: bool = False
    ) -> _Outcome:
        """Prepare, ask the extensions, summarize, check the gain, append. Caller holds the lock
        and runs inside ``operation()``; an abort anywhere before the append writes nothing."""
        self.raise_if_aborted()
        model = self._require_model()
        api_key = self.require_key(model)
        settings = self.settings_for(model)
        self._note_bounded_keep(model)
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
            if nothing_to_do(preparation, model.context_window):
                raise (_NothingToDo if automatic else PiError)("Nothing to compact (session too small)")
            result = await self._summarize(preparation, model, api_key, custom_instructions)
        before, after = self._check_gain(path, preparation, result, from_extension, manual=not automatic)
        self.raise_if_aborted()  # the last moment an abort can stop it: nothing is written after this
        entry_id = sm.append_compaction(
            result.summary, result.first_kept_entry_id, result.tokens_before, result.details, from_extension
        )
        self.replace_messages(drop_trailing_error=will_retry)
        await self._emit_session_compact(sm.get_entry(entry_id), from_extension)
        return _Outcome(result, before, after)

    # ------------------------------------------------------------------ tree and pipeline

    async def navigate_tree(self, target_id: str, **options: Any) -> Any:
        from pi_tui.session.branch_navigation import navigate_tree

        return await navigate_tree(self, target_id, **options)

    async def prepare_request_messages(self, messages: list[AgentMessage], transform: Any = None) -> list[AgentMessage]:
        """The built-in request reducer (``context.strategy = "pipeline"``), between model calls;
        ``transform`` is the context transform the loop ran before it (see ``pipeline_runner``)."""
        from pi_tui.session.pipeline_runner import prepare_request_messages

        return await prepare_request_messages(self, messages, transform)


class _NothingToDo(PiError):
    """Automatic compaction found nothing to cut: not a failure, no summarizer call."""
