"""TUI speed: first frame in a real terminal, streaming throughput, opening a long session.

    python bench/bench_tui.py [--runs 5] [--skip-tmux]

1. **First frame (tmux)**: ``pi-tui`` started in a 120x40 tmux pane until the editor is on screen
   (target < 0.5 s), for a models.json model (direct HTTP client, no litellm) and for a litellm
   model (litellm then loads in a background thread); then Ctrl+C twice until the process is gone
   (quitting must be immediate even while litellm is still importing).
2. **Streaming at 2,000 tokens/s**: the real app (headless) on a real session against the fake
   OpenAI-compatible server sending ~1 token per chunk at 2,000 chunks/s. Reports chunks/s the UI
   absorbed, the worst event-loop stall (a 5 ms ticker's lateness) and the worst delay between a
   session event and its handler.
3. **Opening a 10,000-entry session** (``bench/gen_session.py``): in tmux, ``pi-tui --session FILE``
   until the last answer is on screen; and in-process, the time to load the session and to mount
   the end of the conversation.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

EDITOR_MARK = "Message · / commands"
PI_TUI = str(Path(sys.executable).with_name("pi-tui"))
"""The console script users (and `make run`) start; ``python -m pi_tui`` would add runpy's ~8 ms."""
# The interactive mode runs Textual at 30 frames/s (modes/interactive/__init__.py); so does this.
os.environ.setdefault("TEXTUAL_FPS", "30")


# --------------------------------------------------------------------------- tmux helpers


def tmux(*args: str) -> str:
    return subprocess.run(["tmux", *args], capture_output=True, text=True, check=False).stdout


def wait_screen(name: str, text: str, seconds: float = 30.0) -> float:
    started = time.perf_counter()
    while time.perf_counter() - started < seconds:
        if text in tmux("capture-pane", "-p", "-t", name):
            return time.perf_counter() - started
        time.sleep(0.005)
    raise RuntimeError(f"{text!r} not on screen after {seconds}s:\n" + tmux("capture-pane", "-p", "-t", name))


def run_in_tmux(command: str, env: dict[str, str], cwd: Path, *, until: str, keys_after: list[str] | None = None,
                wait_exit: bool = True) -> tuple[float, float | None]:
    """Start ``command``; seconds until ``until`` shows; then the seconds quitting took."""
    name = f"bench-{uuid.uuid4().hex[:8]}"
    exports = " ".join(f"{k}={v}" for k, v in env.items())
    shell = f"cd {cwd} && {exports} {command}; echo BENCH_EXITED; sleep 30"
    launched = time.perf_counter()
    tmux("new-session", "-d", "-s", name, "-x", "120", "-y", "40", shell)
    try:
        shown = wait_screen(name, until)
        shown_at = time.perf_counter() - launched
        quit_time = None
        if wait_exit:
            started = time.perf_counter()
            for key in keys_after or ["C-c", "C-c"]:
                tmux("send-keys", "-t", name, key)
            wait_screen(name, "BENCH_EXITED", seconds=15)
            quit_time = time.perf_counter() - started
        del shown
        return shown_at, quit_time
    finally:
        tmux("kill-session", "-t", name)


def agent_with_models(base: Path, base_url: str) -> Path:
    agent = base / "agent"
    agent.mkdir(parents=True, exist_ok=True)
    (agent / "models.json").write_text(json.dumps({"providers": {"fake": {
        "baseUrl": base_url, "api": "openai-completions", "apiKey": "bench",
        "models": [{"id": "fake-model", "contextWindow": 128000}],
    }}}))
    return agent


def bench_first_frame(runs: int) -> list[str]:
    import compileall

    from pi_tui.testing.fake_server import FakeServer

    # As installed (pip writes bytecode) and as `make run` starts it: with PYTHONDONTWRITEBYTECODE
    # set (as on the machines these benchmarks ran on) every start would compile our modules again.
    compileall.compile_dir(str(ROOT / "pi_tui"), quiet=1)

    lines = []
    base = Path(tempfile.mkdtemp(prefix="bench-tui-"))
    project = base / "project"
    project.mkdir()
    with FakeServer([]) as server:
        agent = agent_with_models(base, server.base_url)
        env = {"HOME": str(base), "PI_CODING_AGENT_DIR": str(agent)}
        variants = (
            ("models.json model (no litellm)", f"{PI_TUI} --model fake/fake-model", {}),
            ("litellm model (litellm loads in background)", f"{PI_TUI} --model openai/gpt-4o",
             {"OPENAI_API_KEY": "sk-bench", "LITELLM_OFFLINE_MODE": "true"}),
            ("bare Textual app (Static + TextArea, the floor)", f"{sys.executable} {ROOT / 'bench' / 'bare_textual_app.py'}",
             {}),
        )
        frames: dict[str, list[float]] = {label: [] for label, _, _ in variants}
        quits: dict[str, list[float]] = {label: [] for label, _, _ in variants}
        for _ in range(runs):  # interleaved, so a change in the machine's load hits every variant alike
            for label, command, extra in variants:
                keys = ["C-c"] if label.startswith("bare") else ["C-c", "C-c"]
                shown, quit_time = run_in_tmux(command, {**env, **extra}, project, until=EDITOR_MARK, keys_after=keys)
                frames[label].append(shown)
                quits[label].append(quit_time or 0.0)
        for label, _, _ in variants:
            values = frames[label]
            lines.append(f"first frame, {label}: median {statistics.median(values):.3f} s, "
                         f"min {min(values):.3f} s, max {max(values):.3f} s ({runs} runs, target 0.5 s)")
            if not label.startswith("bare"):
                lines.append(f"quit (ctrl+c twice → process gone), {label}: median "
                             f"{statistics.median(quits[label]):.3f} s, max {max(quits[label]):.3f} s")
    return lines


# --------------------------------------------------------------------------- streaming


def _answer_text(tokens: int) -> str:
    """An LLM-like answer of about ``tokens`` tokens (4 chars each): paragraphs, a list, code."""
    parts: list[str] = []
    count = 0
    block = 0
    while count < tokens:
        block += 1
        if block % 5 == 0:
            lines = [f"    value_{block}_{i} = compute({i})" for i in range(8)]
            parts.append("```python\n" + "\n".join(lines) + "\n```")
            count += 8 * 8
        elif block % 3 == 0:
            parts.append("\n".join(f"- item {block}.{i} is ready" for i in range(5)))
            count += 5 * 6
        else:
            parts.append(" ".join(f"w{(block * 31 + i) % 97:02d}" for i in range(60)))
            count += 60
    return "\n\n".join(parts)


class ServerProcess:
    """The fake server in its own process, as a real provider is: an in-process server thread
    would share the GIL with the UI and slow down exactly when the UI is busy."""

    def __init__(self, turns: list[dict[str, Any]], base: Path) -> None:
        self.script = base / "stream-script.json"
        self.script.write_text(json.dumps({"turns": turns}))
        self.proc: subprocess.Popen[str] | None = None

    def __enter__(self) -> str:
        self.proc = subprocess.Popen([sys.executable, "-m", "pi_tui.testing.fake_server", "--script",
                                      str(self.script)], stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        port = int(self.proc.stdout.readline().split()[1])
        return f"http://127.0.0.1:{port}/v1"

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()


async def _stream_once(tokens: int, chunks_per_second: int) -> dict[str, float]:
    from pi_tui.modes.interactive import chat_events
    from pi_tui.modes.interactive.app import PiApp, settle_gc_after_startup, warm_content_modules
    from pi_tui.sdk import create_agent_session

    warm_content_modules()  # as the app's startup thread does before the first prompt
    settle_gc_after_startup()
    text = _answer_text(tokens)
    turn = {"text": text, "chunk_size": 4, "chunk_delay_ms": 1000 / chunks_per_second}
    base = Path(tempfile.mkdtemp(prefix="bench-stream-"))
    project = base / "project"
    project.mkdir()
    handled: list[tuple[float, float]] = []
    emitted: list[float] = []
    original = chat_events.ChatEventRenderer.handle

    async def timed(self: Any, event: dict[str, Any]) -> None:
        started = time.perf_counter()
        await original(self, event)
        if event.get("type") == "message_update":
            handled.append((event.get("_emitted", started), started))

    def stamp(event: dict[str, Any]) -> None:
        if event.get("type") == "message_update":
            event["_emitted"] = time.perf_counter()
            emitted.append(event["_emitted"])

    chat_events.ChatEventRenderer.handle = timed  # type: ignore[method-assign]
    try:
        with ServerProcess([turn], base) as base_url:
            agent = agent_with_models(base, base_url)
            session = create_agent_session(cwd=project, agent_dir=agent, model="fake/fake-model",
                                           settings={}, load_extensions=False, no_session=True)
            session._listeners.insert(0, stamp)
            app = PiApp(session, cwd=project, agent_dir=agent)
            async with app.run_test(size=(120, 40)) as pilot:
                stalls: list[float] = []
                stop = asyncio.Event()

                async def ticker() -> None:
                    while not stop.is_set():
                        before = time.perf_counter()
                        await asyncio.sleep(0.005)
                        stalls.append(time.perf_counter() - before - 0.005)

                tick = asyncio.create_task(ticker())
                assert app.chat is not None
                app.chat.run_prompt("stream please")
                await app.chat.workers.wait_for_complete()
                await _quiet(handled, 0.3)
                stop.set()
                await tick
                await pilot.pause()
    finally:
        chat_events.ChatEventRenderer.handle = original  # type: ignore[method-assign]
    lags = sorted(h - e for e, h in handled)
    read_seconds = emitted[-1] - emitted[0]
    return {
        "chunks": len(emitted), "seconds": read_seconds, "chunks_per_s": len(emitted) / read_seconds,
        "worst_stall_ms": max(stalls) * 1000, "p99_stall_ms": sorted(stalls)[int(len(stalls) * 0.99)] * 1000,
        "worst_event_lag_ms": lags[-1] * 1000, "p99_event_lag_ms": lags[int(len(lags) * 0.99)] * 1000,
        "handler_calls": len(handled), "ui_done_after_s": handled[-1][1] - emitted[-1],
    }


async def _quiet(handled: list[tuple[float, float]], seconds: float) -> None:
    """Until no event was handled for ``seconds`` (the UI has caught up with the stream)."""
    while not handled or time.perf_counter() - handled[-1][1] < seconds:  # noqa: ASYNC110 - polling a list
        await asyncio.sleep(0.05)


def bench_streaming(runs: int = 3) -> list[str]:
    """Chunks/s = how fast the session read the stream while the UI ran (2,000 = kept up); the
    lag = from the session receiving a delta to the screen handler applying it."""
    results = [asyncio.run(_stream_once(tokens=6000, chunks_per_second=2000)) for _ in range(runs)]
    med = {key: statistics.median(r[key] for r in results) for key in results[0]}
    return [
        f"streaming at 2,000 tokens/s (fake server in its own process, 1 token per chunk, 6,000 tokens), "
        f"median of {runs}: {med['chunks']:.0f} chunks read in {med['seconds']:.2f} s = {med['chunks_per_s']:.0f} chunks/s "
        f"(runs: {', '.join(str(round(r['chunks_per_s'])) for r in results)}); worst event-loop stall "
        f"{med['worst_stall_ms']:.0f} ms (p99 {med['p99_stall_ms']:.0f} ms); delta→screen-handler delay worst "
        f"{med['worst_event_lag_ms']:.0f} ms, p99 {med['p99_event_lag_ms']:.0f} ms; {med['handler_calls']:.0f} merged "
        f"handler calls; the screen had the last text {med['ui_done_after_s'] * 1000:.0f} ms after the last chunk",
    ]


# --------------------------------------------------------------------------- long session


async def _open_in_process(path: Path, project: Path, agent: Path) -> dict[str, float]:
    from pi_tui.modes.interactive.app import PiApp
    from pi_tui.modes.interactive.widgets.conversation import Conversation
    from pi_tui.sdk import create_agent_session

    started = time.perf_counter()
    session = create_agent_session(cwd=project, agent_dir=agent, session=str(path), settings={},
                                   load_extensions=False, provider=_NoProvider())
    loaded = time.perf_counter() - started
    app = PiApp(session, cwd=project, agent_dir=agent)
    mount_started = time.perf_counter()
    async with app.run_test(size=(120, 40)) as pilot:
        assert app.chat is not None
        await app.chat.history_loaded.wait()
        await pilot.pause()
        conversation = app.screen.query_one(Conversation)
        shown = time.perf_counter() - mount_started
        widgets = len(conversation.children)
        pending = conversation.unrendered_count
    session.session_manager.close()
    return {"load": loaded, "show": shown, "widgets": widgets, "pending": pending,
            "messages": len(session.messages)}


class _NoProvider:
    async def stream(self, request: Any) -> Any:  # pragma: no cover - never called
        raise RuntimeError("not used")
        yield


def bench_long_session(skip_tmux: bool) -> list[str]:
    from gen_session import write_session

    base = Path(tempfile.mkdtemp(prefix="bench-long-"))
    project = base / "project"
    project.mkdir()
    agent = base / "agent"
    agent.mkdir()
    path = write_session(base / "long.jsonl", 10_000)
    _append_end_marker(path)
    entries = sum(1 for _ in path.open(encoding="utf-8")) - 1
    # The generator records its own cwd; open it from the project dir we made.
    header = json.loads(path.open(encoding="utf-8").readline())
    header_cwd = Path(header.get("cwd", str(project)))
    header_cwd.mkdir(parents=True, exist_ok=True)
    result = asyncio.run(_open_in_process(path, header_cwd, agent))
    lines = [
        f"opening a {entries:,}-entry session in-process: load {result['load']:.2f} s, "
        f"conversation end mounted {result['show']:.2f} s later "
        f"({result['messages']:,} context messages; {result['widgets']} widgets mounted, "
        f"{result['pending']:,} left for scroll-up)",
    ]
    if not skip_tmux:
        last_line = _last_answer_line(path)
        shown, _ = run_in_tmux(f"{PI_TUI} --session {path}",
                               {"HOME": str(base), "PI_CODING_AGENT_DIR": str(agent)}, header_cwd,
                               until=last_line, wait_exit=True)
        lines.append(f"opening it in tmux (`pi-tui --session FILE`) until the last answer is on screen: {shown:.2f} s")
    return lines


END_MARKER = "BENCH-END-MARKER the end of the conversation"


def _append_end_marker(path: Path) -> None:
    """A last user/assistant exchange whose text we can wait for on screen."""
    last = json.loads(path.read_text(encoding="utf-8").rstrip("\n").rsplit("\n", 1)[-1])
    parent = last["id"]
    with path.open("a", encoding="utf-8") as handle:
        for i, (role, text) in enumerate((("user", "last question"), ("assistant", END_MARKER))):
            message: dict[str, Any] = {"role": role, "content": [{"type": "text", "text": text}],
                                       "timestamp": 1_796_999_999_000 + i}
            if role == "assistant":
                message.update(api="openai-completions", provider="fake", model="fake-model", stopReason="stop",
                               usage={"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 15,
                                      "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0,
                                               "total": 0}})
            entry_id = f"benchend{i}"
            handle.write(json.dumps({"type": "message", "id": entry_id, "parentId": parent,
                                     "timestamp": "2026-11-30T23:59:59.000Z", "message": message}) + "\n")
            parent = entry_id


def _last_answer_line(path: Path) -> str:
    return END_MARKER


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--skip-tmux", action="store_true")
    args = parser.parse_args()
    os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
    have_tmux = shutil.which("tmux") is not None and not args.skip_tmux
    lines: list[str] = [f"load average at start: {os.getloadavg()[0]:.2f} (2-core machines are noisy; compare medians)"]
    if have_tmux:
        lines += bench_first_frame(args.runs)
    else:
        lines.append("first frame: skipped (no tmux)")
    lines += bench_streaming()
    lines += bench_long_session(not have_tmux)
    lines.append(f"load average at end: {os.getloadavg()[0]:.2f}")
    for line in lines:
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
