"""Fixtures for the interactive mode: a real ``AgentSession`` on the scripted provider, in an app.

Nothing here mocks our own modules: the session is built by ``sdk.create_agent_session`` exactly
as the CLI builds it, with a ``ScriptedProvider`` in place of a network model and a fixed clock
for the events pane.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from pi_tui.modes.interactive.app import PiApp
from pi_tui.sdk import create_agent_session
from pi_tui.testing.scripted import ScriptedProvider

FIXED_NOW = datetime(2026, 11, 30, 12, 0, 0)


def fixed_clock() -> datetime:
    return FIXED_NOW


AppFactory = Callable[..., tuple[PiApp, Any]]


class GatedProvider:
    """The scripted provider, holding each request until ``gate`` is set.

    While a request waits the agent is running but the UI is idle, so pilot key presses return at
    once and queue/abort behaviour can be tested without racing a stream.
    """

    def __init__(self, turns: list[dict[str, Any]]) -> None:
        self.inner = ScriptedProvider(turns)
        self.gate = asyncio.Event()
        self.waiting = asyncio.Event()

    async def stream(self, request: Any) -> AsyncIterator[Any]:
        self.waiting.set()
        await self.gate.wait()
        async for event in self.inner.stream(request):
            yield event


@pytest.fixture
def make_app(project: Path, agent_dir: Path) -> AppFactory:
    """``make_app(turns, settings=..., **session_kwargs) -> (app, session)``."""

    def factory(turns: list[dict[str, Any]] | None = None, *, settings: dict[str, Any] | None = None,
                provider: Any = "scripted", **kwargs: Any) -> tuple[PiApp, Any]:
        if provider == "scripted":
            provider = ScriptedProvider(list(turns or []))
        kwargs.setdefault("load_extensions", False)
        if kwargs["load_extensions"]:  # the test's own .pi/extensions: a project it trusts
            kwargs.setdefault("trust_project", True)
        session = create_agent_session(cwd=project, agent_dir=agent_dir, provider=provider,
                                       settings=settings if settings is not None else {}, **kwargs)
        app = PiApp(session, cwd=project, agent_dir=agent_dir, clock=fixed_clock)
        return app, session

    return factory


async def wait_for(pilot: Any, condition: Callable[[], bool], *, seconds: float = 30.0) -> None:
    """Pause until ``condition()`` holds (workers and timers keep running meanwhile). ``seconds``
    only bounds a wait that would never end: on a loaded machine one pilot step can take
    seconds, so it is generous; the wait ends as soon as the condition holds."""
    import asyncio

    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while not condition():
        if loop.time() > deadline:
            raise AssertionError("condition not met in time")
        await pilot.pause(0.02)


async def ready(pilot: Any) -> None:
    """Wait until the session is attached and the stored conversation is on screen."""
    await wait_for(pilot, lambda: pilot.app.chat is not None and pilot.app.chat.history_loaded.is_set())


async def settle(app: PiApp, pilot: Any) -> None:
    """Wait for agent work to finish and the UI to catch up with the posted events."""
    await app.workers.wait_for_complete()
    if app.chat is not None:
        await app.chat.workers.wait_for_complete()
    await pilot.pause()
    await pilot.pause()
