"""The three speed bars of ``bench/`` for two checkouts of pi-tui, interleaved on one machine.

    python bench/compare_revisions.py before=ROOT after=ROOT [label=ROOT ...] [--rounds 15] [--resume-rounds 7]

Each root is a checkout (e.g. a detached ``git worktree``) whose ``pi_tui`` the child processes
import (``PYTHONPATH=ROOT``, ``python -m pi_tui``); the fake OpenAI-compatible server and the
session generator come from this checkout, so both revisions see the same wire and the same file.
Per round, in alternating order (first to last, then last to first, ...), so a change in the
machine's load hits both alike:

1. **first frame**: ``pi-tui --model fake/fake-model`` in a 120x40 tmux pane until the editor's
   placeholder is on screen (as ``bench_tui.py``), then Ctrl+C twice;
2. **``-p`` round trip**: ``pi-tui -p "say hi"`` from spawn to exit (as ``bench_print_roundtrip.py``);
3. **resume of 100,000 entries**: ``-p --session COPY "one more question"`` on a fresh copy of a
   ``gen_session.py`` file (as ``bench_resume.py``), wall time and the child's peak RSS.

With ``--instructions N`` it runs only the ``-p`` round trip, N times per revision, under
``valgrind --tool=cachegrind --cache-sim=no`` and reports the instructions the child executed
(``PYTHONHASHSEED=0``): a count that does not move with the machine's load (±0.1 % run to run
here), where wall and CPU times on a shared 2-core machine wander by 10-30 %.

Not part of ``make bench`` (``run_all.py`` runs ``bench_*.py`` only): it needs two checkouts.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from pi_tui.testing.fake_server import FakeServer  # noqa: E402

EDITOR_MARK = "Message · / commands"
MEASURE = ("import os, resource, subprocess, sys, time, json\n"
           "t = time.perf_counter()\n"
           "p = subprocess.Popen(sys.argv[1:], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)\n"
           "out, err = p.communicate()\n"
           "wall = time.perf_counter() - t\n"
           "usage = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
           "print(json.dumps({'wall': wall, 'cpu': usage.ru_utime + usage.ru_stime, 'peak_mb': usage.ru_maxrss / 1024,"
           " 'rc': p.returncode, 'out': out.decode()[-200:], 'err': err.decode()[-2000:]}))\n")


def _models(base_url: str) -> dict[str, object]:
    return {"providers": {"fake": {
        "baseUrl": base_url, "api": "openai-completions", "apiKey": "fake-key",
        "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
        "models": [{"id": "fake-model", "contextWindow": 1_000_000, "maxTokens": 1000}]}}}


def _agent(folder: Path, base_url: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "models.json").write_text(json.dumps(_models(base_url)))
    (folder / "settings.json").write_text(json.dumps({
        "defaultProvider": "fake", "defaultModel": "fake-model", "compaction": {"enabled": False}}))
    return folder


def _measured(command: list[str], env: dict[str, str], cwd: Path, expect: str) -> dict[str, float]:
    """One child run inside a fresh measuring process, so ``RUSAGE_CHILDREN`` is that child's alone."""
    done = subprocess.run([sys.executable, "-c", MEASURE, *command], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=600, check=True)
    result: dict[str, float] = json.loads(done.stdout)
    if result["rc"] != 0 or expect not in str(result["out"]):
        raise SystemExit(f"{command} failed ({result['rc']}): {result['err']}")
    return result


def _tmux(*args: str) -> str:
    return subprocess.run(["tmux", *args], capture_output=True, text=True, check=False, timeout=30).stdout


def _cpu_seconds_of_pane(name: str) -> float:
    """User+system CPU the pane's pi-tui process has used so far (``/proc``), 0 when not found."""
    shell = int(_tmux("list-panes", "-t", name, "-F", "#{pane_pid}").strip() or 0)
    tick = os.sysconf("SC_CLK_TCK")
    stats: dict[int, list[str]] = {}
    for folder in Path("/proc").iterdir():
        if folder.name.isdigit():
            try:
                stats[int(folder.name)] = (folder / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
    family, grew = {shell}, True
    while grew:  # the pane's shell and everything under it
        grown = family | {pid for pid, fields in stats.items() if int(fields[1]) in family}
        grew, family = grown != family, grown
    for pid in sorted(family - {shell}):
        try:
            if b"pi_tui" in Path(f"/proc/{pid}/cmdline").read_bytes():
                return (int(stats[pid][11]) + int(stats[pid][12])) / tick
        except OSError:
            continue
    return 0.0


def _first_frame(root: Path, env: dict[str, str], cwd: Path) -> tuple[float, float]:
    name = f"cmp-{uuid.uuid4().hex[:8]}"
    exports = " ".join(f"{k}={v}" for k, v in env.items())
    shell = f"cd {cwd} && {exports} {sys.executable} -m pi_tui --model fake/fake-model; echo BENCH_EXITED; sleep 30"
    launched = time.perf_counter()
    _tmux("new-session", "-d", "-s", name, "-x", "120", "-y", "40", shell)
    try:
        while EDITOR_MARK not in _tmux("capture-pane", "-p", "-t", name):
            if time.perf_counter() - launched > 60:
                raise SystemExit(f"no first frame for {root}:\n" + _tmux("capture-pane", "-p", "-t", name))
            time.sleep(0.005)
        shown = time.perf_counter() - launched
        cpu = _cpu_seconds_of_pane(name)
        for key in ("C-c", "C-c"):
            _tmux("send-keys", "-t", name, key)
        deadline = time.perf_counter() + 15
        while "BENCH_EXITED" not in _tmux("capture-pane", "-p", "-t", name) and time.perf_counter() < deadline:
            time.sleep(0.02)
        return shown, cpu
    finally:
        _tmux("kill-session", "-t", name)


def _env(root: Path, home: Path, agent: Path) -> dict[str, str]:
    return {"PATH": os.environ.get("PATH", ""), "HOME": str(home), "PI_OFFLINE": "1", "PI_CODING_AGENT_DIR": str(agent),
            "PYTHONPATH": str(root), "LITELLM_OFFLINE_MODE": "true", "TEXTUAL_FPS": "30"}


def _instructions(env: dict[str, str], cwd: Path) -> float:
    """Millions of instructions one ``-p "say hi"`` executes (the Python process itself)."""
    done = subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null",
                           sys.executable, "-m", "pi_tui", "-p", "say hi"], cwd=cwd, env={**env, "PYTHONHASHSEED": "0"},
                          capture_output=True, text=True, timeout=600, check=False)
    found = re.search(r"I\s+refs:\s+([\d,]+)", done.stderr)
    if done.returncode != 0 or "answer" not in done.stdout or found is None:
        raise SystemExit(f"-p under valgrind failed ({done.returncode}): {done.stderr[-2000:]}")
    return int(found.group(1).replace(",", "")) / 1e6


def _count_instructions(roots: dict[str, Path], rounds: int) -> int:
    counts: dict[str, list[float]] = {label: [] for label in roots}
    with tempfile.TemporaryDirectory(prefix="cmp-rev-") as tmp, FakeServer([{"text": "answer"}] * (rounds * len(roots) + 2)) as server:
        work = Path(tmp)
        project, home = work / "project", work / "home"
        project.mkdir()
        home.mkdir()
        agent = _agent(work / "agent", server.base_url)
        for _ in range(rounds):
            for label, root in roots.items():
                counts[label].append(_instructions(_env(root, home, agent), project))
    baseline = statistics.median(counts[next(iter(roots))])
    for label, values in counts.items():
        print(f"-p instructions {label:<10} {_summary(values)} M   /{next(iter(roots))} {statistics.median(values) / baseline:.3f}")
    return 0


def _summary(values: list[float]) -> str:
    return f"{statistics.median(values):.3f} (min {min(values):.3f}, max {max(values):.3f}, n={len(values)})"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("roots", nargs="+", help="label=ROOT; the first is the baseline of the ratios")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--resume-rounds", type=int, default=7)
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--instructions", type=int, default=0, metavar="N",
                        help="only count the instructions of N -p round trips per revision (valgrind)")
    args = parser.parse_args()
    roots = {label: Path(root).resolve() for label, _, root in (item.partition("=") for item in args.roots)}
    for root in roots.values():  # as installed: pip writes bytecode, PYTHONDONTWRITEBYTECODE is set here
        compileall.compile_dir(str(root / "pi_tui"), quiet=1)
    if args.instructions:
        return _count_instructions(roots, args.instructions)
    results: dict[str, dict[str, list[float]]] = {
        label: {"frame": [], "frame_cpu": [], "print": [], "print_cpu": [], "print_rss": [], "resume": [], "resume_cpu": [], "resume_rss": []}
        for label in roots}
    loads: list[float] = []
    with tempfile.TemporaryDirectory(prefix="cmp-rev-") as tmp:
        work = Path(tmp)
        project, home = work / "project", work / "home"
        project.mkdir()
        home.mkdir()
        source = work / "source.jsonl"
        subprocess.run([sys.executable, str(HERE / "gen_session.py"), str(args.entries), str(source)], check=True,
                       stdout=subprocess.DEVNULL, timeout=600)
        lines = source.read_text().splitlines(keepends=True)
        header = json.loads(lines[0])
        header["cwd"] = str(project)
        lines[0] = json.dumps(header) + "\n"
        source.write_text("".join(lines))
        del lines
        answers = [{"text": "answer", "usage": {"prompt_tokens": 1200, "completion_tokens": 9}}]
        with FakeServer(answers * (len(roots) * (args.rounds + args.resume_rounds) + 8)) as server:
            agent = _agent(work / "agent", server.base_url)
            for root in roots.values():  # one untimed run each: the page cache holds every revision's files alike
                _measured([sys.executable, "-m", "pi_tui", "-p", "say hi"], _env(root, home, agent), project, "answer")
            for round_number in range(max(args.rounds, args.resume_rounds)):
                order = list(roots) if round_number % 2 == 0 else list(reversed(roots))
                loads.append(os.getloadavg()[0])
                for label in order:
                    root = roots[label]
                    env = _env(root, home, agent)
                    row = results[label]
                    if round_number < args.rounds:
                        frame, frame_cpu = _first_frame(root, env, project)
                        row["frame"].append(frame)
                        row["frame_cpu"].append(frame_cpu)
                        run = _measured([sys.executable, "-m", "pi_tui", "-p", "say hi"], env, project, "answer")
                        row["print"].append(run["wall"])
                        row["print_cpu"].append(run["cpu"])
                        row["print_rss"].append(run["peak_mb"])
                    if round_number < args.resume_rounds:
                        copy = work / f"{label}.jsonl"
                        shutil.copyfile(source, copy)
                        run = _measured([sys.executable, "-m", "pi_tui", "-p", "--session", str(copy),
                                         "one more question"], env, project, "answer")
                        row["resume"].append(run["wall"])
                        row["resume_cpu"].append(run["cpu"])
                        row["resume_rss"].append(run["peak_mb"])
                print(f"round {round_number + 1}: load {loads[-1]:.2f}  " + "  ".join(
                    f"{label}: " + " ".join(f"{what} {results[label][what][-1]:.3f}" for what in ("frame", "print", "resume")
                                            if len(results[label][what]) > round_number)
                    for label in roots), flush=True)
    print(f"load average during the rounds: {min(loads):.2f}-{max(loads):.2f} (median {statistics.median(loads):.2f})")
    baseline = next(iter(roots))
    for what, unit in (("frame", "s"), ("frame_cpu", "s"), ("print", "s"), ("print_cpu", "s"), ("print_rss", "MB"), ("resume", "s"),
                       ("resume_cpu", "s"), ("resume_rss", "MB")):
        if not results[baseline][what]:
            continue
        base = statistics.median(results[baseline][what])
        for label in roots:
            values = results[label][what]
            print(f"{what:<11} {label:<10} {_summary(values)} {unit}   /{baseline} {statistics.median(values) / base:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
