"""Rebuild every request's context from an authoritative source (seed 004).

``prepare_request`` may replace the whole request context. Here it ignores whatever the earlier
stages produced and rebuilds the messages from the session projection (the session file is the
authority), then appends the current project state — re-read for every model call, because the
project can change between two calls of one run (a tool just edited a file). The state is
wrapped in an XML tag so the model can tell injected state from the conversation. An earlier
``prepare_request`` (if one was installed) still runs first: hooks compose.

Run it offline (a scripted model answers)::

    python examples/prepare_request_rebuild.py
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

from pi_tui.agent.types import PreparedRequest, PrepareRequestResult, RequestContext
from pi_tui.core.messages import AgentMessage
from pi_tui.sdk import create_agent_session
from pi_tui.session.agent_session import AgentSession


async def load_project_state() -> str:
    """In a real project: read a database, a config file, an internal API."""
    return "branch: feature/fix-types\nmodified files: src/types.ts"


def install_rebuild(session: AgentSession, state: Callable[[], Awaitable[str]] = load_project_state) -> None:
    previous = session.prepare_request

    async def prepare(request: PreparedRequest) -> PrepareRequestResult:
        result = await previous(request) if previous is not None else None
        context = result.context if result is not None and result.context is not None else request.context
        projection = session.session_manager.build_session_context()
        project_state: AgentMessage = {
            "role": "user",
            "content": f"<project-state>\n{await state()}\n</project-state>",
            "timestamp": int(time.time() * 1000),
        }
        messages = [*projection.messages, project_state]
        return PrepareRequestResult(
            context=RequestContext(system_prompt=context.system_prompt, messages=messages, tools=context.tools)
        )

    session.prepare_request = prepare


async def main(provider: Any = None, **options: Any) -> AgentSession:
    if provider is None:
        from pi_tui.testing.scripted import ScriptedProvider

        provider = ScriptedProvider([{"text": "Continuing with src/types.ts.", "when": {"last_user_contains": "project-state"}}])
        options.setdefault("no_session", True)
    session = create_agent_session(provider=provider, load_extensions=False, **options)
    install_rebuild(session)
    try:
        await session.prompt("keep fixing the type errors")
    finally:
        session.session_manager.close()
    return session


if __name__ == "__main__":
    done = asyncio.run(main())
    print(done.messages[-1]["content"][0]["text"])
