"""Resume a 100,000-entry session and answer one prompt: pi-tui vs pi 0.73.1 (issue 19 item 15).

Each run is a fresh ``-p --session COPY "one more question"`` process against the OpenAI-compatible
fake server on 127.0.0.1 (one short answer), on its own copy of the file (both append to it).
pi and pi-tui are run interleaved (the machine is shared: a load change hits both alike).
Measured: wall time from spawn to exit, and peak RSS (``ru_maxrss`` of the child via ``wait4``).

    python bench/bench_resume.py [--rounds 5] [--entries 100000] [--no-pi]

pi 0.73.1 comes from ``make pi-ref`` (or ``PI_REF``); without it only pi-tui runs.
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
from pathlib import Path

from pi_tui.testing.fake_server import FakeServer
from pi_tui.testing.pi_reference import PI_CLI

ROOT = Path(__file__).resolve().parents[1]


def _agent(folder: Path, base_url: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "models.json").write_text(json.dumps({"providers": {"fake": {
        "baseUrl": base_url, "api": "openai-completions", "apiKey": "fake-key",
        "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
        "models": [{"id": "fake-model", "contextWindow": 1_000_000, "maxTokens": 1000}]}}}))
    (folder / "settings.json").write_text(json.dumps({
        "defaultProvider": "fake", "defaultModel": "fake-model", "compaction": {"enabled": False}}))
    return folder


def _session(work: Path, entries: int, project: Path) -> Path:
    source = work / "source.jsonl"
    subprocess.run([sys.executable, str(ROOT / "bench" / "gen_session.py"), str(entries), str(source)], check=True,
                   stdout=subprocess.DEVNULL)
    lines = source.read_text().splitlines(keepends=True)
    header = json.loads(lines[0])
    header["cwd"] = str(project)  # pi refuses a session whose folder is gone
    lines[0] = json.dumps(header) + "\n"
    source.write_text("".join(lines))
    return source


MEASURE = ("import os, resource, subprocess, sys, time, json\n"
           "t = time.perf_counter()\n"
           "p = subprocess.Popen(sys.argv[1:], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)\n"
           "out, err = p.communicate()\n"
           "wall = time.perf_counter() - t\n"
           "peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024\n"
           "print(json.dumps({'wall': wall, 'peak_mb': peak, 'rc': p.returncode, 'out': out.decode()[-200:], 'err': err.decode()[-2000:]}))\n")


def _measured(command: list[str], env: dict[str, str], cwd: Path) -> dict[str, float]:
    """One child run inside a fresh measuring process, so ``RUSAGE_CHILDREN`` is that child's alone."""
    done = subprocess.run([sys.executable, "-c", MEASURE, *command], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=600, check=True)
    result = json.loads(done.stdout)
    if result["rc"] != 0 or "answer" not in result["out"]:
        raise SystemExit(f"{command[:2]} failed ({result['rc']}): {result['err']}")
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--no-pi", action="store_true")
    args = parser.parse_args()
    programs = ["pi-tui"] + ([] if args.no_pi or not PI_CLI.is_file() else ["pi"])
    results: dict[str, list[dict[str, float]]] = {p: [] for p in programs}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        project, home = work / "project", work / "home"
        project.mkdir()
        home.mkdir()
        source = _session(work, args.entries, project)
        print(f"session: {args.entries:,} entries, {source.stat().st_size / 1e6:.1f} MB; load {os.getloadavg()}")
        with FakeServer([{"text": "answer"}] * (args.rounds * len(programs) + 2)) as server:
            agent = _agent(work / "agent", server.base_url)
            env = {"PATH": os.environ.get("PATH", ""), "HOME": str(home), "PI_OFFLINE": "1",
                   "PI_CODING_AGENT_DIR": str(agent), "PYTHONPATH": str(ROOT), "LITELLM_OFFLINE_MODE": "true"}
            for round_number in range(args.rounds):
                for program in programs if round_number % 2 == 0 else reversed(programs):
                    copy = work / f"{program}.jsonl"
                    shutil.copyfile(source, copy)
                    cli = ["node", str(PI_CLI)] if program == "pi" else [sys.executable, "-m", "pi_tui"]
                    result = _measured([*cli, "-p", "--session", str(copy), "one more question"], env, project)
                    results[program].append(result)
                    print(f"round {round_number + 1} {program:6}: {result['wall']:.2f} s, {result['peak_mb']:.0f} MB")
    print(f"load after: {os.getloadavg()}")
    medians = {p: (statistics.median(r["wall"] for r in rs), statistics.median(r["peak_mb"] for r in rs))
               for p, rs in results.items()}
    for program, (wall, peak) in medians.items():
        print(f"{program:6}: median {wall:.2f} s, peak RSS median {peak:.0f} MB")
    if "pi" in medians:
        (ours_wall, ours_peak), (pi_wall, pi_peak) = medians["pi-tui"], medians["pi"]
        print(f"pi-tui / pi: time {ours_wall / pi_wall:.2f}x, peak {ours_peak / pi_peak:.2f}x")


if __name__ == "__main__":
    main()
