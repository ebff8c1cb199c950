"""Helpers for AgentSession tests: a clock that does not wait, a session factory, file reading."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pi_tui.core.provider import ModelCost, ModelInfo
from pi_tui.sdk import create_agent_session
from pi_tui.session.agent_session import AgentSession
from pi_tui.testing.scripted import ScriptedProvider

MODEL = ModelInfo(provider="fake", id="fake-model", context_window=200_000, reasoning=True,
                  cost=ModelCost(input=3.0, output=15.0, cache_read=0.3, cache_write=3.75))


class FakeClock:
    def __init__(self) -> None:
        self.sleeps: list[float] = []

    def now(self) -> float:
        return 0.0

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)


def entries_of(session: AgentSession) -> list[dict[str, Any]]:
    path = session.session_manager.session_file
    assert path is not None and path.exists()
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def make_session(project: Path, agent_dir: Path, clock: FakeClock) -> Any:
    def make(turns: list[dict[str, Any]], **kwargs: Any) -> tuple[AgentSession, ScriptedProvider, list[dict[str, Any]]]:
        provider = ScriptedProvider(turns)
        kwargs.setdefault("model", MODEL)
        kwargs.setdefault("load_extensions", False)
        if kwargs["load_extensions"]:  # the test's own .pi/extensions: a project it trusts
            kwargs.setdefault("trust_project", True)
        kwargs.setdefault("clock", clock)
        session = create_agent_session(cwd=project, agent_dir=agent_dir, provider=provider, **kwargs)
        events: list[dict[str, Any]] = []
        session.subscribe(events.append)
        return session, provider, events

    return make
