"""Building the delegation tools from settings, for the composition root (``sdk.py``).

Settings (docs/subagents.md): ``subagents.maxDepth`` (1: no ``task`` inside a child) and
``subagents.maxConcurrent`` (4 children at once per session); ``subagents.enabled`` /
``todo.enabled`` (read by ``sdk.py``, so a run without them never imports this room).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pi_tui.core.tool import Tool
from pi_tui.subagents.child import ChildSpec
from pi_tui.subagents.definitions import LoadedAgents, load_agents
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
