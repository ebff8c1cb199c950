"""An in-process RPC client: a real ``AgentSession`` (built by ``sdk.create_agent_session``, as the
CLI builds it) on the scripted provider, behind a real ``RpcServer``. Tests feed raw stdin bytes
and read the frames the server writes, exactly as a client on the pipes would."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from pi_tui.core.provider import ModelInfo
from pi_tui.modes.rpc.framing import encode_frame
from pi_tui.modes.rpc.server import RpcServer
from pi_tui.sdk import create_agent_session
from pi_tui.testing.scripted import ScriptedProvider

MODEL = ModelInfo(provider="fake", id="fake-model", context_window=200_000, max_tokens=1000, reasoning=True)
SMALL_MODEL = ModelInfo(provider="fake", id="fake-model", context_window=8192, max_tokens=1000)


class GatedProvider:
    """The scripted provider, holding every request until ``gate`` is set (so a test can act
    while a run is in progress without racing the stream)."""

    def __init__(self, turns: list[dict[str, Any]]) -> None:
        self.inner = ScriptedProvider(turns)
        self.gate = asyncio.Event()
        self.waiting = asyncio.Event()

    @property
    def requests(self) -> list[Any]:
        return self.inner.requests

    async def stream(self, request: Any) -> AsyncIterator[Any]:
        self.waiting.set()
        await self.gate.wait()
        async for event in self.inner.stream(request):
            yield event


class RpcClient:
    def __init__(self, session: Any, *, scoped_models: list[Any] | None = None) -> None:
        self.session = session
        self.raw: list[bytes] = []
        self.server = RpcServer(session, self._collect, scoped_models=scoped_models)
        self._input: asyncio.Queue[bytes | None] = asyncio.Queue()
        self._task = asyncio.ensure_future(self.server.serve(self._chunks()))

    def _collect(self, frame: dict[str, Any]) -> None:
        self.raw.append(encode_frame(frame))  # what would go over the pipe

    @property
    def frames(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.raw]

    async def _chunks(self) -> AsyncIterator[bytes]:
        while (chunk := await self._input.get()) is not None:
            yield chunk

    def send_raw(self, data: bytes) -> None:
        self._input.put_nowait(data)

    def send(self, command: dict[str, Any]) -> None:
        self.send_raw(json.dumps(command).encode() + b"\n")

    async def wait_for(self, condition: Callable[[], bool], seconds: float = 30.0) -> None:
        deadline = asyncio.get_running_loop().time() + seconds
        while not condition():
            if asyncio.get_running_loop().time() > deadline:
                raise AssertionError(f"condition not met; frames: {[f.get('type') for f in self.frames]}")
            await asyncio.sleep(0.005)

    def response(self, request_id: Any) -> dict[str, Any] | None:
        return next((f for f in self.frames if f.get("type") == "response" and f.get("id") == request_id), None)

    async def request(self, command: dict[str, Any]) -> dict[str, Any]:
        """Send a command with an id and wait for its response."""
        self.send(command)
        await self.wait_for(lambda: self.response(command["id"]) is not None)
        found = self.response(command["id"])
        assert found is not None
        return found

    async def close(self) -> None:
        """End of input: the server finishes what is running, then returns."""
        self._input.put_nowait(None)
        await asyncio.wait_for(self._task, 10)

    def types(self, *, updates: bool = False) -> list[str]:
        return [f["type"] for f in self.frames if updates or not f["type"].endswith("_update")]


ClientFactory = Callable[..., RpcClient]


@pytest.fixture
def make_client(project: Path, agent_dir: Path) -> ClientFactory:
    """``make_client(turns | provider, settings=..., **session_kwargs) -> RpcClient``."""

    def factory(turns: list[dict[str, Any]] | Any = (), *, settings: Any = None, **kwargs: Any) -> RpcClient:
        provider = ScriptedProvider(list(turns)) if isinstance(turns, list | tuple) else turns
        kwargs.setdefault("model", MODEL)
        kwargs.setdefault("load_extensions", False)
        session = create_agent_session(cwd=project, agent_dir=agent_dir, provider=provider,
                                       settings=settings if settings is not None else {}, **kwargs)
        return RpcClient(session)

    return factory
