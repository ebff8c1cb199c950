"""The state of one ``AgentSession`` that more than one of its collaborators reads or changes.

Why one object: a reader sees here, with its type, every field that is shared (the session file,
the model and thinking level, the tools, the resources and the system prompt, the run's abort
bookkeeping), instead of attributes written in one file and read in another. What a collaborator
keeps for itself (the retry counter, the held-back ``!cmd`` results, the extension-discovered
resource paths, the listeners) stays in that collaborator. ``AgentSession`` creates it and hands
it to each collaborator that needs it; nobody replaces it, they only assign its fields.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pi_tui.core.messages import ThinkingLevel
from pi_tui.core.provider import CompletionRequest, ModelInfo
from pi_tui.core.redact import Redactor
from pi_tui.core.session.manager import SessionManager
from pi_tui.core.tool import Tool
from pi_tui.session.redaction import RedactingTool


@dataclass(slots=True, kw_only=True, eq=False)
class LiveState:
    cwd: Path
    session_manager: SessionManager
    """Replaced by ``/new``, ``/resume`` and ``/fork`` (``SessionReplacer``)."""
    settings: Any
    resources: Any
    """The loaded resources (context files, skills, templates); reloaded before each run."""
    model: ModelInfo | None
    thinking_level: ThinkingLevel
    redactor: Redactor
    """Every key this session knows; model calls' error texts and tool output pass through it."""
    all_tools: dict[str, Tool]
    """Every tool by name, in registration order (late ones, e.g. MCP tools, at the end)."""
    active_tool_names: list[str]
    base_system_prompt: str = ""
    run_system_prompt: str | None = None
    """An extension's ``before_agent_start`` replacement, for the run that asked for it only."""
    last_request: CompletionRequest | None = None
    file_access: Any = None
    """``core.tool.FileAccess`` the file tools use instead of the disk (ACP: the editor's buffers)."""
    sandbox: Any = None
    """``core.tool.ShellSandbox`` where bash and ``!cmd`` run (the permission gate's bwrap); None: directly."""
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    """Held while the agent runs (retries included) and by every compaction, branch summary and
    session replacement, so none of them overlaps another."""
    run_task: asyncio.Task[Any] | None = None
    """The task running the agent under the lock: a hook it awaits must not wait for the run."""
    one_shot: bool = False
    """A subagent child (the ``task`` tool's): it answers one prompt, so threshold compaction runs
    between its turns (before a model call), never after its answer (docs/subagents.md)."""
    abort_requested: bool = False
    aborts: int = 0
    """How many aborts were requested; a turn scheduled before one does not start after it."""

    def active_tools(self) -> list[Tool]:
        """The active tools, each behind the session's redaction (``redaction.py``)."""
        tools = self.all_tools
        return [RedactingTool(tools[n], self.redactor) for n in self.active_tool_names if n in tools]

    def saved_artifact_dir(self) -> Path | None:
        """Where full outputs go beside the session file (None in memory: the tools use a temp dir)."""
        manager = self.session_manager
        return manager.artifact_dir if manager.session_file is not None else None
