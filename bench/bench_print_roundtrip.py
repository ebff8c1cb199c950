"""Benchmark: ``pi-tui -p "say hi"`` — one full round trip against the local fake server.

Setup like pi's reference measurement (notes/stack-facts.md): an agent dir whose models.json
defines the fake server as an ``openai-completions`` provider, ``PI_CODING_AGENT_DIR`` pointing
at it, a session file written as usual. Each run is a fresh process; the wall time covers
interpreter start → answer printed → process gone; CPU is the child's user+system time (less
sensitive to a busy machine than the wall time). Peak RSS is the child's ``ru_maxrss``
(``os.wait4``). Variants: text mode, ``--mode json``, and the litellm path
(``PI_TUI_FORCE_LITELLM=1``) for comparison.

    python bench/bench_print_roundtrip.py [--runs 10] [--litellm-runs 3]

Reference on this machine: pi 0.73.1 takes 1.28 s and 177 MB (``pi --mode json``: 1.48 s).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

from pi_tui.testing.fake_server import FakeServer  # noqa: E402

SCRIPT = [{"text": "Hello! How can I help you today?", "usage": {"prompt_tokens": 1200, "completion_tokens": 9}}]


def one_run(args: list[str], env: dict[str, str], cwd: Path) -> tuple[float, int, float]:
    started = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "pi_tui", *args], cwd=cwd, env=env,
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - started
    err = process.stderr.read().decode() if process.stderr else ""
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"run failed: {err.strip()}")
    return elapsed, usage.ru_maxrss // 1024, usage.ru_utime + usage.ru_stime


def measure(label: str, args: list[str], env: dict[str, str], cwd: Path, runs: int, turns: int) -> dict[str, float]:
    times, rss, cpu = [], [], []
    for _ in range(runs):
        with FakeServer(SCRIPT * turns) as server:
            (Path(env["PI_CODING_AGENT_DIR"]) / "models.json").write_text(json.dumps(_models(server.base_url)))
            elapsed, peak, cpu_s = one_run(args, env, cwd)
        times.append(elapsed)
        rss.append(peak)
        cpu.append(cpu_s)
    result = {"median_s": statistics.median(times), "min_s": min(times), "max_s": max(times),
              "cpu_s": statistics.median(cpu), "peak_rss_mb": max(rss)}
    print(f"{label:<28} median {result['median_s']:.3f} s  (min {result['min_s']:.3f}, max {result['max_s']:.3f}, "
          f"n={runs})  CPU {result['cpu_s']:.3f} s  peak RSS {result['peak_rss_mb']} MB  "
          f"(load {os.getloadavg()[0]:.1f})", flush=True)
    return result


def _models(base_url: str) -> dict[str, object]:
    return {"providers": {"fake": {
        "baseUrl": base_url, "api": "openai-completions", "apiKey": "fake-key",
        "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
        "models": [{"id": "fake-model", "contextWindow": 128000, "maxTokens": 1000}],
    }}}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--litellm-runs", type=int, default=3)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="pi-tui-bench-") as tmp:
        root = Path(tmp)
        agent, cwd = root / "agent", root / "project"
        agent.mkdir()
        cwd.mkdir()
        env = {**os.environ, "PI_CODING_AGENT_DIR": str(agent), "HOME": str(root)}
        env.pop("PI_TUI_FORCE_LITELLM", None)
        one_run(["--version"], env, cwd)  # warm the bytecode cache once
        measure("pi-tui -p (direct HTTP)", ["-p", "say hi"], env, cwd, options.runs, 1)
        measure("pi-tui --mode json -p", ["--mode", "json", "-p", "say hi"], env, cwd, options.runs, 1)
        if options.litellm_runs:
            measure("pi-tui -p (litellm path)", ["-p", "say hi"], {**env, "PI_TUI_FORCE_LITELLM": "1"}, cwd,
                    options.litellm_runs, 1)
    print("reference: pi 0.73.1 -p 1.28 s / 177 MB, --mode json 1.48 s / 178 MB (notes/stack-facts.md)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
