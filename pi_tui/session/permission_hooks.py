"""Attaching the permission gate (``pi_tui/permissions``) to a session: a tool gate before every
call, the bash sandbox in the tools' context and for ``!cmd``, questions through the session's
dialogs (``ask_user``), and bash's ``escalate``/``justification`` when there is a sandbox to leave."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pi_tui.permissions.setup import PermissionOptions


def attach_permissions(session: Any, options: PermissionOptions | None, cwd: Path, agent: Path, settings: Any,
                       trusted: bool) -> None:
    """The gate before every tool call, the sandbox for bash and ``!cmd``, and bash's
    ``escalate``/``justification`` arguments when there is a sandbox to leave and someone to ask.
    ``options`` None (the SDK's default): nothing, as pi. Imports inside: ``-p`` without a gate
    loads none of it."""
    if options is None:
        return
    from pi_tui.permissions.ask import asker_through
    from pi_tui.permissions.setup import build_gate
    from pi_tui.tools.bash import BashTool, EscalatingBashTool

    def stop_turn() -> None:
        session._background.schedule(session.abort(), what="Stopping the turn after a permission answer")

    if options.asker is None and options.ask_through_session:
        options.asker = asker_through(session.ask_user, timeout_s=options.ask_timeout_s)
    def notify(notice: str) -> None:
        session.add_diagnostic("permissions", notice)
        session.notify(notice, "warning")

    gate = build_gate(options, cwd=cwd, agent_dir=agent, settings=settings, trusted=trusted, on_event=session.emit,
                      stop_turn=stop_turn, notify=notify)
    session.permissions = gate
    session.hooks.tool_gates.append(gate.before_tool_call)
    session._state.sandbox = gate
    # Leaving the sandbox needs someone to ask (print/JSON would deny it anyway): only then is
    # the preflight's answer needed now, for bash's parameters; print mode runs it lazily.
    if options.asker is not None and gate.sandboxed:
        tools = session._state.all_tools
        for name, tool in list(tools.items()):
            if type(tool) is BashTool:
                tools[name] = EscalatingBashTool()
    for notice in options.notices:
        notify(notice)


def child_tools_for(parent: Any, tools: list[Any], *, read_only: bool) -> list[Any]:
    """A read-only subagent's tools: without a gate to hold its bash in the read-only sandbox,
    no bash."""
    if read_only and getattr(parent, "permissions", None) is None:
        return [tool for tool in tools if tool.name != "bash"]
    return tools


def share_permissions(parent: Any, child: Any, *, read_only: bool) -> None:
    """A subagent is gated as its parent is (the same gate, mode, rules, sandbox and asker), or
    in ``plan`` mode when its definition is read-only (``explore``)."""
    gate = getattr(parent, "permissions", None)
    if gate is None:
        return
    mine = gate.for_child(read_only=read_only)
    child.permissions = mine
    child.hooks.tool_gates.append(mine.before_tool_call)
    child._state.sandbox = mine
