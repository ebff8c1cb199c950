"""Benchmark: the ``bash`` tool running a command that prints 1 GB.

Targets (issue 3): the peak RSS of pi-tui grows by less than 50 MB, and the run takes no more
than about 2x the time the shell alone needs to write the same output to a file.

The tool runs as a session runs it: knowing a few keys (``--secrets``, default 4, as a user with
a couple of provider keys in the environment), which are redacted from the full-output file as it
is written (issue 13). ``--leak`` makes the command print one of them in every line (the worst
case for the redaction) instead of text that never holds one.

Each run is a fresh interpreter: it imports the tool, records its peak RSS (``VmHWM``), runs
``BashTool.execute`` (which streams the full output to a file in an artifact folder, keeps a
rolling tail and sends throttled UI updates), then records the peak again. The baseline is the
same command with its output redirected to a file by the shell. Medians over the runs.

    python bench/bench_bash_output.py [--bytes 1073741824] [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import string
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

CHILD = """
import asyncio, json, resource, sys, time
from pathlib import Path
from pi_tui.core.tool import ToolContext
from pi_tui.tools.bash import BashTool

def peak_kb():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0

command, workdir, secrets = sys.argv[1], Path(sys.argv[2]), frozenset(json.loads(sys.argv[3]))
updates = []
ctx = ToolContext(cwd=workdir, artifact_dir=workdir / "artifacts", on_update=lambda r: updates.append(1),
                  secret_values=secrets)
loop = asyncio.new_event_loop()
before = peak_kb()
usage_before = resource.getrusage(resource.RUSAGE_SELF)
started = time.perf_counter()
result = loop.run_until_complete(BashTool().execute("bench", {"command": command}, ctx))
elapsed = time.perf_counter() - started
usage_after = resource.getrusage(resource.RUSAGE_SELF)
cpu = (usage_after.ru_utime - usage_before.ru_utime) + (usage_after.ru_stime - usage_before.ru_stime)
after = peak_kb()
full = Path(result.details["fullOutputPath"])
print(json.dumps({"seconds": elapsed, "cpu_seconds": cpu, "rss_before_kb": before, "rss_after_kb": after,
                  "full_output_bytes": full.stat().st_size, "updates": len(updates),
                  "text_bytes": len(result.content[0]["text"].encode())}))
full.unlink()
"""


def secrets_for(count: int) -> list[str]:
    """Keys shaped like real ones (``sk-`` + 48 random letters and digits), the same every run."""
    rng = random.Random(13)
    return ["sk-" + "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(48)) for _ in range(count)]


def command_for(size: int, leak: str | None = None) -> str:
    line = f"key {leak} over the lazy dog" if leak else "The quick brown fox jumps over the lazy dog 0123456789"
    return f"yes '{line}' | head -c {size}"


def shell_baseline(command: str, workdir: Path) -> float:
    target = workdir / "baseline.out"
    started = time.perf_counter()
    subprocess.run(["/bin/bash", "-c", f"{command} > {target}"], check=True)
    elapsed = time.perf_counter() - started
    target.unlink()
    return elapsed


def tool_run(command: str, workdir: Path, secrets: list[str]) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, command, str(workdir), json.dumps(secrets)], cwd=ROOT, capture_output=True,
        text=True, check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bytes", type=int, default=1 << 30)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--secrets", type=int, default=4, help="keys the session knows")
    parser.add_argument("--leak", action="store_true", help="print a known key in every line")
    args = parser.parse_args(argv)
    secrets = secrets_for(args.secrets)
    command = command_for(args.bytes, secrets[0] if args.leak and secrets else None)
    with tempfile.TemporaryDirectory(prefix="pi-tui-bench-bash-") as folder:
        workdir = Path(folder)
        baselines, runs = [], []
        for _ in range(args.runs):
            baselines.append(shell_baseline(command, workdir))
            runs.append(tool_run(command, workdir, secrets))
    base = statistics.median(baselines)
    tool = statistics.median(r["seconds"] for r in runs)
    cpu = statistics.median(r["cpu_seconds"] for r in runs)
    growth_mb = statistics.median((r["rss_after_kb"] - r["rss_before_kb"]) / 1024 for r in runs)
    # A redacted file differs in size by (len("[redacted]") - len(key)) per key printed.
    complete = args.leak or all(r["full_output_bytes"] == args.bytes for r in runs)
    print(f"bash output {args.bytes / (1 << 20):.0f} MiB, {args.runs} runs (medians), {args.secrets} known keys"
          f"{', one printed in every line' if args.leak else ''}")
    print(f"  shell alone to a file : {base:.2f} s")
    print(f"  bash tool             : {tool:.2f} s   ratio {tool / base:.2f}x   (target <= ~2x)")
    print(f"  pi-tui CPU time       : {cpu:.2f} s (user+sys of the tool's process; load-independent)")
    print(f"  peak RSS growth       : {growth_mb:.1f} MB   (target < 50 MB)")
    print(f"  full-output file      : {'complete' if complete else 'INCOMPLETE'}; "
          f"text to model {runs[0]['text_bytes']} bytes; UI updates {runs[0]['updates']}")
    ok = complete and growth_mb < 50 and tool / base <= 2.5
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
