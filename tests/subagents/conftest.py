"""Sessions with the ``task`` and ``todo`` tools on the scripted provider."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pi_tui.sdk import create_agent_session
from pi_tui.session.agent_session import AgentSession
from pi_tui.testing.scripted import ScriptedProvider
from tests.session.conftest import MODEL, FakeClock

SUBAGENT = "working as a subagent"
"""Text only a child's system prompt holds (``definitions.SUBAGENT_NOTE``)."""


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def text_of_request(request: Any) -> str:
    return json.dumps(request.messages)


def child_requests(provider: ScriptedProvider) -> list[Any]:
    return [r for r in provider.requests if SUBAGENT in r.system_prompt]


def parent_requests(provider: ScriptedProvider) -> list[Any]:
    return [r for r in provider.requests if SUBAGENT not in r.system_prompt]


@pytest.fixture
def make_parent(project: Path, agent_dir: Path) -> Any:
    def make(turns: list[dict[str, Any]] | Any, *, settings: dict[str, Any] | None = None,
             tools: str = "read,bash,edit,write,task,todo",
             **kwargs: Any) -> tuple[AgentSession, ScriptedProvider, list[dict[str, Any]]]:
        provider = ScriptedProvider(turns) if isinstance(turns, list) else turns
        kwargs.setdefault("model", MODEL)
        session = create_agent_session(
            cwd=project, agent_dir=agent_dir, provider=provider, load_extensions=False,
            clock=FakeClock(), active_tools=tools.split(","), settings=settings or {}, **kwargs)
        events: list[dict[str, Any]] = []
        session.subscribe(events.append)
        return session, provider, events

    return make


def read_text(path: Path) -> str:
    return path.read_text()
