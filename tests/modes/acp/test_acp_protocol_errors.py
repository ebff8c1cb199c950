"""Bad input to ``pi-tui --mode acp`` on the raw pipes: every case gets its JSON-RPC error (or,
for notifications, none), the process keeps answering, stdout carries only protocol frames, and
control characters from a model never reach the pipe raw (escaped, so the text is unchanged)."""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from pi_tui.testing.fake_server import FakeServer
from tests.modes.acp.conftest import agent_env, write_models


class RawAgent:
    def __init__(self, agent_dir: Path, cwd: Path) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "pi_tui", "--mode", "acp"], cwd=cwd,
                                     env=agent_env(agent_dir), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE)
        self.lines: list[bytes] = []
        self._buffer = b""
        self._selector = selectors.DefaultSelector()
        assert self.proc.stdout is not None
        self._selector.register(self.proc.stdout, selectors.EVENT_READ)

    def send(self, data: bytes | dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data if isinstance(data, bytes) else json.dumps(data).encode() + b"\n")
        self.proc.stdin.flush()

    @property
    def frames(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.lines]

    def answer(self, request_id: Any, seconds: float = 30) -> dict[str, Any]:
        deadline = time.monotonic() + seconds
        while True:
            found = [f for f in self.frames if f.get("id") == request_id and "method" not in f]
            if found:
                return found[-1]
            remaining = deadline - time.monotonic()
            assert remaining > 0, f"no answer to {request_id!r}; got {self.frames}"
            if self._selector.select(remaining):
                assert self.proc.stdout is not None
                chunk = os.read(self.proc.stdout.fileno(), 65536)
                assert chunk, "stdout closed early"
                self._buffer += chunk
                *lines, self._buffer = self._buffer.split(b"\n")
                self.lines += lines

    def finish(self) -> tuple[int, str]:
        assert self.proc.stdin is not None and self.proc.stdout is not None and self.proc.stderr is not None
        self.proc.stdin.close()
        rest = self._buffer + self.proc.stdout.read()
        self.lines += [line for line in rest.split(b"\n") if line]
        code = self.proc.wait(timeout=30)
        stderr = self.proc.stderr.read().decode()
        self._selector.close()
        self.proc.stdout.close()
        self.proc.stderr.close()
        return code, stderr


def _error(frame: dict[str, Any]) -> tuple[int, Any]:
    return frame["error"]["code"], frame["error"].get("data")


def test_every_bad_input_gets_its_error_and_the_agent_keeps_going(project: Path, agent_dir: Path) -> None:
    hostile = "red \x1b[31mALERT\x1b[0m\x07 done\u2028next"
    with FakeServer([{"text": hostile}]) as server:
        write_models(agent_dir, server.base_url)
        agent = RawAgent(agent_dir, project)
        agent.send({"jsonrpc": "2.0", "id": "early", "method": "session/new", "params": {"cwd": str(project)}})
        assert _error(agent.answer("early"))[0] == -32600  # initialize first
        agent.send({"jsonrpc": "2.0", "id": "v", "method": "initialize", "params": {"clientCapabilities": {}}})
        assert _error(agent.answer("v"))[0] == -32602  # no protocolVersion
        agent.send({"jsonrpc": "2.0", "id": "v0", "method": "initialize", "params": {"protocolVersion": 0}})
        assert agent.answer("v0")["result"]["protocolVersion"] == 1  # we do not speak 0: our latest
        agent.send({"jsonrpc": "2.0", "id": "v-date", "method": "initialize", "params": {"protocolVersion": "2024-11-05"}})
        assert agent.answer("v-date")["result"]["protocolVersion"] == 1  # a pre-1 client's date string
        agent.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 7}})
        assert agent.answer(0)["result"]["protocolVersion"] == 1  # a newer client gets our version
        agent.send(b"this is not json\n")
        agent.send(b"[" * 100_000 + b"]" * 100_000 + b"\n")  # valid, but deeper than Python's parser goes
        agent.send(b"[1, 2]\n")
        agent.send({"jsonrpc": "1.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}})
        assert _error(agent.answer(1))[0] == -32600
        agent.send({"jsonrpc": "2.0", "id": 2, "method": "session/fly", "params": {}})
        assert _error(agent.answer(2)) == (-32601, {"method": "session/fly"})
        agent.send({"jsonrpc": "2.0", "id": 3, "method": "session/new", "params": [str(project)]})
        agent.send({"jsonrpc": "2.0", "id": 4, "method": "session/new", "params": {"mcpServers": []}})
        agent.send({"jsonrpc": "2.0", "id": 5, "method": "session/new", "params": {"cwd": "relative/dir", "mcpServers": []}})
        agent.send({"jsonrpc": "2.0", "id": 6, "method": "session/new", "params": {"cwd": str(project), "mcpServers": "x"}})
        for request_id, words in ((3, "params must be an object"), (4, "cwd is missing"),
                                  (5, "cwd must be an absolute path"), (6, "mcpServers must be a list")):
            code, data = _error(agent.answer(request_id))
            assert code == -32602 and words in data["details"], (request_id, data)
        agent.send({"jsonrpc": "2.0", "id": 7, "method": "session/prompt",
                    "params": {"sessionId": "ghost", "prompt": [{"type": "text", "text": "hi"}]}})
        assert _error(agent.answer(7))[0] == -32002
        agent.send({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "ghost"}})
        agent.send({"jsonrpc": "2.0", "method": "made/up", "params": {}})
        agent.send({"jsonrpc": "2.0", "id": 99, "result": {}})  # an answer to nothing we asked
        agent.send({"jsonrpc": "2.0", "id": 8, "method": "session/new", "params": {"cwd": str(project), "mcpServers": []}})
        session_id = agent.answer(8)["result"]["sessionId"]
        for request_id, prompt, words in (
            (9, [{"type": "audio", "data": "AAAA", "mimeType": "audio/wav"}], "'audio' is not supported"),
            (10, [], "non-empty list"),
            (11, [{"type": "text"}], "missing a required field"),
        ):
            agent.send({"jsonrpc": "2.0", "id": request_id, "method": "session/prompt",
                        "params": {"sessionId": session_id, "prompt": prompt}})
            code, data = _error(agent.answer(request_id))
            assert code == -32602 and words in data["details"], (request_id, data)
        agent.send({"jsonrpc": "2.0", "id": 12, "method": "session/prompt",
                    "params": {"sessionId": session_id, "prompt": [{"type": "text", "text": "say it"}]}})
        assert agent.answer(12)["result"] == {"stopReason": "end_turn"}
        code, stderr = agent.finish()
    assert code == 0, stderr
    frames = agent.frames
    parse, nested, invalid = (f for f in frames if f.get("id") is None and "error" in f)
    assert _error(parse)[0] == -32700 and _error(invalid)[0] == -32600
    assert _error(nested) == (-32700, {"details": "nested too deeply"})
    assert all(f.get("jsonrpc") == "2.0" for f in frames)  # stdout: protocol only
    assert all(f.get("id") != 99 for f in frames)
    assert "'made/up' ignored" in stderr
    text = "".join(f["params"]["update"]["content"]["text"] for f in frames
                   if f.get("method") == "session/update" and f["params"]["update"]["sessionUpdate"] == "agent_message_chunk")
    assert text == hostile  # lossless
    raw = b"\n".join(agent.lines)
    assert b"\x1b" not in raw and b"\x07" not in raw and "\u2028".encode() not in raw  # never raw on the pipe


NOISY_EXTENSION = '''
import os, subprocess, sys

print("NOISE-print")
sys.__stdout__.write("NOISE-dunder-stdout\\n")
sys.__stdout__.flush()
os.system("echo NOISE-os-system")


def register(pi):
    def noisy(args, ctx):
        subprocess.run(["echo", "NOISE-subprocess"], check=False)
        os.write(1, b"NOISE-fd-1\\n")
        pi.notify("noisy done")
    pi.register_command("noisy", noisy, description="writes to stdout every way there is")
'''


def test_nothing_but_frames_reaches_stdout_whatever_an_extension_writes(project: Path, agent_dir: Path) -> None:
    """An extension (or a library, or a program it starts) writing to stdout by any route —
    print, sys.__stdout__, os.system, a subprocess inheriting fd 1, os.write(1) — cannot put a
    line between the frames: it lands on stderr, the editor's log."""
    (agent_dir / "extensions").mkdir(parents=True)
    (agent_dir / "extensions" / "noisy.py").write_text(NOISY_EXTENSION)
    with FakeServer([]) as server:
        write_models(agent_dir, server.base_url)
        agent = RawAgent(agent_dir, project)
        agent.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}})
        agent.send({"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": str(project), "mcpServers": []}})
        session_id = agent.answer(1)["result"]["sessionId"]
        agent.send({"jsonrpc": "2.0", "id": 2, "method": "session/prompt",
                    "params": {"sessionId": session_id, "prompt": [{"type": "text", "text": "/noisy"}]}})
        assert agent.answer(2)["result"] == {"stopReason": "end_turn"}
        code, stderr = agent.finish()
    assert code == 0, stderr
    assert not [line for line in agent.lines if not line.startswith(b'{"jsonrpc":"2.0"')]
    for noise in ("print", "dunder-stdout", "os-system", "subprocess", "fd-1"):
        assert f"NOISE-{noise}" in stderr
    assert "noisy done" in "".join(f["params"]["update"]["content"].get("text", "") for f in agent.frames
                                   if f.get("method") == "session/update" and "content" in f["params"]["update"])
