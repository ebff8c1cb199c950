"""Benchmark: the context strategies on a scripted 200-turn session with sizeable tool outputs.

For ``pi`` (summary compaction), the exact ``pipeline`` and the cache-aware ``pipeline`` it reports

* total tokens sent in main requests (chars/4 of the encoded messages), and to summarizers;
* the number of compactions (compaction entries written);
* the **prefix reuse ratio**: the share of each request's tokens that equal a prefix of the
  previous request (message by message) — what a provider's prompt cache can reuse;

and the time to prepare the next request on histories of 1,000 and 100,000 messages, for a
first (from-scratch) preparation and for the incremental one after an append.

The session runs through the real ``SessionManager`` and ``CompactionRunner``; the model is a
deterministic simulator (tool call after a user message, a short answer after a tool result, a
summary or a strict-JSON summary for summarizer requests, usage = request chars / 4).

    python bench/bench_context_strategies.py [--turns 200] [--window 64000]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import math
import random
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pi_tui.core.context.compaction_prompts import SUMMARIZATION_SYSTEM_PROMPT
from pi_tui.core.context.convert import convert_to_llm
from pi_tui.core.context.pipeline import PipelineConfig
from pi_tui.core.context.pipeline_cache import RequestPreparer
from pi_tui.core.context.pipeline_summary import PIPELINE_SUMMARY_SYSTEM_PROMPT, SUMMARY_FIELDS
from pi_tui.core.messages import empty_usage, now_ms, user_message
from pi_tui.core.provider import CompletionRequest, ModelInfo
from pi_tui.core.session import SessionManager
from pi_tui.resources.settings import SettingsManager
from pi_tui.session.compaction_runner import CompactionRunner

SYSTEM_PROMPT = "You are a coding assistant. " * 40


def _tokens(text: str) -> int:
    return math.ceil(len(text) / 4)


class SimulatedModel:
    """Deterministic stand-in for a model; counts what it is sent."""

    def __init__(self) -> None:
        self.summary_tokens = 0
        self.summary_calls = 0

    async def stream(self, request: CompletionRequest) -> AsyncIterator[Any]:
        body = json.dumps([request.system_prompt, request.messages], ensure_ascii=False)
        content: list[dict[str, Any]]
        if request.system_prompt == SUMMARIZATION_SYSTEM_PROMPT:
            self.summary_calls += 1
            self.summary_tokens += _tokens(body)
            content = [{"type": "text", "text": "## Goal\nKeep the parser work going.\n\n## Progress\n" + "- [x] step\n" * 120}]
            stop = "stop"
        elif request.system_prompt == PIPELINE_SUMMARY_SYSTEM_PROMPT:
            self.summary_calls += 1
            self.summary_tokens += _tokens(body)
            content = [{"type": "text", "text": json.dumps({f: f"{f} " * 60 for f in SUMMARY_FIELDS})}]
            stop = "stop"
        elif request.messages[-1]["role"] == "toolResult":
            content = [{"type": "text", "text": "Looked at the output; moving on. " * 8}]
            stop = "stop"
        else:
            n = len(request.messages)
            content = [{"type": "toolCall", "id": f"call_{n}_{now_ms()}", "name": "bash", "arguments": {"command": f"cat log_{n}.txt"}}]
            stop = "toolUse"
        usage = empty_usage()
        usage["input"] = _tokens(body)
        usage["output"] = 50
        usage["totalTokens"] = usage["input"] + 50
        message = {"role": "assistant", "content": content, "api": "sim", "provider": "sim", "model": "sim-model",
                   "usage": usage, "stopReason": stop, "timestamp": now_ms()}
        yield {"type": "done", "reason": stop, "message": message}


class _Agent:
    def __init__(self) -> None:
        self.messages: list[Any] = []
        self.context = self

    def __setattr__(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)


class BenchHost:
    def __init__(self, cwd: Path, strategy: str, variant: str, window: int, threshold: int) -> None:
        self.session_manager = SessionManager.in_memory(cwd)
        pipeline = {"variant": variant, "summaryThresholdBytes": threshold}
        self.settings = SettingsManager.in_memory({"context": {"strategy": strategy, "pipeline": pipeline}})
        self.extensions = None
        self.thinking_level = "off"
        self.model = ModelInfo(provider="sim", id="sim-model", context_window=window)
        self.provider = SimulatedModel()
        self.agent = _Agent()
        self.lock = asyncio.Lock()
        self.events: list[dict[str, Any]] = []
        self.runner = CompactionRunner(self)

    def emit(self, event: dict[str, Any]) -> None:
        self.events.append(event)

    def current_model(self) -> ModelInfo:
        return self.model

    def provider_for(self, model: ModelInfo) -> SimulatedModel:
        return self.provider

    def api_key_for(self, model: ModelInfo) -> str | None:
        return None

    def replace_messages(self, messages: list[Any]) -> None:
        self.agent.messages = messages

    def add(self, message: Any) -> None:
        self.session_manager.append_message(message)
        self.agent.messages.append(message)


async def run_session(strategy: str, variant: str, turns: int, window: int, threshold: int = 50_000) -> dict[str, Any]:
    rng = random.Random(7)
    with tempfile.TemporaryDirectory() as tmp:
        host = BenchHost(Path(tmp), strategy, variant, window, threshold)
        sent = 0
        reused = 0
        previous: list[str] = []
        requests = 0
        for turn in range(turns):
            host.add(user_message(f"Turn {turn}: look at the next log and fix what it shows. " + "detail " * rng.randint(5, 40)))
            while True:
                messages = list(host.agent.messages)
                if strategy == "pipeline":
                    messages = await host.runner.prepare_request_messages(messages)
                encoded = [json.dumps(m, ensure_ascii=False, sort_keys=True) for m in convert_to_llm(messages)]
                tokens = [_tokens(e) for e in encoded]
                common = 0
                while common < min(len(encoded), len(previous)) and encoded[common] == previous[common]:
                    common += 1
                if requests:
                    reused += sum(tokens[:common])
                    sent += sum(tokens)
                previous = encoded
                requests += 1
                request = CompletionRequest(model=host.model, system_prompt=SYSTEM_PROMPT, messages=convert_to_llm(messages))
                answer = None
                async for event in host.provider.stream(request):
                    answer = event["message"]
                assert answer is not None
                host.add(answer)
                if answer["stopReason"] != "toolUse":
                    break
                call = answer["content"][0]
                size = rng.randint(2_000, 12_000)
                output = "\n".join(f"{turn}:{i} " + "log line data " * 4 for i in range(size // 60))[:size]
                host.add({"role": "toolResult", "toolCallId": call["id"], "toolName": "bash",
                          "content": [{"type": "text", "text": output}], "isError": False, "timestamp": now_ms()})
            await host.runner.check_after_run(host.agent.messages[-1])
        compactions = sum(1 for e in host.session_manager.get_entries() if e["type"] == "compaction")
        return {
            "requests": requests,
            "tokens_sent": sent,
            "summary_tokens": host.provider.summary_tokens,
            "compactions": compactions,
            "prefix_reuse": reused / sent if sent else 0.0,
        }


def timing(strategy: str, variant: str, size: int, appends: int = 30) -> tuple[float, float]:
    """(first preparation ms, median incremental preparation ms after appending one tool group)."""
    def group(i: int) -> list[Any]:
        return [
            user_message(f"u{i}"),
            {"role": "assistant", "content": [{"type": "toolCall", "id": f"c{i}", "name": "bash", "arguments": {"command": "x"}}],
             "api": "sim", "provider": "sim", "model": "sim-model", "usage": empty_usage(), "stopReason": "toolUse", "timestamp": i},
            {"role": "toolResult", "toolCallId": f"c{i}", "toolName": "bash", "content": [{"type": "text", "text": "o" * 3000}],
             "isError": False, "timestamp": i},
        ]

    messages: list[Any] = []
    i = 0
    while len(messages) < size:
        messages.extend(group(i))
        i += 1
    preparer = RequestPreparer(PipelineConfig(variant=variant), strategy=strategy)
    started = time.perf_counter()
    preparer.prepare(messages)
    first = (time.perf_counter() - started) * 1000
    # Two costs that are not the preparation's, kept out of the timed region: Python's cyclic GC
    # rescanning a 100k-message heap now and then (the history is frozen), and freeing the
    # previous 100k-pointer input list when the cache lets go of it (the lists are kept alive).
    gc.collect()
    gc.freeze()
    samples = []
    alive = []
    try:
        for _ in range(appends):
            alive.append(messages)
            messages = messages + group(i)  # a new list, as a fresh projection would be
            i += 1
            started = time.perf_counter()
            preparer.prepare(messages)
            samples.append((time.perf_counter() - started) * 1000)
    finally:
        gc.unfreeze()
    return first, statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--window", type=int, default=64_000)
    args = parser.parse_args()
    print(f"scripted session: {args.turns} turns, tool outputs 2–12 KB, window {args.window} tokens")
    print(f"{'strategy':<24}{'requests':>9}{'tokens sent':>13}{'summarizer':>12}{'compactions':>13}{'prefix reuse':>14}")
    runs = (("pi", "pi", "exact", 50_000), ("pipeline (exact)", "pipeline", "exact", 50_000),
            ("pipeline (cache-aware)", "pipeline", "cache-aware", 50_000),
            ("  exact, no summary", "pipeline", "exact", 10**12),
            ("  cache-aware, no sum.", "pipeline", "cache-aware", 10**12))
    for label, strategy, variant, threshold in runs:
        r = asyncio.run(run_session(strategy, variant, args.turns, args.window, threshold))
        print(f"{label:<24}{r['requests']:>9}{r['tokens_sent']:>13,}{r['summary_tokens']:>12,}{r['compactions']:>13}{r['prefix_reuse']:>13.1%}")
    print("\nrequest preparation (ms): first / incremental after appending one tool group (median of 30)")
    for label, strategy, variant in (("pi", "pi", "exact"), ("pipeline (exact)", "pipeline", "exact"),
                                     ("pipeline (cache-aware)", "pipeline", "cache-aware")):
        cells = []
        for size in (1_000, 100_000):
            first, incremental = timing(strategy, variant, size)
            cells.append(f"{size:>7,} msgs: {first:8.2f} / {incremental:6.3f}")
        print(f"{label:<24}" + "   ".join(cells))


if __name__ == "__main__":
    main()
