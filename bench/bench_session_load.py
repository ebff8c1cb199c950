"""Benchmark: open a 100,000-entry session and project its context.

Each run is a fresh interpreter (so caches and an already-grown heap don't flatter the result),
which opens the file with ``SessionManager.open`` (read, parse, check every entry, index, lock)
and calls ``build_session_context()`` from the leaf. Reports the median over the runs and the peak RSS
of the child process (``VmHWM``), next to the RSS of an interpreter that only imported the
modules.

    python bench/bench_session_load.py [--entries 100000] [--runs 5] [--file PATH]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

CHILD = """
import json, resource, sys, time
from pathlib import Path
from pi_tui.core.session.manager import SessionManager

def peak_kb():
    # VmHWM belongs to this process's own memory map; ru_maxrss can carry the parent's peak
    # across fork+exec on Linux.
    try:
        for line in open("/proc/self/status"):
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

baseline = peak_kb()
path = Path(sys.argv[1])
import pi_tui.core.session.loading as loading

checks_cpu = [0.0]
_check_entries = loading.check_entries


def timed_check_entries(*args, **kwargs):  # the checks after the parse (a large file's fast check runs during it)
    start = time.process_time()
    try:
        return _check_entries(*args, **kwargs)
    finally:
        checks_cpu[0] += time.process_time() - start


loading.check_entries = timed_check_entries
if sys.argv[2] == "run":
    c0, t0 = time.process_time(), time.perf_counter()
    manager = SessionManager.open(path, cwd=path.parent)
    t1 = time.perf_counter()
    context = manager.build_session_context()
    c2, t2 = time.process_time(), time.perf_counter()
    manager.close()
    print(json.dumps({"load": t1 - t0, "project": t2 - t1, "cpu": c2 - c0, "checks_cpu": checks_cpu[0],
                      "entries": len(manager.get_entries()),
                      "messages": len(context.messages),
                      "rss_kb": peak_kb()}))
else:
    print(json.dumps({"rss_kb": baseline}))
"""


def _child(path: Path, what: str) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(path), what], capture_output=True, text=True, check=True, cwd=HERE.parent
    )
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--file", type=Path, help="use this session file instead of generating one")
    args = parser.parse_args()

    from gen_session import write_session

    with tempfile.TemporaryDirectory(prefix="pi-tui-bench-") as tmp:
        path = args.file or write_session(Path(tmp) / "bench-session.jsonl", args.entries)
        size_mb = path.stat().st_size / 1e6
        runs = [_child(path, "run") for _ in range(args.runs)]
        baseline = _child(path, "baseline")
    totals = [r["load"] + r["project"] for r in runs]
    load = statistics.median(r["load"] for r in runs)
    project = statistics.median(r["project"] for r in runs)
    peak_mb = max(r["rss_kb"] for r in runs) / 1024
    base_mb = baseline["rss_kb"] / 1024
    entries = int(runs[0]["entries"])
    print(
        f"session_load: {entries} entries ({size_mb:.1f} MB): open+project median "
        f"{statistics.median(totals):.2f} s (min {min(totals):.2f}, max {max(totals):.2f}, {args.runs} runs; "
        f"open {load:.2f} s, project {project:.3f} s, {int(runs[0]['messages'])} messages in context)"
    )
    cpu = statistics.median(r["cpu"] for r in runs)
    checks = statistics.median(r["checks_cpu"] for r in runs)
    print(f"session_load: CPU time median {cpu:.2f} s (wall time suffers when the machine is busy), of which "
          f"{checks:.2f} s checking the entries after the parse (core/session/validation.py; the fast check of a "
          "large file's entries runs inside the parse, well_formed.Admission)")
    print(f"session_load: peak RSS {peak_mb:.0f} MB (interpreter with the modules imported: {base_mb:.0f} MB)")


if __name__ == "__main__":
    main()
