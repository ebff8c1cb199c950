"""Tell the model the current project state on every request (seed 004, ``prepareRequest``).

Before each model call the request's messages are the session projection (the authoritative
history); this extension appends one user message with the live git branch and changed files,
wrapped in ``<project-state>`` so the model can tell injected state from what the user said.
It is re-read for every request (tool-call continuations included) and never stored in the
session file, so it can never go stale in the history.
"""

from __future__ import annotations

import time
from typing import Any

GIT_TIME_LIMIT_S = 5.0


async def load_project_state(pi: Any) -> str:
    """Read it fresh each time; in a real project this could query a database or an API."""
    branch = await pi.exec("git", "branch", "--show-current", time_limit_s=GIT_TIME_LIMIT_S)
    status = await pi.exec("git", "status", "--porcelain", time_limit_s=GIT_TIME_LIMIT_S)
    if branch.code != 0 or status.code != 0:
        return "not a git repository"
    changed = [line[3:] for line in status.stdout.splitlines() if line.strip()]
    return f"branch: {branch.stdout.strip() or '(detached)'}\nchanged files: {', '.join(changed) or '(none)'}"


def register(pi: Any) -> None:
    @pi.on("context")
    async def add_project_state(event: dict[str, Any]) -> dict[str, Any]:
        state = await load_project_state(pi)
        message = {
            "role": "user",
            "content": [{"type": "text", "text": f"<project-state>\n{state}\n</project-state>"}],
            "timestamp": int(time.time() * 1000),
        }
        return {"messages": [*event["messages"], message]}
