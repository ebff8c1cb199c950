"""Helpers for tests that run pi-tui as a real process and end it from outside (signals, a
terminal that goes away): the fake model's agent dir, a ``bash`` call that will not die politely,
process-table probes and checks of the session file left behind."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import signal
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from tests.reliability.record import Case
from tests.tools.helpers import KILLED_GROUP_DIES_WITHIN
from tests.tools.helpers import live_processes_in_group as live_in_group

# The shell and a grandchild both ignore SIGTERM and SIGHUP (as SIG_IGN survives exec, so do
# their `sleep`s): only killing the whole group with SIGKILL ends them.
STUBBORN_COMMAND = (
    "trap '' TERM HUP; echo $$ > {pidfile}; (trap '' TERM HUP; sleep 300) & "
    "echo started; sleep 300"
)
PROMPT = "run the long command"


def stubborn_script(pidfile: Path) -> list[dict[str, Any]]:
    """Turn 1: a ``bash`` call that runs until killed; turn 2 (never reached) an answer."""
    return [
        {"tool_calls": [{"id": "call_stubborn", "name": "bash",
                         "arguments": {"command": STUBBORN_COMMAND.format(pidfile=pidfile)}}],
         "usage": {"prompt_tokens": 100, "completion_tokens": 10}},
        {"text": "The command finished.", "usage": {"prompt_tokens": 120, "completion_tokens": 5}},
    ]


def fake_agent_dir(root: Path, base_url: str) -> Path:
    agent = root / "agent"
    agent.mkdir(exist_ok=True)
    (agent / "models.json").write_text(json.dumps({"providers": {"fake": {
        "baseUrl": base_url, "api": "openai-completions", "apiKey": "fake-key",
        "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
        "models": [{"id": "fake-model", "contextWindow": 64_000, "maxTokens": 1000}],
    }}}))
    return agent


def child_env(agent: Path, home: Path | None = None) -> dict[str, str]:
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(agent)}
    if home is not None:
        env["HOME"] = str(home)
    env.pop("PYTEST_CURRENT_TEST", None)
    return env


def pi_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "pi_tui", "--model", "fake/fake-model", *args]


def wait_until(condition: Callable[[], bool], seconds: float, interval: float = 0.05) -> bool:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(interval)
    return True


def read_pid(pidfile: Path) -> int | None:
    try:
        return int(pidfile.read_text().strip())
    except (OSError, ValueError):
        return None


def is_alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2 :].split()[0] != "Z"


def pids_running_in(cwd: Path, marker: str = "pi_tui") -> list[int]:
    """Our Python's processes whose working directory is ``cwd`` and whose command line names
    ``marker`` (not the shells that started them)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            if os.readlink(f"/proc/{entry}/cwd") != str(cwd):
                continue
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if marker in cmdline and cmdline.startswith(sys.executable) and is_alive(int(entry)):
            found.append(int(entry))
    return found


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of ``pid`` so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def session_files(agent: Path) -> list[Path]:
    return sorted((agent / "sessions").rglob("*.jsonl"))


def session_entries(path: Path) -> list[dict[str, Any]]:
    """Every line parsed (a torn line fails the test: that is data damage)."""
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def lock_is_free(path: Path) -> bool:
    """Nobody holds the session file's lock (pi-tui takes ``flock`` LOCK_EX on it)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    finally:
        os.close(fd)
    return True


def texts_of(entries: list[dict[str, Any]]) -> str:
    return json.dumps([e.get("message") for e in entries if e.get("type") == "message"])


def kill_group_quietly(pgid: int | None) -> None:
    if pgid:
        with contextlib.suppress(OSError):
            os.killpg(pgid, signal.SIGKILL)


# --------------------------------------------------------------------------- tmux

READY_TEXT = "Message · / commands"


def tmux(*args: str) -> str:
    import subprocess

    return subprocess.run(["tmux", *args], capture_output=True, text=True, check=False).stdout


def tmux_screen(name: str) -> str:
    return tmux("capture-pane", "-p", "-t", name)


def tmux_wait_for(name: str, text: str, seconds: float = 30.0) -> str:
    screen = ""

    def shown() -> bool:
        nonlocal screen
        screen = tmux_screen(name)
        return text in screen

    if not wait_until(shown, seconds, 0.1):
        raise AssertionError(f"{text!r} did not appear on screen; last screen:\n{screen}")
    return screen


def tui_shell_command(project: Path, agent: Path, home: Path, *, tail: str = "") -> str:
    """The shell command line that starts the TUI on the fake model in ``project``."""
    import shlex

    args = " ".join(shlex.quote(a) for a in pi_command())
    return (f"cd {shlex.quote(str(project))} && env HOME={shlex.quote(str(home))} "
            f"PI_CODING_AGENT_DIR={shlex.quote(str(agent))} {args}{tail}")


def wait_for_stubborn_call(pidfile: Path, seconds: float = 30) -> int:
    """The process group of the running ``stubborn_script`` command, once it is running."""
    started = wait_until(lambda: (p := read_pid(pidfile)) is not None and len(live_in_group(p)) >= 2, seconds)
    pgid = read_pid(pidfile)
    assert started and pgid is not None, "the bash call did not start"
    return pgid


def assert_group_gone(pgid: int) -> None:
    # SIGKILLed processes die asynchronously: wait for it (bounded), it is not a benchmark.
    assert wait_until(lambda: not live_in_group(pgid), KILLED_GROUP_DIES_WITHIN), (
        f"the bash call's processes outlived pi-tui: {live_in_group(pgid)}"
    )


def check_session_kept(case: Case, agent: Path) -> None:
    """One session file, every line parses, the prompt and the aborted call are in it, unlocked."""
    files = session_files(agent)
    case.kept(len(files) == 1, "the session file")
    text = texts_of(session_entries(files[0]))
    case.kept(PROMPT in text, "the prompt")
    case.kept("call_stubborn" in text, "the aborted tool call")
    assert lock_is_free(files[0]), "the session file is still locked"


@contextlib.contextmanager
def tmux_session(command: str, project: Path, marker: str = "pi_tui") -> Iterator[str]:
    """A detached 120x40 tmux session running ``command``; afterwards the session, any pi-tui
    still running in ``project`` (a process whose command line names ``marker``) and the
    stubborn command's group are gone."""
    name = f"pi-tui-reliability-{uuid.uuid4().hex[:8]}"
    tmux("new-session", "-d", "-s", name, "-x", "120", "-y", "40", command)
    try:
        yield name
    finally:
        tmux("kill-session", "-t", name)
        for pid in pids_running_in(project, marker):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


def start_stubborn_call_in_tui(name: str, project: Path, pidfile: Path, marker: str = "pi_tui") -> tuple[int, int]:
    """Once the TUI is up: submit the prompt whose answer runs the stubborn command; returns
    (pi-tui's pid, the command's process group)."""
    tmux_wait_for(name, READY_TEXT)
    (pid,) = pids_running_in(project, marker)
    tmux("send-keys", "-t", name, "-l", PROMPT)
    tmux("send-keys", "-t", name, "Enter")
    return pid, wait_for_stubborn_call(pidfile)
