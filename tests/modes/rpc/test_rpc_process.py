"""``python -m pi_tui --mode rpc`` as a real subprocess against the fake OpenAI-compatible server
(models.json in a temp agent dir), driven like a client: write a command, read frames."""

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

TOOL_THEN_TEXT: list[dict[str, Any]] = [
    {"tool_calls": [{"id": "call_1", "name": "bash", "arguments": {"command": "echo hello"}}],
     "usage": {"prompt_tokens": 120, "completion_tokens": 10}},
    {"text": "The command printed hello.", "usage": {"prompt_tokens": 150, "completion_tokens": 6}},
]


def _agent_dir(root: Path, base_url: str | None) -> Path:
    agent = root / "agent"
    agent.mkdir(exist_ok=True)
    if base_url is not None:
        models = {"providers": {"fake": {
            "baseUrl": base_url, "api": "openai-completions", "apiKey": "fake-key",
            "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
            "models": [{"id": "fake-model", "contextWindow": 128000, "maxTokens": 1000}],
        }}}
        (agent / "models.json").write_text(json.dumps(models))
    return agent


class RpcProcess:
    def __init__(self, agent: Path, cwd: Path, *args: str) -> None:
        env = {**os.environ, "PI_CODING_AGENT_DIR": str(agent)}
        env.pop("PYTEST_CURRENT_TEST", None)
        self.proc = subprocess.Popen([sys.executable, "-m", "pi_tui", "--mode", "rpc", *args], cwd=cwd, env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.frames: list[dict[str, Any]] = []
        self.raw_lines: list[bytes] = []
        self._buffer = b""
        self._selector = selectors.DefaultSelector()
        assert self.proc.stdout is not None
        self._selector.register(self.proc.stdout, selectors.EVENT_READ)

    def send(self, command: dict[str, Any], end: bytes = b"\n") -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(command).encode() + end)
        self.proc.stdin.flush()

    def read_until(self, predicate: Any, seconds: float = 30) -> dict[str, Any]:
        deadline = time.monotonic() + seconds
        while True:
            for frame in self.frames:
                if predicate(frame):
                    return frame
            remaining = deadline - time.monotonic()
            assert remaining > 0, f"no matching frame; got {[f.get('type') for f in self.frames]}"
            if self._selector.select(remaining):
                self._read_available()

    def _read_available(self) -> None:
        assert self.proc.stdout is not None
        chunk = os.read(self.proc.stdout.fileno(), 65536)
        if not chunk:
            raise AssertionError("stdout closed early")
        self._buffer += chunk
        *lines, self._buffer = self._buffer.split(b"\n")
        for line in lines:
            self.raw_lines.append(line)
            self.frames.append(json.loads(line))  # every stdout line is a frame

    def finish(self) -> tuple[int, str]:
        """Close stdin (end of input) and collect the rest."""
        assert self.proc.stdin is not None and self.proc.stdout is not None and self.proc.stderr is not None
        if not self.proc.stdin.closed:
            self.proc.stdin.close()
        rest = self.proc.stdout.read()
        for line in (self._buffer + rest).splitlines():
            self.raw_lines.append(line)
            self.frames.append(json.loads(line))
        self._buffer = b""
        code = self.proc.wait(timeout=30)
        stderr = self.proc.stderr.read().decode()
        self._selector.close()
        self.proc.stdout.close()
        self.proc.stderr.close()
        return code, stderr


def test_a_client_session_over_the_pipes(tmp_path: Path, project: Path) -> None:
    with FakeServer(TOOL_THEN_TEXT) as server:
        agent = _agent_dir(tmp_path, server.base_url)
        rpc = RpcProcess(agent, project)
        rpc.send({"id": "p", "type": "prompt", "message": "run echo"})
        rpc.read_until(lambda f: f["type"] == "agent_end")
        rpc.send({"id": "t", "type": "get_last_assistant_text"})
        text = rpc.read_until(lambda f: f.get("id") == "t")
        rpc.send({"id": "s", "type": "get_session_stats"})
        stats = rpc.read_until(lambda f: f.get("id") == "s")
        code, stderr = rpc.finish()
    assert code == 0, stderr
    assert stderr == ""
    assert rpc.frames[0] == {"id": "p", "type": "response", "command": "prompt", "success": True}
    types = [f["type"] for f in rpc.frames if not f["type"].endswith("_update")]
    assert types[1:types.index("agent_end") + 1] == [
        "agent_start", "turn_start", "message_start", "message_end", "message_start", "message_end",
        "tool_execution_start", "tool_execution_end", "message_start", "message_end", "turn_end",
        "turn_start", "message_start", "message_end", "turn_end", "agent_end",
    ]
    assert text["data"] == {"text": "The command printed hello."}
    data = stats["data"]
    assert data["userMessages"] == 1 and data["assistantMessages"] == 2 and data["toolCalls"] == 1
    assert data["toolResults"] == 1 and data["totalMessages"] == 4
    assert data["tokens"]["input"] == 270 and data["tokens"]["output"] == 16
    assert Path(data["sessionFile"]).is_file()


def test_no_model_fails_the_prompt_preflight_only(tmp_path: Path, project: Path) -> None:
    agent = _agent_dir(tmp_path, None)
    rpc = RpcProcess(agent, project, "--no-session")
    rpc.send({"id": 7, "type": "prompt", "message": "hi"}, end=b"\r\n")
    rpc.send({"id": 8, "type": "get_state"}, end=b"")  # the last line has no LF
    code, stderr = rpc.finish()
    assert code == 0 and "Traceback" not in stderr
    first, state = rpc.frames
    assert first["id"] == 7 and first["command"] == "prompt" and first["success"] is False
    assert first["error"].startswith("No model selected")
    assert state["id"] == 8 and "model" not in state["data"] and "sessionFile" not in state["data"]


def test_file_arguments_are_refused(tmp_path: Path, project: Path) -> None:
    agent = _agent_dir(tmp_path, None)
    rpc = RpcProcess(agent, project, "@notes.txt")
    code, stderr = rpc.finish()
    assert code == 1 and rpc.frames == []
    assert "@file arguments are not allowed in RPC mode" in stderr


def test_nothing_but_frames_reaches_stdout_whatever_an_extension_writes(tmp_path: Path, project: Path) -> None:
    """print, sys.__stdout__, os.system, a subprocess inheriting fd 1, os.write(1): all land on
    stderr, never between two frames (the same guard as ACP mode, modes/protocol_stdout.py)."""
    from tests.modes.acp.test_acp_protocol_errors import NOISY_EXTENSION

    agent = _agent_dir(tmp_path, None)
    (agent / "extensions").mkdir()
    (agent / "extensions" / "noisy.py").write_text(NOISY_EXTENSION)
    rpc = RpcProcess(agent, project, "--no-session")
    rpc.send({"id": "n", "type": "prompt", "message": "/noisy"})
    rpc.read_until(lambda f: f.get("type") == "extension_ui_request" and f.get("message") == "noisy done")
    code, stderr = rpc.finish()  # finish() parses every stdout line as a frame
    assert code == 0, stderr
    for noise in ("print", "dunder-stdout", "os-system", "subprocess", "fd-1"):
        assert f"NOISE-{noise}" in stderr
