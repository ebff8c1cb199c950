"""Building the delegation tools from settings, for the composition root (``sdk.py``).

Settings (docs/subagents.md): ``subagents.maxDepth`` (1: no ``task`` inside a child) and
``subagents.maxConcurrent`` (4 children at once per session); ``subagents.enabled`` /
``todo.enabled`` (read by ``sdk.py``, so a run without them never imports this room).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pi_tui.core.errors import ConfigError, ProviderSetupError
from pi_tui.core.provider import ModelInfo
from pi_tui.core.session.listing import SUBAGENT_ENTRY_TYPE
from pi_tui.core.session.manager import SessionManager
from pi_tui.core.tool import Tool
from pi_tui.subagents.child import ChildHandle, ChildSpec
from pi_tui.subagents.definitions import AgentDefinition, LoadedAgents, load_agents
from pi_tui.subagents.task_tool import DEFAULT_MAX_CONCURRENT, DEFAULT_MAX_DEPTH, TaskTool
from pi_tui.subagents.todo import TodoTool

Getter = Callable[[str, Any], Any]


def _getter(settings: Any) -> Getter:
    get = getattr(settings, "get", None)
    return get if callable(get) else (lambda _key, default: default)


def _limits(settings: Any) -> tuple[int, int]:
    get = _getter(settings)
    depth, concurrent = get("subagents.maxDepth", DEFAULT_MAX_DEPTH), get("subagents.maxConcurrent", DEFAULT_MAX_CONCURRENT)
    depth = depth if isinstance(depth, int) and not isinstance(depth, bool) else DEFAULT_MAX_DEPTH
    ok = isinstance(concurrent, int) and not isinstance(concurrent, bool) and concurrent > 0
    return depth, concurrent if ok else DEFAULT_MAX_CONCURRENT


def task_tool(agents: LoadedAgents, settings: Any, *, depth: int) -> TaskTool:
    max_depth, concurrent = _limits(settings)
    return TaskTool(agents, depth=depth, max_depth=max_depth, max_concurrent=concurrent)


def delegation_tools(cwd: Path, agent_dir: Path, settings: Any) -> list[Tool]:
    """A top-level session's ``task`` (with the definitions found for ``cwd``) and ``todo``."""
    return [task_tool(load_agents(cwd, agent_dir), settings, depth=0), TodoTool()]


def child_tools(spec: ChildSpec, parent_tools: Sequence[Tool], agents: LoadedAgents, settings: Any) -> list[Tool]:
    """The tool objects for a child: the parent's own (so an ACP terminal ``bash`` stays the
    client's), fresh built-ins for the read-only search tools the parent has switched off, and
    a ``task`` / ``todo`` of the child's own."""
    from pi_tui.tools.registry import builtin_tools

    mine = {t.name: t for t in parent_tools}
    fresh = builtin_tools()
    tools: list[Tool] = []
    for name in spec.tools:
        if name == "task":
            tools.append(task_tool(agents, settings, depth=spec.depth))
        elif name == "todo":
            tools.append(TodoTool())
        elif name in mine or name in fresh:
            tools.append(mine.get(name) or fresh[name])
    return tools


def child_model(parent_model: ModelInfo | None, registry: Any, agent: AgentDefinition) -> tuple[ModelInfo, list[str]]:
    """The definition's model when this installation knows it, else the parent's (with a note)."""
    model, notes = parent_model, []
    if agent.model is not None:
        try:
            model = registry.resolve(agent.model)
        except (ProviderSetupError, ConfigError, AttributeError) as err:
            notes.append(f"model '{agent.model}' of agent '{agent.name}' is not available ({err}); "
                         "it ran on the session's model")
    if model is None:
        raise ProviderSetupError("no model for the subagent: the session has none selected")
    return model, notes


def child_session_manager(parent: SessionManager, spec: ChildSpec | None = None) -> SessionManager:
    """A new session beside the parent's file (in memory for an in-memory parent) whose header's
    ``parentSession`` is the parent's file; its first entry says whose subagent it is
    (``SUBAGENT_ENTRY_TYPE``: ``pi-tui sessions`` and ``/resume`` label it, a fork has none)."""
    manager = (SessionManager.create(parent.cwd, parent.session_dir) if parent.session_dir is not None
               else SessionManager.in_memory(parent.cwd))
    manager.new_session(parent_session=str(parent.session_file) if parent.session_file is not None else None)
    if spec is not None:
        manager.append_custom_entry(SUBAGENT_ENTRY_TYPE, {"agent": spec.agent.name, "description": spec.description,
                                                          "depth": spec.depth})
    return manager


def child_handle(child: Any, manager: SessionManager, model: ModelInfo, notes: list[str]) -> ChildHandle:
    """What the task tool holds of a child ``AgentSession``."""

    def history() -> list[Any]:  # every entry of its file, as pi's footer counts a session's usage
        return [entry["message"] for entry in manager.get_entries() if entry.get("type") == "message"]

    return ChildHandle(
        session_id=manager.session_id, session_file=manager.session_file, model=f"{model.provider}/{model.id}",
        prompt=child.prompt, abort=child.abort, messages=lambda: child.messages, history=history,
        subscribe=child.subscribe, close=manager.close, notes=tuple(notes),
    )
