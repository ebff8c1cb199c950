"""The bash sandbox's cost: the preflight (once per run) and the time it adds to each bash call.

Each round runs ``true`` (and ``echo hi``) through ``tools.shell.run_shell`` — what the bash tool
does — without a sandbox and inside bwrap (the gate of a session in ``auto`` mode), interleaved,
and reports the medians and the added time. Goal: ≤ 20 ms median per call.

    python bench/bench_sandbox.py [--rounds 40]

Also: the time a domain list (``sandbox.network`` = hosts: the forwarder's Python start inside
the sandbox) adds to a call.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pi_tui.permissions import setup as permission_setup
from pi_tui.permissions.sandbox import SandboxPolicy, find_bwrap, new_temp_dir, run_preflight
from pi_tui.permissions.setup import PermissionOptions, build_gate
from pi_tui.tools.shell import run_shell


class _Settings:
    def __init__(self, global_file: dict | None = None) -> None:
        self.global_file = global_file or {}

    def file_settings(self, scope: str) -> dict:
        return self.global_file if scope == "global" else {}


async def one(command: str, cwd: Path, sandbox: object | None) -> float:
    started = time.perf_counter()
    outcome = await run_shell(command, cwd=cwd, settings={}, on_output=lambda _c: None, sandbox=sandbox,  # type: ignore[arg-type]
                              call_id="bench")
    elapsed = time.perf_counter() - started
    assert outcome.exit_code == 0, outcome
    return elapsed * 1000


def bare(argv: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(argv, check=True)
    return (time.perf_counter() - started) * 1000


def breakdown(gate: object, project: Path, rounds: int) -> None:
    """Where the time goes: bwrap alone with the fewest options, the full argument list, and the
    Python side (building the arguments). (The CPU time of the children is no guide: the
    namespaces are set up and torn down in kernel work no process is billed for.)"""
    runtime = gate.sandbox  # type: ignore[attr-defined]
    floor = ["/usr/bin/bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--", "/bin/true"]
    timings: dict[str, list[float]] = {"/bin/true": [], "bwrap, fewest options": [], "bwrap, full options": [],
                                       "building the arguments": []}
    for _ in range(rounds):
        timings["/bin/true"].append(bare(["/bin/true"]))
        timings["bwrap, fewest options"].append(bare(floor))
        started = time.perf_counter()
        command = runtime.command(["/bin/true"], project)
        timings["building the arguments"].append((time.perf_counter() - started) * 1000)
        try:
            started = time.perf_counter()
            subprocess.run(command.argv, pass_fds=command.pass_fds, check=True)
            timings["bwrap, full options"].append((time.perf_counter() - started) * 1000)
        finally:
            command.close()
    for label, values in timings.items():
        print(f"  {label:28} median {statistics.median(values):6.1f} ms")


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=40)
    rounds = parser.parse_args().rounds
    if find_bwrap() is None:
        print("bwrap is not installed: nothing to measure")
        return
    base = Path(tempfile.mkdtemp(prefix="pi-bench-sandbox-", dir="/var/tmp"))
    project = base / "project"
    project.mkdir()
    os.environ.pop("PI_PERMISSION_MODE", None)
    try:
        preflights = []
        for _ in range(10):
            temp = new_temp_dir()
            policy = SandboxPolicy(project=project, temp_dir=temp, home=Path.home(), agent_dir=base / "agent")
            preflights.append(run_preflight(policy).seconds * 1000)
            shutil.rmtree(temp, ignore_errors=True)
        permission_setup._PREFLIGHTS.clear()
        gate = build_gate(PermissionOptions(mode="auto"), cwd=project, agent_dir=base / "agent", settings=_Settings(),
                          trusted=True)
        assert gate.sandboxed
        print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
        for command in ("true", "echo hi; ls > /dev/null"):
            plain, boxed = [], []
            await one(command, project, None)
            await one(command, project, gate)
            for _ in range(rounds):
                plain.append(await one(command, project, None))
                boxed.append(await one(command, project, gate))
            p, b = statistics.median(plain), statistics.median(boxed)
            print(f"{command!r:28} direct {p:6.1f} ms   sandboxed {b:6.1f} ms   added {b - p:5.1f} ms (median of {rounds})")
        breakdown(gate, project, rounds)
        listed = build_gate(PermissionOptions(mode="auto"), cwd=project, agent_dir=base / "agent",
                            settings=_Settings({"sandbox": {"network": ["example.com"]}}), trusted=True)
        plain, boxed = [], []
        await one("true", project, listed)
        for _ in range(rounds):
            plain.append(await one("true", project, gate))
            boxed.append(await one("true", project, listed))
        p, b = statistics.median(plain), statistics.median(boxed)
        print(f"'true' with a domain list (the forwarder's Python start inside): {b:.1f} ms vs {p:.1f} ms "
              f"without, +{b - p:.1f} ms (median of {rounds})")
        listed.sandbox.close()
        print(f"preflight (bwrap … -- true, once per run): median {statistics.median(preflights):.1f} ms, "
              f"max {max(preflights):.1f} ms (10 runs)")
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    asyncio.run(main())
