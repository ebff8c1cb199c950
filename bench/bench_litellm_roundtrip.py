"""Benchmark: ``pi-tui -p "say hi"`` on Gemini against the local Gemini fake — pi-tui's own
Gemini client, the same model forced through litellm (``PI_TUI_FORCE_LITELLM=1``, with and
without the early import thread), and pi 0.73.1 on the same fake; then the same on OpenAI's
Responses API (our own client, no litellm) against the local Responses fake, beside pi.

The agent dir's models.json declares a ``google-generative-ai`` provider whose ``baseUrl`` is
``pi_tui.testing.gemini_fake``. Each run is a fresh process; wall time from spawn to exit,
CPU = the child's user+system time, peak RSS = ``ru_maxrss``. Runs of the variants are
interleaved so machine drift hits them alike.

    python bench/bench_litellm_roundtrip.py [--runs 7] [--no-pi] [--only gemini|responses]

``PI_TUI_NO_EARLY_LITELLM=1`` turns off the early import thread (the litellm route's "before").
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

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

from pi_tui.testing.gemini_fake import GeminiFakeServer  # noqa: E402
from pi_tui.testing.pi_reference import PI_BIN  # noqa: E402
from pi_tui.testing.responses_fake import ResponsesFakeServer  # noqa: E402

TURN = {"text": "Hello! How can I help you today?", "usage": {"prompt_tokens": 1200, "completion_tokens": 9}}
MODEL = "google/gemini-2.5-flash"
PI = PI_BIN


def one_run(command: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float, int]:
    started = time.perf_counter()
    process = subprocess.Popen(command, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - started
    out = process.stdout.read().decode() if process.stdout else ""
    err = process.stderr.read().decode() if process.stderr else ""
    if os.waitstatus_to_exitcode(status) != 0 or "How can I help" not in out:
        raise SystemExit(f"run failed ({command[0]}): {err.strip() or out.strip()}")
    return elapsed, usage.ru_utime + usage.ru_stime, usage.ru_maxrss // 1024


def _models(base_url: str) -> dict[str, object]:
    return {"providers": {"google": {"baseUrl": base_url, "api": "google-generative-ai", "apiKey": "gk",
                                     "models": [{"id": "gemini-2.5-flash", "reasoning": True, "contextWindow": 1048576,
                                                 "maxTokens": 65536}]}}}


def _responses_models(base_url: str) -> dict[str, object]:
    return {"providers": {"openai": {"baseUrl": base_url, "api": "openai-responses", "apiKey": "sk",
                                     "models": [{"id": "o4-mini", "reasoning": True, "contextWindow": 200000, "maxTokens": 100000}]}}}


def report(results: dict[str, list[tuple[float, float, int]]]) -> None:
    for name, runs in results.items():
        walls = [r[0] for r in runs]
        print(f"{name:<34} median {statistics.median(walls):.2f} s (min {min(walls):.2f}, max {max(walls):.2f}, n={len(runs)})  "
              f"CPU {statistics.median(r[1] for r in runs):.2f} s  peak RSS {max(r[2] for r in runs)} MB", flush=True)


def run_interleaved(variants: dict[str, tuple[list[str], dict[str, str]]], cwd: Path, runs: int) -> dict[str, list[tuple[float, float, int]]]:
    results: dict[str, list[tuple[float, float, int]]] = {name: [] for name in variants}
    for _ in range(runs):
        for name, (command, variant_env) in variants.items():
            results[name].append(one_run(command, variant_env, cwd))
    return results


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--no-pi", action="store_true")
    parser.add_argument("--only", choices=("gemini", "responses"))
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="pi-tui-bench-") as tmp:
        root = Path(tmp)
        agent, cwd = root / "agent", root / "project"
        agent.mkdir()
        cwd.mkdir()
        env = {**os.environ, "PI_CODING_AGENT_DIR": str(agent), "HOME": str(root), "PI_OFFLINE": "1"}
        for name in ("PI_TUI_FORCE_LITELLM", "PI_TUI_NO_EARLY_LITELLM"):
            env.pop(name, None)
        prompt = [sys.executable, "-m", "pi_tui", "-p", "say hi", "--model", MODEL]
        forced = {**env, "PI_TUI_FORCE_LITELLM": "1"}
        variants: dict[str, tuple[list[str], dict[str, str]]] = {
            "pi-tui -p (own Gemini client)": (prompt, env),
            "pi-tui -p (litellm, early import)": (prompt, forced),
            "pi-tui -p (litellm, import when needed)": (prompt, {**forced, "PI_TUI_NO_EARLY_LITELLM": "1"}),
            "pi-tui --mode json -p (own client)": ([sys.executable, "-m", "pi_tui", "--mode", "json", "-p", "say hi", "--model", MODEL], env),
        }
        if not options.no_pi and PI.exists() and shutil.which("node"):
            variants["pi 0.73.1 -p"] = ([str(PI), "-p", "say hi", "--model", MODEL], env)
        if options.only in (None, "gemini"):
            with GeminiFakeServer([TURN] * (options.runs * len(variants) + 3)) as server:
                (agent / "models.json").write_text(json.dumps(_models(server.base_url)))
                one_run(prompt, env, cwd)  # warm bytecode and page cache
                one_run(prompt, forced, cwd)
                report(run_interleaved(variants, cwd, options.runs))
        if options.only == "gemini":
            print(f"load average {os.getloadavg()[0]:.1f} / {os.cpu_count()} cores")
            return 0
        responses = {"pi-tui -p openai-responses": ([sys.executable, "-m", "pi_tui", "-p", "say hi", "--model", "openai/o4-mini"], env)}
        if "pi 0.73.1 -p" in variants:
            responses["pi 0.73.1 -p openai-responses"] = ([str(PI), "-p", "say hi", "--model", "openai/o4-mini"], env)
        with ResponsesFakeServer([TURN] * (options.runs * len(responses) + 2)) as server:
            (agent / "models.json").write_text(json.dumps(_responses_models(server.base_url)))
            report(run_interleaved(responses, cwd, options.runs))
    print(f"load average {os.getloadavg()[0]:.1f} / {os.cpu_count()} cores")
    return 0


if __name__ == "__main__":
    sys.exit(main())
