"""A stateful property test of compaction (issue 12): Hypothesis drives a real AgentSession on the
scripted provider through prompts with tool results of random sizes and alphabets (CJK and emoji
included), steering and follow-ups (typed while an answer streams, a tool runs or a compaction
runs), aborts at any await point (at the n-th event, or a few loop ticks into a running
compaction, pipeline summary or branch summary), ``/compact [focus]``, ``/new``, ``/tree`` moves,
model switches between 8k and 1M windows, keep/reserve settings (keep above the threshold
included), both strategies, and summarizer faults. After every step it checks:

* the session file only grows, every entry ever appended is still there, and it loads;
* a compaction entry exists only with a non-empty summary that passed validation;
* per user turn at most one threshold and one overflow compaction, and no threshold compaction
  repeats one that left the context above the threshold; no empty threshold start/end pair, and
  the once-only notices (keep bounded by the window, nothing to cut) said once per session;
* nothing queued is lost: each steer/follow-up was sent or is still visibly queued, and a prompt
  that ended in a good answer without an abort left nothing queued (§2.8 step 5);
* every compaction entry has its success event (an aborted or failed one wrote nothing), an
  operation aborted while it ran wrote nothing after the abort, and the session is idle with
  ``is_compacting`` false;
* breaker state belongs to one session (``/new`` starts clean);
* pipeline: the bytes it measured are the bytes of the request sent (counted here on their own),
  calls and results pair up, and after a summary the request is below the threshold; one
  turn's results kept inline stay within ``turnInlineLimitBytes``, sequential execution too;
* no summarizer request is refused for its size (the fit, the previous-summary cap): one that is
  is a compaction that can never succeed on that model.
* no history is lost between compactions: a compaction after another on its path carries that
  one's summary, whole (a split turn whose history part is empty) or through the summarizer
  request that wrote it (``<previous-summary>``); a steered rule reaches the split turn every
  example that draws it.

``make test`` runs a bounded number of examples; ``make soak-compaction`` (PI_TUI_SOAK=1) many more.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import event as hypothesis_event
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from pi_tui.core.context.compaction import compaction_threshold
from pi_tui.core.context.compaction_prompts import SPLIT_TURN_SEPARATOR
from pi_tui.core.errors import PiError
from pi_tui.core.provider import ModelInfo
from pi_tui.resources.settings import SettingsManager
from pi_tui.sdk import create_agent_session
from pi_tui.testing.scripted import ScriptedProvider
from tests.session.compaction_machine_support import (
    ALPHABETS,
    FAULTS,
    PIPELINE_SYSTEM_MARK,
    TREE_MOVED,
    AbortMark,
    EventLog,
    Logged,
    WindowScript,
    check_abort,
    check_compaction_entries,
    check_events,
    check_file_grows,
    check_inline_per_turn,
    check_previous_summary_carried,
    check_request,
    check_turn_bounds,
    count_entries,
    make_text,
    summarizer_turn,
)
from tests.session.conftest import FakeClock

SOAK = bool(os.environ.get("PI_TUI_SOAK"))
WINDOWS = (8192, 16_384, 32_000, 128_000, 200_000, 1_000_000)
SMALL_WINDOWS_FIRST = st.sampled_from((8192, 16_384, 32_000, 32_000, 128_000, 1_000_000))
"""Where compaction happens within a few turns is where the edges are: drawn more often."""
STEP_TIMEOUT = 30.0
SLOW_HOOKS = '''
import asyncio

def register(pi):
    @pi.on("session_before_compact")
    async def pause(event):
        for _ in range(3):
            await asyncio.sleep(0)

    @pi.on("session_before_tree")
    async def pause_tree(event):
        await asyncio.sleep(0)
'''

sizes = st.sampled_from([0, 40, 400, 3_000, 12_000, 12_000, 25_000, 40_000])
alphabets = st.sampled_from(sorted(ALPHABETS))
tool_results = st.lists(st.tuples(alphabets, sizes), max_size=3)
rounds = st.sampled_from([1, 1, 1, 2, 3])
"""Tool rounds in one turn: a turn that goes on after a compaction kept from its start."""
interjections = st.none() | st.tuples(
    st.sampled_from(["steer", "follow_up"]), st.sampled_from(["message_update", "tool_execution_start", "compaction_start", "compaction_start"]))
"""A steer or follow-up typed while the answer streams, a tool runs, or a compaction runs."""
ticks = st.integers(min_value=0, max_value=12)
abort_at = st.none() | st.tuples(st.just("event"), st.integers(min_value=1, max_value=60), ticks) | st.tuples(
    st.just("compacting"), ticks)
"""When an operation is aborted: at its n-th event, or once a compaction, pipeline summary or
branch summary is running; either way after a number of event-loop ticks, so that the abort
lands on every await point (the lock, each extension hook, the summarizer's stream, the write)."""
faults = st.sampled_from(("ok", "ok", "ok", *FAULTS))
"""How the summarizer answers during a step: drawn with each step that may summarize, so that
every fault meets every kind of compaction within a bounded number of examples."""


def model(window: int) -> ModelInfo:
    return ModelInfo(provider="fake", id=f"m{window}", context_window=window, max_tokens=4096, reasoning=True)


class CompactionMachine(RuleBasedStateMachine):
    @initialize(window=SMALL_WINDOWS_FIRST)
    def start(self, window: int) -> None:
        self.loop = asyncio.new_event_loop()
        self.root = Path(tempfile.mkdtemp(prefix="pi-tui-machine-"))
        self.project = self.root / "project"
        self.project.mkdir()
        hooks = self.root / "slow_hooks.py"
        hooks.write_text(SLOW_HOOKS)
        self.fault = "ok"
        self.agent_turns: list[dict[str, Any]] = []
        self.problems: list[str] = []
        self.queued: set[str] = set()
        self.sent_user_texts: set[str] = set()
        self.files: dict[Path, tuple[bytes, set[str]]] = {}
        self.manual_summaries: set[str] = set()
        self.thresholds: dict[tuple[Any, ...], int] = {}
        self.summary_requests: dict[str, str] = {}
        """Each summarizer answer's marker (``SUM-<n>``) → the text of the request it answered."""
        self.steered = False
        self.counter = 0
        self.provider = ScriptedProvider([])
        self.provider.script = WindowScript(self._answer, self.provider.requests)
        self.session = create_agent_session(
            cwd=self.project, agent_dir=self.root / "agent", provider=self.provider, model=model(window),
            settings=SettingsManager.in_memory({}), load_extensions=False, extension_paths=[str(hooks)],
            clock=FakeClock(),
        )
        self.log = EventLog()
        self.session.subscribe(self._record)
        self.successes = 0
        self.abort_marks: list[AbortMark] = []
        self.written_at: dict[int, int] = {}

    def teardown(self) -> None:
        if hasattr(self, "session"):
            self.session.session_manager.close()
        if hasattr(self, "loop"):
            self.loop.close()
        if hasattr(self, "root"):
            shutil.rmtree(self.root, ignore_errors=True)

    # ------------------------------------------------------------------ plumbing

    @property
    def runner(self) -> Any:
        return self.session.compaction_runner

    def _key(self) -> tuple[Any, ...]:
        current = self.session.model
        assert current is not None
        used = self.runner.settings_for(current)
        key = (current.id, current.context_window, used.reserve_tokens, used.keep_recent_tokens)
        self.thresholds[key] = compaction_threshold(used, current.context_window)
        return key

    def _record(self, event: dict[str, Any]) -> None:
        self.log.events.append(Logged(event, self._key()))
        kind = event.get("type")
        if kind == "compaction_end":
            self.written_at[len(self.log.events) - 1] = count_entries(self.session.session_manager.get_entries(), "compaction")
        if kind == "message_start" and event["message"].get("role") == "user":
            content = event["message"].get("content")
            text = content if isinstance(content, str) else "".join(b.get("text", "") for b in content or [])
            self.sent_user_texts.add(text)
        if kind == "compaction_end":
            outcome = "ok" if event.get("result") else "aborted" if event.get("aborted") else "failed"
            hypothesis_event(f"compaction {event.get('reason')} {outcome}")
        if kind == "context_reduced":
            hypothesis_event(f"pipeline {event.get('step')}")
        if kind == "compaction_end" and event.get("result"):
            self.successes += 1
            if event.get("reason") == "manual":
                self.manual_summaries.add(event["result"]["summary"])
            if SPLIT_TURN_SEPARATOR in event["result"]["summary"] and self.successes > 1:
                hypothesis_event("split turn after a compaction")
        if kind == "notify" and "the previous summary (" in str(event.get("message")):
            hypothesis_event("previous summary capped")
        if kind == "context_reduced" and event.get("step") == "summary":
            self.successes += 1
            threshold = self.session.settings.pipeline_settings().summary_threshold_bytes
            if event["bytesAfter"] >= threshold:
                self.problems.append(f"after a pipeline summary the request is {event['bytesAfter']} ≥ {threshold} bytes")

    def _answer(self, view: Any, request: Any) -> dict[str, Any]:
        if view.has_tools:  # the agent
            pipeline = self.session._context_strategy() == "pipeline"
            threshold = self.session.settings.pipeline_settings().summary_threshold_bytes
            self.problems.extend(check_request(request, pipeline=pipeline, measured=self.runner.last_request_bytes,
                                               threshold_bytes=threshold))
            return self.agent_turns.pop(0) if self.agent_turns else {"text": "Done."}
        pipeline = PIPELINE_SYSTEM_MARK in view.system_prompt
        hypothesis_event(f"summarizer ({'pipeline' if pipeline else 'pi'}) answers {self.fault}")
        self.counter += 1
        marker = f"SUM-{self.counter}"
        self.summary_requests[marker] = view.body_text
        return summarizer_turn(self.fault, pipeline=pipeline, marker=marker)

    def _run(self, make: Any, abort: tuple[Any, ...] | None, interject: tuple[str, str] | None = None) -> Any:
        """Run one session operation to its end; optionally abort it (``abort_at``), and queue a
        steer/follow-up (``interjections``) at the first event of its kind."""
        seen = 0
        pending: list[asyncio.Future[Any]] = []

        async def abort_after(wait: int) -> None:
            for _ in range(wait):
                await asyncio.sleep(0)
            self._mark_abort()
            await self.session.abort()

        def listener(event: dict[str, Any]) -> None:
            nonlocal seen, interject
            seen += 1
            if abort is not None and abort[0] == "event" and seen == abort[1]:
                pending.append(asyncio.ensure_future(abort_after(abort[2])))
            if interject and event.get("type") == interject[1]:
                hypothesis_event(f"{interject[0]} queued at {interject[1]}")
                self._queue(interject[0])
                interject = None

        async def when_compacting(wait: int) -> None:
            # a poll, once per event-loop tick: is_compacting has no event of its own, and the
            # pipeline's summary step starts without one
            while not self.session.is_compacting:  # noqa: ASYNC110
                await asyncio.sleep(0)
            await abort_after(wait)

        unsubscribe = self.session.subscribe(listener)

        async def go() -> Any:
            watcher = asyncio.ensure_future(when_compacting(abort[1])) if abort is not None and abort[0] == "compacting" else None
            try:
                return await make()
            except PiError as err:
                return err
            finally:
                if watcher is not None and not self.abort_marks:
                    watcher.cancel()  # nothing compacted (or not yet aborting): no abort
                await asyncio.gather(*pending, *([watcher] if watcher is not None else []), return_exceptions=True)
                for task in [*pending, *([watcher] if watcher is not None else [])]:
                    if not task.cancelled() and task.exception() is not None:
                        raise task.exception()  # type: ignore[misc]

        try:
            return self.loop.run_until_complete(asyncio.wait_for(go(), STEP_TIMEOUT))
        finally:
            unsubscribe()

    def _mark_abort(self) -> None:
        entries = self.session.session_manager.get_entries()
        compacting = self.session.is_compacting
        if compacting:
            hypothesis_event("abort while compacting")
        self.abort_marks.append(AbortMark(len(self.log.events), count_entries(entries, "compaction"),
                                          count_entries(entries, "branch_summary"), compacting))

    def _queue(self, kind: str) -> None:
        self.counter += 1
        text = f"QUEUED-{self.counter} please also check the tests"
        (self.session.steer if kind == "steer" else self.session.follow_up)(text)
        self.queued.add(text)

    # ------------------------------------------------------------------ rules

    def _reads(self, results: list[tuple[str, int]], max_bytes: int | None = None) -> dict[str, Any]:
        self.counter += 1
        calls = []
        for n, (result_alphabet, result_size) in enumerate(results):
            name = f"r{self.counter}-{n}.txt"
            text = make_text(result_alphabet, result_size)
            if max_bytes is not None:
                text = text.encode()[:max_bytes].decode("utf-8", "ignore")
            (self.project / name).write_text(text)
            calls.append({"id": f"c{self.counter}_{n}", "name": "read", "arguments": {"path": name}})
        return {"tool_calls": calls}

    @rule(alphabet=alphabets, size=sizes, results=tool_results, interject=interjections, abort_after=abort_at, fault=faults,
          rounds=rounds)
    def prompt(self, alphabet: str, size: int, results: list[tuple[str, int]], interject: tuple[str, str] | None,
               abort_after: tuple[Any, ...] | None, fault: str, rounds: int = 1) -> None:
        self.fault = fault
        self.counter += 1
        tool_rounds = [self._reads(results) for _ in range(rounds)] if results else []
        if rounds > 1 and results:
            hypothesis_event("a turn of several tool rounds")
        self.agent_turns = [*tool_rounds, {"text": make_text(alphabet, min(size, 2000), "answer")}]
        text = make_text(alphabet, size, f"prompt {self.counter}")
        self._run(lambda: self.session.prompt(text), abort_after, interject)
        last = self.session.agent.messages[-1] if self.session.agent.messages else {}
        answered = last.get("role") == "assistant" and last.get("stopReason") not in ("error", "aborted")
        if answered and not self.abort_marks:
            # §2.8 step 5: the session goes on with what was queued, even after a compaction
            queued = [*self.session.state.steering, *self.session.state.follow_up]
            assert not queued, f"answered and idle with messages still queued: {queued}"

    @rule(alphabet=alphabets, size=sizes, results=tool_results, interject=interjections, abort_after=abort_at, fault=faults,
          rounds=rounds)
    def another_prompt(self, **step: Any) -> None:
        """Prompts are most of a session and what makes it grow to a compaction: drawn twice as
        often as each other step."""
        self.prompt(**step)

    @rule(alphabet=st.sampled_from(["ascii", "cjk"]), fault=faults)
    def many_reads(self, alphabet: str, fault: str) -> None:
        """Eight reads just below the artifact threshold in one turn (232,000 bytes together):
        the per-turn inline limit holds with parallel and with sequential execution."""
        self.fault = fault
        pipeline = self.session._context_strategy() == "pipeline"
        since = len(self.session.session_manager.get_entries())
        self.agent_turns = [self._reads([(alphabet, 29_000)] * 8, max_bytes=29_000), {"text": "Read them all."}]
        self._run(lambda: self.session.prompt(f"read the eight files {self.counter}"), None)
        if pipeline:
            limit = self.session.settings.pipeline_settings().turn_inline_limit_bytes
            check_inline_per_turn(self.session.session_manager.get_entries(), since, limit)

    @precondition(lambda self: not self.steered)
    @rule()
    def split_turn_after_compaction(self) -> None:
        """Steered to the split turn that follows a compaction (issue 19, item 1), which random
        prompts reach about once in a hundred runs: a turn's first request overflows a 32k model,
        so compaction #1 keeps from that turn's user message; the turn goes on with a tool round and
        ends above the threshold, so compaction #2 cuts inside the same turn at the same start.
        Its history part is empty: summary #1 must be carried into #2 (``holds`` checks that)."""
        self.steered = True  # once per example: it starts a session of its own, and is slow-ish
        self.new_session()
        for key, value in (("context.strategy", "pi"), ("compaction.keepRecentTokens", 2_000),
                           ("compaction.reserveTokens", 16_384)):
            self.session.settings.set(key, value)
        self.session.set_model(model(32_000))
        self.fault = "ok"
        self.agent_turns = [{"text": "Noted."}]
        self._run(lambda: self.session.prompt(make_text("ascii", 40_000, "history")), None)
        self.agent_turns = [self._reads([("ascii", 12_000)]), {"text": "Finished the long task."}]
        self._run(lambda: self.session.prompt(make_text("ascii", 76_000, "long task")), None)
        ends = [(e.get("reason"), bool(e.get("result"))) for e in self.log.kinds("compaction_end")]
        assert ends == [("overflow", True), ("threshold", True)], f"the steered turn compacted as {ends}"
        summaries = [str(e.get("summary")) for e in self.session.session_manager.get_entries() if e.get("type") == "compaction"]
        assert SPLIT_TURN_SEPARATOR in summaries[-1], "compaction #2 did not cut inside the turn"
        hypothesis_event("steered split turn after a compaction")

    @rule(mode=st.sampled_from(["parallel", "sequential"]))
    def tool_execution(self, mode: str) -> None:
        self.session.settings.set("toolExecution", mode)

    @rule(strand=st.booleans())
    def switch_to_small_model(self, strand: bool) -> None:
        """The switch that strands a long summary: with ``strand``, a ``/compact`` (keeping 500
        tokens) first writes the long (~25k-token) summary a manual compaction keeps even when it
        does not shrink the context; on the 8k model the next summary request must still fit."""
        if strand:  # keep little, so that even a short session has something to summarize
            self.session.settings.set("compaction.keepRecentTokens", 500)
            self.fault = "longer"
            self._run(lambda: self.session.compact(), None)
        if any(e.get("type") == "compaction" for e in self.session.session_manager.get_entries()):
            hypothesis_event("switch to 8k after a compaction")
        self.session.set_model(model(8192))

    @rule(focus=st.none() | st.sampled_from(["keep the file paths", "焦点: テスト"]), abort_after=abort_at, fault=faults)
    def compact(self, focus: str | None, abort_after: tuple[Any, ...] | None, fault: str) -> None:
        self.fault = fault
        self._run(lambda: self.session.compact(focus), abort_after)

    @rule()
    def new_session(self) -> None:
        self.loop.run_until_complete(asyncio.wait_for(self.session.new_session(), STEP_TIMEOUT))
        self.queued.clear()  # /new discards what was queued, as pi does
        self.log = EventLog()
        self.written_at = {}
        self.successes = 0
        runner = self.runner
        assert not runner.circuit_open and not runner.pipeline_circuit_open
        assert runner.consecutive_failures == 0 and runner.state.pipeline.failures == 0
        assert runner.state.threshold_stuck is None and not runner.state.overflow_attempted

    @rule(pick=st.integers(min_value=0, max_value=10_000), summarize=st.booleans(), abort_after=abort_at, fault=faults)
    def tree(self, pick: int, summarize: bool, abort_after: tuple[Any, ...] | None, fault: str) -> None:
        self.fault = fault
        entries = [e for e in self.session.session_manager.get_entries() if e.get("type") == "message"]
        if not entries:
            return
        target = str(entries[pick % len(entries)]["id"])
        self._run(lambda: self.session.navigate_tree(target, summarize=summarize), abort_after)
        self.log.events.append(Logged({"type": TREE_MOVED}, self._key()))

    @rule(window=SMALL_WINDOWS_FIRST | st.sampled_from(WINDOWS))
    def switch_model(self, window: int) -> None:
        self.session.set_model(model(window))

    @rule(keep=st.sampled_from([500, 2_000, 20_000, 60_000, 300_000]), reserve=st.sampled_from([1_000, 4_000, 16_384, 40_000]))
    def compaction_settings(self, keep: int, reserve: int) -> None:
        self.session.settings.set("compaction.keepRecentTokens", keep)
        self.session.settings.set("compaction.reserveTokens", reserve)

    @rule(strategy=st.sampled_from(["pi", "pipeline"]), variant=st.sampled_from(["exact", "cache-aware"]),
          threshold=st.sampled_from([8_000, 20_000, 50_000]))
    def strategy(self, strategy: str, variant: str, threshold: int) -> None:
        self.session.settings.set("context.strategy", strategy)
        self.session.settings.set("context.pipeline.variant", variant)
        self.session.settings.set("context.pipeline.summaryThresholdBytes", threshold)

    # ------------------------------------------------------------------ invariants

    @invariant()
    def holds(self) -> None:
        if not hasattr(self, "session"):
            return
        session = self.session
        assert not self.problems, self.problems
        assert not self.provider.script.summary_refusals, self.provider.script.summary_refusals
        assert not session.is_streaming and not session.is_compacting, "not idle after the step"
        assert not session.lock.locked()
        path = session.session_manager.session_file
        for known in {*self.files, *([path] if path is not None else [])}:
            check_file_grows(known, self.files)
        entries = session.session_manager.get_entries()
        check_compaction_entries(entries, self.manual_summaries)
        if check_previous_summary_carried(entries, self.summary_requests):
            hypothesis_event("previous summary carried whole")
        written = sum(1 for e in entries if e.get("type") == "compaction")
        assert written == self.successes, f"{written} compaction entries, {self.successes} successes reported"
        check_turn_bounds(self.log, self.thresholds)
        check_events(self.log)
        for mark in self.abort_marks:
            check_abort(mark, self.log, entries, self.written_at)
        self.abort_marks.clear()
        visible = set(session.state.steering) | set(session.state.follow_up)
        lost = {text for text in self.queued if text not in self.sent_user_texts and text not in visible}
        assert not lost, f"queued messages lost: {sorted(lost)}"


CompactionMachine.TestCase.settings = settings(
    max_examples=int(os.environ.get("PI_TUI_SOAK_EXAMPLES", "400")) if SOAK else 30,
    stateful_step_count=60 if SOAK else 30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
TestCompactionMachine = CompactionMachine.TestCase
