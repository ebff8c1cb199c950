"""Benchmark: what MCP servers cost at start-up and per request (docs/mcp.md).

1. First frame in tmux (``pi-tui --model fake/fake-model`` until the editor shows): no server
   configured vs three stdio servers (server-everything, server-filesystem, mcp-server-time from
   ``make mcp-servers``). The servers start in the background after the frame: it should not move.
2. ``pi-tui -p "hi"`` round trip against the fake server: no servers vs the same three. Print mode
   waits for the servers (each at most its start-up timeout) before the first request, so the
   difference is their start.
3. Request bytes per turn with server-everything attached, direct tools vs only the ``mcp`` tool
   (``mcp.maxContextShare: 0`` forces it): the JSON body the fake server receives, and its
   ``tools`` part, for a two-request prompt (a tool call, then the answer); both requests' tools
   must be byte-identical (the frozen list).

    python bench/bench_mcp.py [--runs 5]

Skips, saying so, when the servers are not installed. Results: bench/RESULTS.md ("MCP").
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

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_tui import EDITOR_MARK, PI_TUI, agent_with_models, run_in_tmux  # noqa: E402

from pi_tui.testing.fake_server import FakeServer  # noqa: E402

SERVERS = ROOT / ".mcp-servers"
BIN = SERVERS / "npm" / "node_modules" / ".bin"
THREE = {
    "everything": {"command": str(BIN / "mcp-server-everything"), "args": ["stdio"]},
    "files": {"command": str(BIN / "mcp-server-filesystem"), "args": ["."]},
    "time": {"command": str(SERVERS / "time" / "bin" / "mcp-server-time")},
}


def _installed() -> bool:
    return all(Path(entry["command"]).exists() for entry in THREE.values())


def _write_servers(agent: Path, servers: dict[str, object] | None) -> None:
    path = agent / "mcp.json"
    if servers is None:
        path.unlink(missing_ok=True)
    else:
        path.write_text(json.dumps({"mcpServers": servers}))


def _stats(values: list[float]) -> str:
    return f"median {statistics.median(values):.3f} s, min {min(values):.3f}, max {max(values):.3f}"


def bench_first_frame(runs: int, base: Path) -> list[str]:
    project = base / "project-frame"
    project.mkdir()
    frames: dict[str, list[float]] = {"no servers": [], "three stdio servers": []}
    with FakeServer([]) as server:
        agent = agent_with_models(base / "frame", server.base_url)
        env = {"HOME": str(base), "PI_CODING_AGENT_DIR": str(agent), "PYTHONPATH": str(ROOT)}
        for _ in range(runs):  # interleaved: a change in the machine's load hits both alike
            for label, servers in (("no servers", None), ("three stdio servers", THREE)):
                _write_servers(agent, servers)
                try:
                    shown, _quit = run_in_tmux(f"{PI_TUI} --model fake/fake-model", env, project, until=EDITOR_MARK)
                except RuntimeError as error:  # a blank pane on a loaded machine: said, not counted
                    print(f"first frame, {label}: a run failed ({str(error).splitlines()[0]})", file=sys.stderr)
                    continue
                frames[label].append(shown)
    return [f"first frame, {label}: {_stats(values)} ({len(values)} runs)" for label, values in frames.items() if values]


def _print_run(agent: Path, project: Path, env: dict[str, str]) -> float:
    started = time.perf_counter()
    out = subprocess.run([PI_TUI, "-p", "--model", "fake/fake-model", "hi"], cwd=project, env=env,
                         capture_output=True, text=True, timeout=120, check=False)
    elapsed = time.perf_counter() - started
    if out.returncode != 0 or "not connected" in out.stderr:
        raise SystemExit(f"-p failed: {out.stderr.strip()}")
    return elapsed


def bench_print(runs: int, base: Path) -> list[str]:
    project = base / "project-print"
    project.mkdir()
    times: dict[str, list[float]] = {"no servers": [], "three stdio servers": []}
    for _ in range(runs):
        for label, servers in (("no servers", None), ("three stdio servers", THREE)):
            with FakeServer([{"text": "hello"}]) as server:
                agent = agent_with_models(base / "print", server.base_url)
                _write_servers(agent, servers)
                env = {**os.environ, "HOME": str(base), "PI_CODING_AGENT_DIR": str(agent), "PYTHONPATH": str(ROOT)}
                times[label].append(_print_run(agent, project, env))
    return [f"-p round trip, {label}: {_stats(values)} ({runs} runs)" for label, values in times.items()]


def bench_request_bytes(base: Path) -> list[str]:
    project = base / "project-bytes"
    project.mkdir()
    lines = []
    for label, share, call in (
        ("direct tools", None, {"id": "c1", "name": "mcp__everything__echo", "arguments": {"message": "hi"}}),
        ("only the mcp tool", 0, {"id": "c1", "name": "mcp", "arguments": {
            "action": "call", "tool": "mcp__everything__echo", "arguments": {"message": "hi"}}}),
    ):
        with FakeServer([{"tool_calls": [call]}, {"text": "done"}]) as server:
            agent = agent_with_models(base / f"bytes-{share}", server.base_url)
            _write_servers(agent, {"everything": THREE["everything"]})
            if share is not None:
                (agent / "settings.json").write_text(json.dumps({"mcp": {"maxContextShare": share}}))
            env = {**os.environ, "HOME": str(base), "PI_CODING_AGENT_DIR": str(agent), "PYTHONPATH": str(ROOT)}
            _print_run(agent, project, env)
            requests = server.requests
        bodies = [len(json.dumps(r).encode()) for r in requests]
        tools = [json.dumps(r.get("tools", [])).encode() for r in requests]
        same = "byte-identical" if len(set(tools)) == 1 else "DIFFERENT"
        lines.append(f"request bytes, server-everything, {label}: first request {bodies[0]:,} B "
                     f"(tools {len(tools[0]):,} B, {len(requests[0].get('tools', []))} tools), second {bodies[1]:,} B; "
                     f"tools of both requests {same}")
    with FakeServer([{"text": "done"}]) as server:  # the same request without any server
        agent = agent_with_models(base / "bytes-none", server.base_url)
        env = {**os.environ, "HOME": str(base), "PI_CODING_AGENT_DIR": str(agent), "PYTHONPATH": str(ROOT)}
        _print_run(agent, project, env)
        plain = server.requests[0]
    lines.append(f"request bytes, no MCP server: {len(json.dumps(plain).encode()):,} B "
                 f"(tools {len(json.dumps(plain.get('tools', [])).encode()):,} B)")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    if not _installed():
        print(f"bench_mcp: skipped — the MCP test servers are not installed in {SERVERS} (make mcp-servers)")
        return 0
    base = Path(tempfile.mkdtemp(prefix="bench-mcp-"))
    for part in (bench_request_bytes, lambda b: bench_print(args.runs, b), lambda b: bench_first_frame(args.runs, b)):
        for line in part(base):
            print(line, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
