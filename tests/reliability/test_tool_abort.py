"""Tools that never return: every built-in tool, aborted mid-operation, returns within a second,
and FIFOs / devices are refused instead of blocking a thread forever.

Abort is asyncio cancellation of the task running the tool (what ``AgentSession.abort`` does).
The times below are assertions that the tool *returns*, with a wide margin for a loaded machine;
speed belongs in bench/.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from pi_tui.core.errors import ToolError
from pi_tui.core.tool import ToolContext, ToolResult
from pi_tui.testing.fake_server import FakeServer
from pi_tui.tools.registry import builtin_tools
from tests.reliability.broken_streams import write_agent_dir
from tests.reliability.record import FaultRecord
from tests.tools.helpers import KILLED_GROUP_DIES_WITHIN, live_processes_in_group

FAULT_CLASS = "tools that never return"

RETURNS_WITHIN = 1.0
# A hang is reported after this long instead of hanging the test run.
GIVE_UP = 8.0


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    root = tmp_path / "work"
    root.mkdir()
    return ToolContext(cwd=root, artifact_dir=tmp_path / "artifacts")


_MADE_FIFOS: list[Path] = []
_releasing = threading.Event()


def release_fifos() -> None:
    """After a tool hung on a FIFO: keep opening each FIFO read-write (every 50 ms, until the test
    is over), which releases a thread blocked opening it, again and again if it re-opens. Without
    this a failing test would hang the event loop's shutdown, which joins executor threads."""
    if _releasing.is_set():
        return
    _releasing.set()

    def loop() -> None:
        while _releasing.is_set():
            for path in list(_MADE_FIFOS):
                with contextlib.suppress(OSError):
                    fd = os.open(path, os.O_RDWR | os.O_NONBLOCK)
                    time.sleep(0.02)
                    os.close(fd)
            time.sleep(0.05)

    threading.Thread(target=loop, daemon=True).start()


@pytest.fixture
def fifos() -> Iterator[list[Path]]:
    yield _MADE_FIFOS
    _releasing.clear()
    _MADE_FIFOS.clear()


def make_fifo(path: Path, fifos: list[Path]) -> Path:
    os.mkfifo(path)
    fifos.append(path)
    return path


def open_fds_to(path: Path) -> list[str]:
    """This process's open file descriptors that point at ``path``."""
    target = str(path.resolve())
    found = []
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            if os.readlink(f"/proc/self/fd/{fd}") == target:
                found.append(fd)
    return found


async def run_tool(name: str, args: dict, ctx: ToolContext) -> ToolResult:
    return await builtin_tools()[name].execute("call-1", args, ctx)


async def call_then_abort(name: str, args: dict, ctx: ToolContext, *, after: float) -> float:
    """Start the tool, cancel it ``after`` seconds later; the seconds it took to return after
    the cancel (GIVE_UP when it did not return at all)."""
    task = asyncio.ensure_future(run_tool(name, args, ctx))
    await asyncio.wait({task}, timeout=after)
    assert not task.done(), f"{name} finished before the abort: {task.result() if not task.exception() else task.exception()}"
    task.cancel()
    started = time.monotonic()
    done, _ = await asyncio.wait({task}, timeout=GIVE_UP)
    took = time.monotonic() - started if done else GIVE_UP
    if not done:
        release_fifos()
    if done:
        with contextlib.suppress(asyncio.CancelledError, ToolError):
            task.result()
    return took


async def returns_quickly(name: str, args: dict, ctx: ToolContext) -> tuple[float, ToolResult | BaseException]:
    task = asyncio.ensure_future(run_tool(name, args, ctx))
    started = time.monotonic()
    done, _ = await asyncio.wait({task}, timeout=GIVE_UP)
    if not done:
        task.cancel()
        release_fifos()
        await asyncio.wait({task}, timeout=1)
        return GIVE_UP, TimeoutError(f"{name} did not return")
    took = time.monotonic() - started
    try:
        return took, task.result()
    except BaseException as error:
        return took, error


def no_rg_on_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The pure-Python grep/find path (what runs where ripgrep/fd are not installed)."""
    bin_dir = tmp_path / "bin-without-rg"
    bin_dir.mkdir(exist_ok=True)
    for tool in ("bash", "sh"):
        real = shutil.which(tool)
        if real:
            (bin_dir / tool).symlink_to(real)
    monkeypatch.setenv("PATH", str(bin_dir))


# --------------------------------------------------------------------------- FIFOs and devices


async def test_read_refuses_a_fifo_with_no_writer(fault: FaultRecord, ctx: ToolContext, fifos: list[Path]) -> None:
    fifo = make_fifo(ctx.cwd / "pipe", fifos)
    with fault.case("read of a FIFO with no writer") as case:
        took, outcome = await returns_quickly("read", {"path": "pipe"}, ctx)
        assert took < RETURNS_WITHIN, f"read of a FIFO did not return for {took:.1f} s"
        assert isinstance(outcome, ToolError), outcome
        case.no_traceback(str(outcome))
        assert "FIFO" in str(outcome) and "not a regular file" in str(outcome)
        assert open_fds_to(fifo) == []


async def test_read_refuses_a_fifo_that_never_ends(fault: FaultRecord, ctx: ToolContext, fifos: list[Path]) -> None:
    fifo = make_fifo(ctx.cwd / "endless", fifos)
    writer = await asyncio.create_subprocess_exec(
        "sh", "-c", f"yes 'line of text' > '{fifo}'", start_new_session=True
    )
    try:
        with fault.case("read of a FIFO fed forever") as case:
            took, outcome = await returns_quickly("read", {"path": "endless"}, ctx)
            assert took < RETURNS_WITHIN, f"read of an endless FIFO did not return for {took:.1f} s"
            assert isinstance(outcome, ToolError) and "FIFO" in str(outcome), outcome
            case.no_traceback(str(outcome))
    finally:
        os.killpg(writer.pid, signal.SIGKILL)
        await writer.wait()


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom", "/dev/null"])
async def test_read_refuses_character_devices(fault: FaultRecord, ctx: ToolContext, device: str) -> None:
    with fault.case(f"read of {device}"):
        took, outcome = await returns_quickly("read", {"path": device}, ctx)
        assert took < RETURNS_WITHIN
        assert isinstance(outcome, ToolError) and "character device" in str(outcome), outcome


async def test_grep_refuses_a_fifo_path(fault: FaultRecord, ctx: ToolContext, fifos: list[Path]) -> None:
    make_fifo(ctx.cwd / "pipe", fifos)
    with fault.case("grep with a FIFO as its path"):
        took, outcome = await returns_quickly("grep", {"pattern": "x", "path": "pipe"}, ctx)
        assert took < RETURNS_WITHIN, f"grep of a FIFO did not return for {took:.1f} s"
        assert isinstance(outcome, ToolError) and "FIFO" in str(outcome), outcome


@pytest.mark.parametrize("tool", ["write", "edit"])
async def test_write_and_edit_refuse_a_fifo(fault: FaultRecord, ctx: ToolContext, fifos: list[Path], tool: str) -> None:
    fifo = make_fifo(ctx.cwd / "pipe", fifos)
    args = {"path": "pipe", "content": "x"} if tool == "write" else {
        "path": "pipe", "edits": [{"oldText": "a", "newText": "b"}]}
    with fault.case(f"{tool} of a FIFO with no reader"):
        took, outcome = await returns_quickly(tool, args, ctx)
        assert took < RETURNS_WITHIN, f"{tool} of a FIFO did not return for {took:.1f} s"
        assert isinstance(outcome, ToolError) and "FIFO" in str(outcome), outcome
        assert open_fds_to(fifo) == []


async def test_write_refuses_a_character_device(fault: FaultRecord, ctx: ToolContext) -> None:
    with fault.case("write to /dev/null"):
        took, outcome = await returns_quickly("write", {"path": "/dev/null", "content": "x"}, ctx)
        assert took < RETURNS_WITHIN
        assert isinstance(outcome, ToolError) and "character device" in str(outcome), outcome


# (rg with a FIFO ignore file: test_grep_with_rg_returns_past_a_fifo_ignore_file)
@pytest.mark.parametrize(("engine", "where"), [
    ("python", "inside the tree"), ("python", "as .gitignore"), ("rg", "inside the tree"),
])
async def test_grep_and_find_walk_past_fifos(
    fault: FaultRecord, ctx: ToolContext, fifos: list[Path], tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch, engine: str, where: str,
) -> None:
    if engine == "rg" and shutil.which("rg") is None:
        pytest.skip("ripgrep is not installed (.ci/run installs it)")
    if engine == "python":
        no_rg_on_path(monkeypatch, tmp_path)
    (ctx.cwd / "a.txt").write_text("needle here\n")
    make_fifo(ctx.cwd / ("pipe" if where == "inside the tree" else ".gitignore"), fifos)
    for tool, args in (("grep", {"pattern": "needle"}), ("find", {"pattern": "*.txt"}), ("ls", {})):
        if engine == "rg" and tool != "grep":
            continue
        with fault.case(f"{tool} ({engine}) with a FIFO {where}"):
            took, outcome = await returns_quickly(tool, args, ctx)
            assert took < RETURNS_WITHIN * 3, f"{tool} with a FIFO {where} did not return for {took:.1f} s"
            assert isinstance(outcome, ToolResult), outcome
            assert "a.txt" in outcome.content[0]["text"]  # type: ignore[typeddict-item]


# --------------------------------------------------------------------------- abort mid-operation


async def test_abort_read_of_a_huge_file(fault: FaultRecord, ctx: ToolContext) -> None:
    """A 64 GB sparse file of text-looking head: counting its lines takes minutes. Abort returns
    at once and the reading thread lets go of the file."""
    huge = _sparse_text_file(ctx.cwd / "huge.log", 64 << 30)
    with fault.case("abort read of a 64 GB file"):
        took = await call_then_abort("read", {"path": "huge.log", "offset": 5}, ctx, after=0.3)
        assert took < RETURNS_WITHIN, f"read did not return for {took:.1f} s after the abort"
        assert await _eventually(lambda: not open_fds_to(huge), 2.0), (
            "the read thread still has the file open 2 s after the abort"
        )


async def test_abort_bash_with_children_that_ignore_sigterm(fault: FaultRecord, ctx: ToolContext) -> None:
    script = "trap '' TERM; (trap '' TERM; sleep 60) & sleep 60"
    with fault.case("abort bash with a SIGTERM-ignoring grandchild"):
        task = asyncio.ensure_future(run_tool("bash", {"command": script}, ctx))

        def shells() -> list[int]:
            return [int(p) for p in _children_of(os.getpid()) if "trap '' TERM" in _cmdline(int(p))]

        assert await _eventually(lambda: bool(shells()) and len(live_processes_in_group(shells()[0])) >= 3, 5.0)
        pgids = {os.getpgid(pid) for pid in shells()}
        task.cancel()
        started = time.monotonic()
        done, _ = await asyncio.wait({task}, timeout=GIVE_UP)
        took = time.monotonic() - started
        assert done and took < RETURNS_WITHIN, f"bash returned {took:.1f} s after the abort"
        # SIGKILLed processes die asynchronously: wait for it (bounded), it is not a benchmark.
        assert await _eventually(lambda: not any(live_processes_in_group(g) for g in pgids),
                                 KILLED_GROUP_DIES_WITHIN), [
            (pid, _cmdline(pid)) for g in pgids for pid in live_processes_in_group(g)
        ]


@pytest.mark.parametrize("ignore_file", [".gitignore", "sub/.gitignore", ".ignore", "sub/.rgignore"])
async def test_grep_with_rg_returns_past_a_fifo_ignore_file(
    fault: FaultRecord, ctx: ToolContext, fifos: list[Path], ignore_file: str
) -> None:
    """ripgrep opens every ignore file it meets and blocks on one that is a FIFO (no flag stops
    it). Where nobody aborts (print mode, a headless run) that was a hang: grep must notice the
    FIFO, stop rg, and answer by itself, saying which file it could not read."""
    if shutil.which("rg") is None:
        pytest.skip("ripgrep is not installed (.ci/run installs it)")
    (ctx.cwd / "sub").mkdir()
    (ctx.cwd / "a.txt").write_text("needle one\n")
    (ctx.cwd / "sub" / "b.txt").write_text("needle two\n")
    make_fifo(ctx.cwd / ignore_file, fifos)
    with fault.case(f"grep (rg) with a FIFO {ignore_file}"):
        before = set(_children_of(os.getpid()))
        took, outcome = await returns_quickly("grep", {"pattern": "needle"}, ctx)
        assert took < GIVE_UP, f"grep with rg and a FIFO {ignore_file} did not return"
        assert isinstance(outcome, ToolResult), outcome
        text = outcome.content[0]["text"]  # type: ignore[typeddict-item]
        assert "a.txt:1: needle one" in text and "sub/b.txt:1: needle two" in text, text
        assert f"{ignore_file} is a FIFO (named pipe)" in text, text
        assert await _eventually(
            lambda: not [p for p in _children_of(os.getpid()) if p not in before and "rg" in _cmdline(int(p))], 1.0
        ), "rg still running after grep returned"


async def test_abort_grep_with_rg_blocked_on_a_fifo_gitignore(
    fault: FaultRecord, ctx: ToolContext, fifos: list[Path]
) -> None:
    """An abort before grep has found the FIFO ends the tool and rg with it."""
    if shutil.which("rg") is None:
        pytest.skip("ripgrep is not installed (.ci/run installs it)")
    (ctx.cwd / "a.txt").write_text("x\n")
    make_fifo(ctx.cwd / ".gitignore", fifos)
    with fault.case("abort grep while rg waits on a FIFO .gitignore"):
        before = set(_children_of(os.getpid()))
        took = await call_then_abort("grep", {"pattern": "x"}, ctx, after=0.05)
        assert took < RETURNS_WITHIN, f"grep returned {took:.1f} s after the abort"
        assert await _eventually(
            lambda: not [p for p in _children_of(os.getpid()) if p not in before and "rg" in _cmdline(int(p))],
            KILLED_GROUP_DIES_WITHIN,
        ), "rg still running after the abort"


def test_print_mode_grep_with_rg_and_a_fifo_gitignore_finishes(fault: FaultRecord, tmp_path: Path, fifos: list[Path]) -> None:
    """The whole path where nobody aborts: ``pi-tui -p`` whose model calls grep in a repository
    with a FIFO .gitignore answers and exits (it hung until killed)."""
    if shutil.which("rg") is None:
        pytest.skip("ripgrep is not installed (.ci/run installs it)")
    project = tmp_path / "project"
    project.mkdir()
    (project / "a.txt").write_text("needle here\n")
    make_fifo(project / ".gitignore", fifos)
    turns = [{"tool_calls": [{"id": "call_1", "name": "grep", "arguments": {"pattern": "needle"}}]}, {"text": "found it"}]
    with fault.case("pi-tui -p: grep (rg) with a FIFO .gitignore") as case, FakeServer(turns) as server:
        agent = tmp_path / "agent"
        ref = write_agent_dir(agent, "openai", server.base_url)
        env = {**os.environ, "PI_CODING_AGENT_DIR": str(agent)}
        env.pop("PYTEST_CURRENT_TEST", None)
        try:
            result = subprocess.run([sys.executable, "-m", "pi_tui", "-p", "--model", ref, "--tools", "grep", "find it"],
                                    cwd=project, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL,
                                    timeout=60)
        except subprocess.TimeoutExpired:
            release_fifos()
            raise AssertionError("pi-tui -p hung on grep with a FIFO .gitignore") from None
        case.no_traceback(result.stdout, result.stderr)
        assert result.returncode == 0 and result.stdout == "found it\n", result.stderr
        tool_message = next(m for m in server.requests[1]["messages"] if m["role"] == "tool")
        assert "a.txt:1: needle here" in str(tool_message["content"])


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """40 folders x 500 files of 4 KB, plus one flat folder of 20,000 entries."""
    root = tmp_path_factory.mktemp("big")
    line = b"some text that does not match\n" * 130
    for d in range(40):
        folder = root / f"d{d:02}"
        folder.mkdir()
        for f in range(500):
            (folder / f"f{f:03}.txt").write_bytes(line)
    flat = root / "flat"
    flat.mkdir()
    for f in range(20000):
        (flat / f"e{f:05}").touch()
    return root


@pytest.mark.parametrize("tool", ["grep", "find", "ls"])
async def test_abort_a_walk_of_a_big_tree(
    fault: FaultRecord, ctx: ToolContext, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, big: Path, tool: str
) -> None:
    """The pure-Python walkers stop when aborted (their thread checks between entries)."""
    no_rg_on_path(monkeypatch, tmp_path)
    args = {"grep": {"pattern": "never-matches-anything", "path": str(big)},
            "find": {"pattern": "*.never", "path": str(big)},
            "ls": {"path": str(big / "flat"), "limit": 10**9}}[tool]
    with fault.case(f"abort {tool} over {big}"):
        task = asyncio.ensure_future(run_tool(tool, args, ctx))
        await asyncio.sleep(0.05)
        if task.done():
            pytest.skip(f"{tool} finished the tree in under 50 ms; nothing to abort")
        task.cancel()
        started = time.monotonic()
        done, _ = await asyncio.wait({task}, timeout=GIVE_UP)
        assert done and time.monotonic() - started < RETURNS_WITHIN


# --------------------------------------------------------------------------- helpers


def _sparse_text_file(path: Path, size: int) -> Path:
    with open(path, "wb") as fh:
        fh.write(b"first line\n" * 1000)
        fh.truncate(size)
    return path


async def _eventually(condition: Callable[[], bool], within: float) -> bool:
    deadline = time.monotonic() + within
    while not condition():
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.05)  # polling /proc: there is no event to wait on
    return True


def _children_of(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return []


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


if sys.platform != "linux":  # /proc probes
    pytestmark = pytest.mark.skip(reason="Linux only")
