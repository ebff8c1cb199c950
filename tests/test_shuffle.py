"""``tests/shuffle.py`` (``make test-shuffled``): a random order that a seed repeats, every test
still run once, a module's tests kept together."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _order(folder: Path, *args: str, shuffled: bool = True) -> list[str]:
    plugin = ["-p", "tests.shuffle"] if shuffled else []
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", *plugin, "-p", "no:cacheprovider",
         "--rootdir", str(folder), *args, str(folder)],
        cwd=folder, env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, text=True, check=True, timeout=120)
    return [line for line in done.stdout.splitlines() if "::" in line]


def test_a_seed_gives_one_order_and_each_module_stays_together(tmp_path: Path) -> None:
    for module in "abcdef":
        (tmp_path / f"test_{module}.py").write_text("".join(f"def test_{n}():\n    pass\n" for n in range(6)))
    written = _order(tmp_path, shuffled=False)
    first = _order(tmp_path, "--shuffle-seed", "7")
    assert _order(tmp_path, "--shuffle-seed", "7") == first
    others = [_order(tmp_path, "--shuffle-seed", str(seed)) for seed in (8, 9)]
    assert sorted(first) == sorted(written) and len(first) == 36
    assert first != written and any(order != first for order in others)
    modules = [test.split("::")[0] for test in first]
    assert [m for i, m in enumerate(modules) if i == 0 or modules[i - 1] != m] == list(dict.fromkeys(modules))
