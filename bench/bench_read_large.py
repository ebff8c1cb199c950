"""Benchmark: ``read`` of a 100 MB file with an offset near the end.

Target (issue 3): no full-file load per call beyond what the requested window needs. Each run is
a fresh interpreter that records its peak RSS (``VmHWM``) and the Python-heap peak
(``tracemalloc``) around one ``ReadTool.execute`` call. For comparison the same window is taken
the naive way pi does it (read the whole file, split on newlines). Medians over the runs.

    python bench/bench_read_large.py [--megabytes 100] [--runs 5]
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
ROOT = HERE.parent
LINE = b"2026-11-30T05:00:00Z INFO request handled path=/api/items status=200 duration_ms=12 id=%08d\n"

CHILD = """
import asyncio, json, sys, time, tracemalloc
from pathlib import Path
from pi_tui.core.tool import ToolContext
from pi_tui.tools.read import ReadTool

def peak_kb():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0

path, offset, mode, trace = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4] == "trace"
loop = asyncio.new_event_loop()
before = peak_kb()
if trace:  # tracemalloc slows allocation-heavy code: timed runs go without it
    tracemalloc.start()
started = time.perf_counter()
if mode == "tool":
    result = loop.run_until_complete(ReadTool().execute("b", {"path": str(path), "offset": offset}, ToolContext(cwd=path.parent)))
    shown = len(result.content[0]["text"].encode())
else:  # what pi does: load everything, split, slice
    lines = path.read_bytes().decode("utf-8").split("\\n")
    shown = len("\\n".join(lines[offset - 1 : offset - 1 + 2000]).encode())
elapsed = time.perf_counter() - started
heap_peak = tracemalloc.get_traced_memory()[1] if trace else 0
print(json.dumps({"seconds": elapsed, "rss_growth_kb": peak_kb() - before, "heap_peak": heap_peak, "shown": shown}))
"""


def make_file(folder: Path, megabytes: int) -> tuple[Path, int]:
    path = folder / "big.log"
    count = megabytes * 1024 * 1024 // len(LINE % 0)
    with open(path, "wb") as fh:
        block = 10_000
        for start in range(0, count, block):
            fh.write(b"".join(LINE % i for i in range(start, min(start + block, count))))
    return path, count


def child(path: Path, offset: int, mode: str, *, trace: bool = False) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(path), str(offset), mode, "trace" if trace else "time"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=int, default=100)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="pi-tui-bench-read-") as folder:
        path, count = make_file(Path(folder), args.megabytes)
        offset = count - 500
        tool = [child(path, offset, "tool") for _ in range(args.runs)]
        naive = [child(path, offset, "naive") for _ in range(args.runs)]
        tool_heap = child(path, offset, "tool", trace=True)["heap_peak"]
        naive_heap = child(path, offset, "naive", trace=True)["heap_peak"]
        size_mb = path.stat().st_size / 1e6

    def med(runs: list[dict[str, float]], key: str) -> float:
        return statistics.median(r[key] for r in runs)

    print(f"read {size_mb:.0f} MB file ({count} lines), offset {offset}, {args.runs} runs (medians)")
    print(f"  read tool   : {med(tool, 'seconds'):.3f} s   heap peak {tool_heap / 1e6:.1f} MB   "
          f"RSS growth {med(tool, 'rss_growth_kb') / 1024:.1f} MB")
    print(f"  naive (pi)  : {med(naive, 'seconds'):.3f} s   heap peak {naive_heap / 1e6:.1f} MB   "
          f"RSS growth {med(naive, 'rss_growth_kb') / 1024:.1f} MB")
    print(f"  ratio       : time {med(tool, 'seconds') / med(naive, 'seconds'):.2f}x, "
          f"heap {tool_heap / naive_heap:.3f}x; window shown {int(tool[0]['shown'])} bytes")
    return 0 if tool_heap < 8e6 else 1


if __name__ == "__main__":
    sys.exit(main())
