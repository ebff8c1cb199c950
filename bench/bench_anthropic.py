"""Benchmark: the Anthropic Messages wire — transport cost, ``-p`` round trip and session cost,
pi-tui beside pi 0.73.1, against the strict local Anthropic fake (usage billed from the
request's cache markers, ``testing/fake_anthropic_cache.py``).

1. **Transport import**: a fresh interpreter importing our client
   (``pi_tui.providers.anthropic_http``) vs the vendor SDK (``import anthropic``), and one
   streamed request from a fresh process with each (the SDK's needs ``--sdk-python``: a Python
   with ``anthropic`` installed; it is not a dependency of the project).
2. **``-p`` round trip**: ``--model anthropic/claude-sonnet-4-5 -p "run echo hi"`` at the default
   thinking level: a thinking + tool-call turn, the tool, then the answer (2 requests). pi-tui and
   pi alternate run by run on the same machine state.
3. **20-turn tool session cost**: one prompt, 19 tool calls then the answer (20 requests), cost
   as each agent recorded it in its session file and as the fake billed it.

    python bench/bench_anthropic.py [--runs 7] [--pi PATH] [--sdk-python PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

from pi_tui.testing.fake_anthropic_server import FakeAnthropicServer  # noqa: E402
from pi_tui.testing.pi_reference import PI_BIN  # noqa: E402

KEY = "sk-ant-api03-bench"
MODEL = "anthropic/claude-sonnet-4-5"
PRICES = {"input_tokens": 3.0, "output_tokens": 15.0, "cache_read_input_tokens": 0.3, "cache_creation_input_tokens": 3.75}
DEFAULT_PI = PI_BIN
ECHO_TURNS = [
    {"thinking": "The user wants me to run echo hi. I will call the bash tool.", "text": "Running it.",
     "tool_calls": [{"name": "bash", "arguments": {"command": "echo hi"}}]},
    {"thinking": "It printed hi.", "text": "It printed `hi`."},
]


def session_turns(steps: int) -> list[dict[str, Any]]:
    turns: list[dict[str, Any]] = [
        {"thinking": f"Step {n}: I will check the next thing.", "text": f"Step {n}.",
         "tool_calls": [{"name": "bash", "arguments": {"command": f"echo step {n}"}}]}
        for n in range(1, steps)
    ]
    turns.append({"thinking": "All steps ran.", "text": "All steps done."})
    return turns


def _pi_tui_command() -> list[str]:
    script = Path(sys.executable).parent / "pi-tui"
    return [str(script)] if script.exists() else [sys.executable, "-m", "pi_tui"]


def run_agent(command: list[str], prompt: str, turns: list[dict[str, Any]], root: Path) -> tuple[float, FakeAnthropicServer, Path]:
    """One fresh agent dir, one fresh fake; returns the wall time, the fake and the agent dir."""
    agent, cwd = root / "agent", root / "project"
    shutil.rmtree(root, ignore_errors=True)
    agent.mkdir(parents=True)
    cwd.mkdir()
    server = FakeAnthropicServer(turns, api_key=KEY)
    with server:
        (agent / "models.json").write_text(json.dumps({"providers": {"anthropic": {"baseUrl": server.base_url}}}))
        env = {**os.environ, "PI_CODING_AGENT_DIR": str(agent), "HOME": str(root), "ANTHROPIC_API_KEY": KEY,
               "PI_OFFLINE": "1"}
        env.pop("PI_TUI_FORCE_LITELLM", None)
        started = time.perf_counter()
        result = subprocess.run([*command, "--model", MODEL, "-p", prompt], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                                capture_output=True, text=True, timeout=300)
        elapsed = time.perf_counter() - started
    if result.returncode != 0 or server.script.remaining:
        raise SystemExit(f"{command[0]} failed ({result.returncode}, {server.script.remaining} turns left): "
                         f"{result.stderr.strip()[-500:]}")
    return elapsed, server, agent


def recorded_cost(agent: Path) -> float:
    total = 0.0
    for path in (agent / "sessions").rglob("*.jsonl"):
        for line in path.read_text().splitlines():
            entry = json.loads(line)
            message = entry.get("message") or {}
            if entry.get("type") == "message" and message.get("role") == "assistant":
                total += float(message["usage"]["cost"]["total"])
    return total


def billed_cost(server: FakeAnthropicServer) -> float:
    return sum(PRICES[k] * usage[k] / 1e6 for usage in server.usages for k in PRICES)


def unmarked_cost(server: FakeAnthropicServer) -> float:
    """The same requests without cache markers: every prompt token billed as fresh input."""
    prompt = sum(u["input_tokens"] + u["cache_read_input_tokens"] + u["cache_creation_input_tokens"] for u in server.usages)
    return (PRICES["input_tokens"] * prompt + PRICES["output_tokens"] * sum(u["output_tokens"] for u in server.usages)) / 1e6


def time_python(python: str, code: str, runs: int) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([python, "-c", code], check=True, capture_output=True, cwd=REPO)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


OUR_ROUND_TRIP = """
import asyncio, sys
from pi_tui.core.provider import CompletionRequest
from pi_tui.providers.anthropic_http import AnthropicHttpProvider
from pi_tui.providers.models import ModelRegistry
import dataclasses
model = dataclasses.replace(ModelRegistry(None, env={}).resolve("anthropic/claude-sonnet-4-5"), base_url=sys.argv[1])
async def main():
    request = CompletionRequest(model=model, system_prompt="s", messages=[{"role": "user", "content": "hi", "timestamp": 0}],
                                api_key=sys.argv[2])
    return [e async for e in AnthropicHttpProvider().stream(request)][-1]["type"]
assert asyncio.run(main()) == "done"
"""

SDK_ROUND_TRIP = """
import sys, anthropic
client = anthropic.Anthropic(base_url=sys.argv[1], api_key=sys.argv[2], max_retries=0)
with client.messages.stream(model="claude-sonnet-4-5", max_tokens=1000, messages=[{"role": "user", "content": "hi"}]) as s:
    text = s.get_final_text()
assert text
"""


def time_round_trip(python: str, code: str, runs: int) -> float:
    times = []
    for _ in range(runs):
        with FakeAnthropicServer([{"text": "Hello!"}], api_key=KEY) as server:
            started = time.perf_counter()
            subprocess.run([python, "-c", code, server.base_url, KEY], check=True, capture_output=True, cwd=REPO)
            times.append(time.perf_counter() - started)
    return statistics.median(times)


def bench_transport(runs: int, sdk_python: str | None) -> None:
    print("== transport (fresh interpreter each run, median)")
    bare = time_python(sys.executable, "pass", runs)
    ours = time_python(sys.executable, "import pi_tui.providers.anthropic_http", runs)
    print(f"python -c pass                             {bare:.3f} s")
    print(f"import pi_tui.providers.anthropic_http     {ours:.3f} s  (+{ours - bare:.3f} s)")
    print(f"one streamed request, our client           {time_round_trip(sys.executable, OUR_ROUND_TRIP, runs):.3f} s")
    if sdk_python:
        sdk_bare = time_python(sdk_python, "pass", runs)
        sdk = time_python(sdk_python, "import anthropic", runs)
        version = subprocess.run([sdk_python, "-c", "import anthropic; print(anthropic.__version__)"], capture_output=True,
                                 text=True).stdout.strip()
        print(f"import anthropic ({version})                  {sdk:.3f} s  (+{sdk - sdk_bare:.3f} s)")
        print(f"one streamed request, anthropic SDK        {time_round_trip(sdk_python, SDK_ROUND_TRIP, runs):.3f} s")
    else:
        print("import anthropic                           skipped (pass --sdk-python PATH)")


def bench_print(runs: int, pi: Path | None, root: Path) -> None:
    print(f"== -p round trip: thinking + tool call + answer, {MODEL} (median of {runs}, interleaved)")
    ours, theirs = [], []
    for _ in range(runs):
        ours.append(run_agent(_pi_tui_command(), "run echo hi", ECHO_TURNS, root / "tui")[0])
        if pi:
            theirs.append(run_agent([str(pi)], "run echo hi", ECHO_TURNS, root / "pi")[0])
    line = f"pi-tui {statistics.median(ours):.3f} s (min {min(ours):.3f})"
    if theirs:
        ratio = statistics.median(ours) / statistics.median(theirs)
        line += f"   pi {statistics.median(theirs):.3f} s (min {min(theirs):.3f})   ratio {ratio:.2f}x"
    print(line + f"   (load {os.getloadavg()[0]:.1f})")


def bench_cost(steps: int, pi: Path | None, root: Path) -> None:
    print(f"== {steps}-request tool session (one prompt, {steps - 1} tool calls), usage billed from cache markers")
    for label, command in (("pi-tui", _pi_tui_command()), ("pi", [str(pi)] if pi else None)):
        if command is None:
            continue
        _, server, agent = run_agent(command, f"do {steps - 1} steps", session_turns(steps), root / label)
        totals = {k: sum(u[k] for u in server.usages) for k in PRICES}
        print(f"{label:<7} recorded ${recorded_cost(agent):.5f}   billed ${billed_cost(server):.5f}   "
              f"(no markers: ${unmarked_cost(server):.5f})   "
              f"input {totals['input_tokens']}  cache read {totals['cache_read_input_tokens']}  "
              f"cache write {totals['cache_creation_input_tokens']}  output {totals['output_tokens']}  "
              f"({len(server.usages)} requests)")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--pi", type=Path, default=DEFAULT_PI if DEFAULT_PI.exists() else None)
    parser.add_argument("--sdk-python", help="a Python interpreter with the anthropic SDK installed")
    parser.add_argument("--only", choices=("transport", "print", "cost"), help="run one part")
    options = parser.parse_args()
    pi = options.pi if options.pi and options.pi.exists() else None
    if pi is None:
        print("pi not found: pi-tui only (pass --pi PATH)")
    with tempfile.TemporaryDirectory(prefix="pi-tui-bench-anthropic-") as tmp:
        root = Path(tmp)
        if options.only in (None, "transport"):
            bench_transport(options.runs, options.sdk_python)
        if options.only in (None, "print"):
            bench_print(options.runs, pi, root)
        if options.only in (None, "cost"):
            bench_cost(options.steps, pi, root)
    return 0


if __name__ == "__main__":
    sys.exit(main())
