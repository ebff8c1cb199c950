"""ACP mode start-up: why the agent side does not import the SDK (docs/acp.md).

Interleaved, in fresh interpreters (each figure a median of RUNS):
* ``import acp`` (the official SDK, agent and client side: its pydantic schema) vs ``import
  pi_tui.modes.acp.server`` (our framing and the mode);
* ``pi-tui --mode acp`` spawned until its answer to ``initialize`` (what an editor waits for
  before it can open a session), no model configured (so the answer includes the setup check).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

RUNS = 7


def _import_seconds(module: str) -> float:
    code = f"import time; t = time.perf_counter(); import {module}; print(time.perf_counter() - t)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout.strip())


def _initialize_seconds(agent_dir: str) -> float:
    env = {**os.environ, "PI_CODING_AGENT_DIR": agent_dir}
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "pi_tui", "--mode", "acp"], env=env, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdin is not None and proc.stdout is not None
    request = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}}
    proc.stdin.write(json.dumps(request).encode() + b"\n")
    proc.stdin.flush()
    answer = json.loads(proc.stdout.readline())
    elapsed = time.perf_counter() - started
    assert answer["result"]["protocolVersion"] == 1
    proc.stdin.close()
    proc.wait(timeout=30)
    return elapsed


def main() -> None:
    sdk: list[float] = []
    ours: list[float] = []
    init: list[float] = []
    with tempfile.TemporaryDirectory() as agent_dir:
        for _ in range(RUNS):
            sdk.append(_import_seconds("acp"))
            ours.append(_import_seconds("pi_tui.modes.acp.server"))
            init.append(_initialize_seconds(agent_dir))
    sdk_m, ours_m = statistics.median(sdk), statistics.median(ours)
    print(f"import acp (SDK)                  median {sdk_m * 1000:7.0f} ms")
    print(f"import pi_tui.modes.acp.server    median {ours_m * 1000:7.0f} ms   (SDK / ours = {sdk_m / ours_m:.1f}x)")
    print(f"spawn -> initialize answer        median {statistics.median(init) * 1000:7.0f} ms")


if __name__ == "__main__":
    main()
