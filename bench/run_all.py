"""``make bench``: run every ``bench/bench_*.py`` in turn; each prints its own result lines.

Exits non-zero if any benchmark failed (the others still run).
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    failed: list[str] = []
    for script in sorted(HERE.glob("bench_*.py")):
        print(f"## {script.name}", flush=True)
        started = time.perf_counter()
        result = subprocess.run([sys.executable, str(script)], cwd=HERE.parent)
        if result.returncode != 0:
            failed.append(script.name)
            print(f"!! {script.name} failed with exit code {result.returncode}", flush=True)
        print(f"   ({time.perf_counter() - started:.1f} s)", flush=True)
    if failed:
        print(f"failed: {', '.join(failed)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
