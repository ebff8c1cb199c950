"""``pi-tui --mode acp`` as a real subprocess, driven by the official ACP SDK's client side
(``acp.spawn_agent_process``) against the fake OpenAI-compatible server.

``EditorClient`` plays the editor: it records every ``session/update``, answers permission
questions from a queue of choices, serves ``fs/*`` from in-memory buffers (when it offers them)
and records every raw frame it receives. At the end of each test every frame the agent sent is
checked against the SDK's pydantic schema (``acp.schema``): the agent speaks the protocol
exactly, not just enough for this client.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from acp import schema, spawn_agent_process
from acp.connection import StreamDirection, StreamEvent
from acp.exceptions import RequestError

FAKE_MODEL = {
    "baseUrl": "", "api": "openai-completions", "apiKey": "fake-key",
    "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
    "models": [{"id": "fake-model", "contextWindow": 128000, "maxTokens": 1000, "reasoning": True}],
}


def write_models(agent_dir: Path, base_url: str) -> None:
    provider = dict(FAKE_MODEL, baseUrl=base_url)
    (agent_dir / "models.json").write_text(json.dumps({"providers": {"fake": provider}}))


@dataclass
class EditorClient:
    """The SDK ``Client`` protocol, as an editor would answer it."""

    buffers: dict[str, str] | None = None
    """Open buffers by absolute path; None = the client offers no ``fs`` capability."""
    choices: list[str] = field(default_factory=list)
    """Option ids to answer permission questions with, in order (``"cancelled"`` = the outcome,
    ``"error"`` = an error answer; an id pi-tui did not offer is sent as it is)."""
    updates: list[tuple[str, Any]] = field(default_factory=list)
    permission_requests: list[Any] = field(default_factory=list)
    fs_calls: list[tuple[str, str]] = field(default_factory=list)
    frames: list[dict[str, Any]] = field(default_factory=list)
    on_permission: Callable[[], Any] | None = None
    terminals: dict[str, Any] | None = None
    """Running commands by terminal id; None = the client offers no ``terminal`` capability."""
    terminal_calls: list[str] = field(default_factory=list)
    terminal_shown: list[str] = field(default_factory=list)
    """What the editor's terminals showed, one entry per ``terminal/output``."""
    create_delay: float = 0.0
    """Seconds between starting a terminal's command and answering ``terminal/create`` (a busy editor)."""
    unanswered: dict[str, int] = field(default_factory=dict)
    """Method → how many of its next requests the editor never answers (a hung or buggy editor)."""

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append((session_id, update))

    async def request_permission(self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any) -> Any:
        self.permission_requests.append((tool_call, options))
        if self.on_permission is not None:
            await self.on_permission()
        choice = self.choices.pop(0) if self.choices else "reject_once"
        if choice == "error":  # a buggy editor: an error answer instead of an outcome
            raise RequestError.internal_error({"details": "the dialog crashed"})
        if choice == "cancelled":
            return schema.RequestPermissionResponse(outcome=schema.DeniedOutcome(outcome="cancelled"))
        return schema.RequestPermissionResponse(outcome=schema.AllowedOutcome(outcome="selected", option_id=choice))

    async def _maybe_never_answer(self, method: str) -> None:
        if self.unanswered.get(method, 0) > 0:
            self.unanswered[method] -= 1
            await asyncio.Event().wait()  # until the connection ends

    async def read_text_file(self, session_id: str, path: str, line: int | None = None, limit: int | None = None,
                             **kwargs: Any) -> Any:
        self.fs_calls.append(("read", path))
        await self._maybe_never_answer("fs/read_text_file")
        assert self.buffers is not None
        if path not in self.buffers:
            raise RequestError.resource_not_found(path)
        return schema.ReadTextFileResponse(content=self.buffers[path])

    async def write_text_file(self, session_id: str, path: str, content: str, **kwargs: Any) -> Any:
        self.fs_calls.append(("write", path))
        assert self.buffers is not None
        self.buffers[path] = content
        return schema.WriteTextFileResponse()

    async def create_terminal(self, session_id: str, command: str, args: list[str] | None = None, env: Any = None,
                              cwd: str | None = None, output_byte_limit: int | None = None, **kwargs: Any) -> Any:
        assert self.terminals is not None
        self.terminal_calls.append("create")
        # The editor's own environment with the request's variables set over it, as the spec says.
        environment = {**os.environ, **{variable.name: variable.value for variable in env or []}}
        process = await asyncio.create_subprocess_exec(command, *(args or []), cwd=cwd, env=environment,
                                                       stdout=asyncio.subprocess.PIPE,
                                                       stderr=asyncio.subprocess.STDOUT, start_new_session=True)
        terminal_id = f"term-{len(self.terminals) + 1}"
        self.terminals[terminal_id] = process
        await asyncio.sleep(self.create_delay)
        return schema.CreateTerminalResponse(terminal_id=terminal_id)

    async def wait_for_terminal_exit(self, session_id: str, terminal_id: str, **kwargs: Any) -> Any:
        self.terminal_calls.append("wait")
        code = await self.terminals[terminal_id].wait()  # type: ignore[index]
        if code < 0:
            return schema.WaitForTerminalExitResponse(signal=signal.Signals(-code).name)
        return schema.WaitForTerminalExitResponse(exit_code=code)

    async def terminal_output(self, session_id: str, terminal_id: str, **kwargs: Any) -> Any:
        self.terminal_calls.append("output")
        process = self.terminals[terminal_id]  # type: ignore[index]
        data = await process.stdout.read() if process.returncode is not None else b""
        self.terminal_shown.append(data.decode())
        return schema.TerminalOutputResponse(output=data.decode(), truncated=False)

    async def kill_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> Any:
        self.terminal_calls.append("kill")
        os.killpg(self.terminals[terminal_id].pid, signal.SIGKILL)  # type: ignore[index]
        await self.terminals[terminal_id].wait()  # type: ignore[index]
        return schema.KillTerminalResponse()

    async def release_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> Any:
        self.terminal_calls.append("release")
        await self._maybe_never_answer("terminal/release")
        return schema.ReleaseTerminalResponse()

    def on_connect(self, conn: Any) -> None:
        pass

    def observe(self, event: StreamEvent) -> None:
        if event.direction == StreamDirection.INCOMING:
            self.frames.append(event.message)

    # ------------------------------------------------------------------ views

    def kinds(self) -> list[str]:
        return [u.session_update for _, u in self.updates]

    def of_kind(self, kind: str) -> list[Any]:
        return [u for _, u in self.updates if u.session_update == kind]

    def message_text(self, kind: str = "agent_message_chunk") -> str:
        return "".join(u.content.text for u in self.of_kind(kind) if u.content.type == "text")

    def capabilities(self) -> schema.ClientCapabilities:
        fs = schema.FileSystemCapabilities(read_text_file=self.buffers is not None,
                                           write_text_file=self.buffers is not None)
        return schema.ClientCapabilities(fs=fs, terminal=self.terminals is not None)


def check_frames(frames: list[dict[str, Any]]) -> None:
    """Every frame the agent sent, against the protocol schema."""
    for frame in frames:
        assert frame.get("jsonrpc") == "2.0", frame
        method = frame.get("method")
        if method == "session/update":
            schema.SessionNotification.model_validate(frame["params"])
        elif method == "session/request_permission":
            schema.RequestPermissionRequest.model_validate(frame["params"])
        elif method == "fs/read_text_file":
            schema.ReadTextFileRequest.model_validate(frame["params"])
        elif method == "fs/write_text_file":
            schema.WriteTextFileRequest.model_validate(frame["params"])
        elif method is not None and method.startswith("terminal/"):
            pass  # the SDK's client router validated these when it dispatched them
        elif method is not None:
            raise AssertionError(f"unexpected method from the agent: {method}")


def agent_env(agent_dir: Path) -> dict[str, str]:
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(agent_dir)}
    env.pop("PYTEST_CURRENT_TEST", None)
    return env


@asynccontextmanager
async def acp_agent(client: EditorClient, agent_dir: Path, cwd: Path, *args: str) -> AsyncIterator[Any]:
    """The connection to a running ``pi-tui --mode acp``, initialized with ``client``'s capabilities."""
    log = agent_dir / "acp-stderr.log"
    with log.open("ab") as stderr:
        async with spawn_agent_process(client, sys.executable, "-m", "pi_tui", "--mode", "acp", *args,
                                       env=agent_env(agent_dir), cwd=cwd, observers=[client.observe],
                                       transport_kwargs={"limit": 16 * 1024 * 1024, "stderr": stderr}) as (conn, process):
            conn.process = process
            conn.stderr_log = log
            conn.init = await conn.initialize(protocol_version=1, client_capabilities=client.capabilities())
            yield conn
    check_frames(client.frames)


async def wait_during(turn: asyncio.Future[Any], ready: Callable[[], Any], seconds: float = 30) -> None:
    """Until ``ready()`` (bounded), failing if the prompt ``turn`` ends first."""
    deadline = time.monotonic() + seconds
    while not ready():
        assert time.monotonic() < deadline and not turn.done(), "never happened while the turn ran"
        await asyncio.sleep(0.02)


async def cancel_when(conn: Any, session_id: str, turn: asyncio.Future[Any], ready: Callable[[], Any]) -> tuple[Any, float]:
    """Once ``ready()``: ``session/cancel``; the prompt's answer and the seconds it took after the cancel."""
    await wait_during(turn, ready)
    started = time.monotonic()
    await conn.cancel(session_id=session_id)
    answer = await asyncio.wait_for(turn, 10)
    return answer, time.monotonic() - started


@pytest.fixture
def editor() -> EditorClient:
    return EditorClient()
