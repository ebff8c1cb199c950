"""Keep only the last N messages in each request, with a placeholder for the rest (seed 004).

``transform_context`` reshapes the agent messages of *one request*: the session file (the
canonical history) keeps everything. Trimming loses information, so it only starts once the
history is longer than ``KEEP_RECENT``; the placeholder tells the model that something was cut.

Run it offline (a scripted model answers)::

    python examples/transform_context_keep_last.py

or use ``install_keep_last(session)`` on a session of your own.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from pi_tui.core.messages import AgentMessage
from pi_tui.sdk import create_agent_session
from pi_tui.session.agent_session import AgentSession

KEEP_RECENT = 12


def keep_last(messages: list[AgentMessage], keep: int = KEEP_RECENT) -> list[AgentMessage]:
    """The last ``keep`` messages, preceded by one placeholder for the ones dropped."""
    if len(messages) <= keep:
        return messages
    head, tail = messages[:-keep], messages[-keep:]
    placeholder: AgentMessage = {
        "role": "user",
        "content": f"[Trimmed {len(head)} earlier messages: the initial task and old tool outputs]",
        "timestamp": int(time.time() * 1000),
    }
    return [placeholder, *tail]


def install_keep_last(session: AgentSession, keep: int = KEEP_RECENT) -> None:
    async def transform(messages: list[AgentMessage]) -> list[AgentMessage]:
        return keep_last(messages, keep)

    session.transform_context = transform


async def main(provider: Any = None, *, keep: int = 4, prompts: int = 4, **options: Any) -> AgentSession:
    if provider is None:
        from pi_tui.testing.scripted import ScriptedProvider

        provider = ScriptedProvider([{"text": f"answer {i}"} for i in range(prompts)])
        options.setdefault("no_session", True)
    session = create_agent_session(provider=provider, load_extensions=False, **options)
    install_keep_last(session, keep)
    try:
        for i in range(prompts):
            await session.prompt(f"step {i}: fix the type error in src/types.ts")
    finally:
        session.session_manager.close()
    return session


if __name__ == "__main__":
    done = asyncio.run(main())
    print(f"kept {len(done.messages)} messages in the session; requests saw at most 4 + a placeholder")
