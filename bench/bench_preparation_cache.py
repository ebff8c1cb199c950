"""Benchmark: the pipeline's preparation cache in a real 200-turn session (issue 12, item 9).

Runs ``AgentSession`` on the scripted provider with ``context.strategy = "pipeline"``: each turn
is a prompt, a ``read`` of a 2–12 KB file (a tool call and its result) and a short answer, so 400
model requests go through the agent loop and ``prepare_request_messages``. It reports

* the **hit rate**: of the calls whose input only appended to the previous call's input (checked
  here by value, independently of the cache), the share the cache served as ``identical`` or
  ``append`` (goal ≥ 0.95);
* the median time of the preparation as it ran (cache), of preparing the same inputs from scratch
  (what every call cost when the cache never hit), and of the deep copy of the context the loop
  made before each call until the fix (it now copies only for a ``context`` handler or SDK hook);
* the same hit rate with an extension ``context`` handler installed (the loop then hands out a
  deep copy and the cache compares values).

    python bench/bench_preparation_cache.py [--turns 200]
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pi_tui.core.context import pipeline_cache
from pi_tui.core.context.pipeline_cache import RequestPreparer
from pi_tui.core.provider import ModelInfo
from pi_tui.resources.settings import SettingsManager
from pi_tui.sdk import create_agent_session
from pi_tui.testing.scripted import ScriptedProvider

MODEL = ModelInfo(provider="bench", id="bench-model", context_window=200_000, max_tokens=4096)
CONTEXT_HANDLER = '''
def register(pi):
    @pi.on("context")
    def unchanged(event):
        return {"messages": event["messages"]}
'''


class Recorder:
    """Wraps ``RequestPreparer.prepare`` to time each call and keep what it was given."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, float, list[Any], Any]] = []
        self._original = RequestPreparer.prepare

    def install(self) -> None:
        recorder = self

        def prepare(preparer: RequestPreparer, messages: Any) -> Any:
            started = time.perf_counter()
            prepared = recorder._original(preparer, messages)
            recorder.calls.append((prepared.reused, time.perf_counter() - started, list(messages), preparer.config))
            return prepared

        pipeline_cache.RequestPreparer.prepare = prepare  # type: ignore[method-assign]

    def uninstall(self) -> None:
        pipeline_cache.RequestPreparer.prepare = self._original  # type: ignore[method-assign]


def turns(count: int, rng: random.Random) -> list[dict[str, Any]]:
    script: list[dict[str, Any]] = []
    for n in range(count):
        script.append({"tool_calls": [{"id": f"c{n}", "name": "read", "arguments": {"path": f"f{n % 20}.txt"}}]})
        script.append({"text": f"Read it; {rng.choice(['fine', 'noted', 'next'])}."})
    fields = ", ".join(f'"{k}": "{k} text"' for k in
                       ("current_goal", "key_findings", "files_read_or_changed", "remaining_work", "user_constraints"))
    script += [{"text": "{" + fields + "}", "when": {"system_contains": "condense the history"}} for _ in range(count)]
    return script


async def run_session(count: int, *, with_handler: bool) -> Recorder:
    rng = random.Random(12)
    root = Path(tempfile.mkdtemp(prefix="pi-tui-bench-cache-"))
    project = root / "project"
    project.mkdir()
    for n in range(20):
        (project / f"f{n}.txt").write_text("".join(f"line {i}: {'x' * rng.randint(10, 60)}\n" for i in range(rng.randint(40, 200))))
    extension_paths: list[str] = []
    if with_handler:
        handler = root / "context_handler.py"
        handler.write_text(CONTEXT_HANDLER)
        extension_paths.append(str(handler))
    provider = ScriptedProvider(turns(count, rng))
    session = create_agent_session(
        cwd=project, agent_dir=root / "agent", provider=provider, model=MODEL, load_extensions=False,
        extension_paths=extension_paths, settings=SettingsManager.in_memory({"context": {"strategy": "pipeline"}}),
    )
    recorder = Recorder()
    recorder.install()
    try:
        for n in range(count):
            await session.prompt(f"Turn {n}: read the next file and tell me what you see.")
    finally:
        recorder.uninstall()
        session.session_manager.close()
    return recorder


def report(recorder: Recorder, label: str, *, timings: bool) -> None:
    append_only = hits = 0
    previous: list[Any] | None = None
    cached: list[float] = []
    scratch: list[float] = []
    copies: list[float] = []
    for reused, seconds, messages, config in recorder.calls:
        if previous is not None and len(messages) >= len(previous) and messages[: len(previous)] == previous:
            append_only += 1
            hits += reused in ("identical", "append")
        previous = messages
        if timings:
            cached.append(seconds)
            started = time.perf_counter()
            RequestPreparer(config, strategy="pipeline").prepare(list(messages))
            scratch.append(time.perf_counter() - started)
            started = time.perf_counter()
            copy.deepcopy(messages)
            copies.append(time.perf_counter() - started)
    rate = hits / append_only if append_only else 0.0
    print(f"{label}: {len(recorder.calls)} preparations, {append_only} append-only, "
          f"{hits} served by the cache: hit rate {rate:.3f}")
    if timings:
        median_ms = lambda values: statistics.median(values) * 1000  # noqa: E731
        print(f"  median ms: cache {median_ms(cached):.3f} · from scratch {median_ms(scratch):.3f} · "
              f"deep copy of the context {median_ms(copies):.3f} "
              f"(old path = copy + scratch: {median_ms(copies) + median_ms(scratch):.3f}; "
              f"{(median_ms(copies) + median_ms(scratch)) / median_ms(cached):.1f}x)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=200)
    args = parser.parse_args()
    report(asyncio.run(run_session(args.turns, with_handler=False)), "no context handler", timings=True)
    report(asyncio.run(run_session(args.turns, with_handler=True)), "with a context handler (deep copies)", timings=True)


if __name__ == "__main__":
    main()
