"""Attaching the permission gate (``pi_tui/permissions``) to a session: a tool gate before every
call, the bash sandbox in the tools' context and for ``!cmd``, questions through the session's
dialogs (``ask_user``), and bash's ``escalate``/``justification`` when there is a sandbox to leave."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from pi_tui.core.tool import Tool
from pi_tui.session.background import BackgroundTasks
from pi_tui.session.hooks import SessionHooks

if TYPE_CHECKING:
    from pi_tui.permissions.options import PermissionOptions


class PermissionHost(Protocol):
    """What attaching the gate uses of a session (``AgentSession`` is one): its public seams only."""

    permissions: Any
    sandbox: Any
    extension_ui: Any
    all_tools: dict[str, Tool]
    hooks: SessionHooks
    background: BackgroundTasks

    async def ask_user(self, title: str, options: Sequence[str], *, timeout_s: float | None = None) -> str | None: ...
    async def abort(self) -> None: ...
    def emit(self, event: dict[str, Any]) -> None: ...
    def notify(self, message: str, level: str = "info") -> None: ...
    def add_diagnostic(self, source: str, message: str) -> None: ...


def attach_permissions(session: PermissionHost, options: PermissionOptions | None, cwd: Path, agent: Path, settings: Any,
                       trusted: bool) -> None:
    """The gate before every tool call, the sandbox for bash and ``!cmd``, and bash's
    ``escalate``/``justification`` arguments when there is a sandbox to leave and someone to ask.
    ``options`` None (the SDK's default): nothing, as pi. Imports inside: ``-p`` without a gate
    loads none of it."""
    if options is None:
        return
    if not options.answered:  # print/JSON: nobody to ask, so nothing is needed before a tool call
        _attach_at_first_call(session, options, cwd, agent, settings, trusted)
        return
    _attach(session, options, cwd, agent, settings, trusted)


def _attach(session: PermissionHost, options: PermissionOptions, cwd: Path, agent: Path, settings: Any, trusted: bool, *,
            hook: bool = True) -> Any:
    from pi_tui.permissions.ask import asker_through
    from pi_tui.permissions.setup import build_gate
    from pi_tui.tools.bash import BashTool, EscalatingBashTool

    def stop_turn() -> None:
        session.background.schedule(session.abort(), what="Stopping the turn after a permission answer")

    if options.asker is None and options.ask_through_session:
        async def ask_text(title: str, placeholder: str | None, *, timeout_s: float | None) -> str | None:
            # the mode's UI as installed when asked (the TUI installs it after the session is built)
            from pi_tui.extensions.ui import ExtensionUIContext

            return await ExtensionUIContext(session.extension_ui, session.notify).input(title, placeholder,
                                                                                      timeout_s=timeout_s)

        options.asker = asker_through(session.ask_user, ask_text=ask_text, timeout_s=options.ask_timeout_s)

    def notify(notice: str) -> None:
        session.add_diagnostic("permissions", notice)
        session.notify(notice, "warning")

    gate = build_gate(options, cwd=cwd, agent_dir=agent, settings=settings, trusted=trusted, on_event=session.emit,
                      stop_turn=stop_turn, notify=notify)
    session.permissions = gate
    if hook:  # (at the first call the stand-in's entry calls it)
        session.hooks.tool_gates.append(gate.before_tool_call)
    session.sandbox = gate
    # Leaving the sandbox needs someone to ask (print/JSON would deny it anyway): only then is
    # the preflight's answer needed now, for bash's parameters; print mode runs it lazily.
    if options.asker is not None and gate.sandboxed:
        tools = session.all_tools
        for name, tool in list(tools.items()):
            if type(tool) is BashTool:
                tools[name] = EscalatingBashTool()
    for notice in options.notices:
        notify(notice)
    return gate


class _GateAtFirstCall:
    """Print/JSON mode: the permission room is imported and the gate built at the first tool
    call (a ``-p`` run that calls none loads none of it: ~20 ms of imports, and bwrap). It stands
    in for the gate as the tools' sandbox and path pins meanwhile."""

    def __init__(self, build: Any) -> None:
        self._build = build
        self._gate: Any = None

    @property
    def gate(self) -> Any:
        if self._gate is None:
            self._gate = self._build()
        return self._gate

    async def before_tool_call(self, info: Any) -> Any:
        return await self.gate.before_tool_call(info)

    def wrap(self, argv: Any, cwd: Path, call_id: str | None) -> Any:
        return self.gate.wrap(argv, cwd, call_id)

    def explain(self, output: str, call_id: str | None) -> str:
        return self.gate.explain(output, call_id)  # type: ignore[no-any-return]

    def pinned(self, call_id: str, path: Path) -> Path | None:
        return self.gate.pinned(call_id, path)  # type: ignore[no-any-return]


def _attach_at_first_call(session: PermissionHost, options: PermissionOptions, cwd: Path, agent: Path, settings: Any,
                          trusted: bool) -> None:
    _check_modes(options, settings)  # a bad mode is still a start-up error, as with the gate built now

    def build() -> Any:
        return _attach(session, options, cwd, agent, settings, trusted, hook=False)

    stand_in = _GateAtFirstCall(build)
    session.hooks.tool_gates.append(stand_in.before_tool_call)
    session.sandbox = stand_in


def _check_modes(options: PermissionOptions, settings: Any) -> None:
    """The mode values the gate would read (the environment, ``permissions.defaultMode``), checked
    now: ``ModeError`` names a bad one's place."""
    import os

    from pi_tui.permissions.modes import ENV_MODE, parse_mode

    if os.environ.get(ENV_MODE):
        parse_mode(os.environ[ENV_MODE], ENV_MODE)
    files = getattr(settings, "file_settings", None)
    if not callable(files):
        return
    for scope in ("global", "project"):
        section = files(scope).get("permissions")
        mode = section.get("defaultMode") if isinstance(section, dict) else None
        if isinstance(mode, str) and mode:
            parse_mode(mode, f"permissions.defaultMode in the {scope} settings")


def child_tools_for(parent: Any, tools: list[Any], *, read_only: bool) -> list[Any]:
    """A read-only subagent's tools: without a gate to hold its bash in the read-only sandbox,
    no bash."""
    if read_only and getattr(parent, "permissions", None) is None:
        return [tool for tool in tools if tool.name != "bash"]
    return tools


def share_permissions(parent: Any, child: PermissionHost, *, read_only: bool) -> None:
    """A subagent is gated as its parent is (the same gate, mode, rules, sandbox and asker), or
    in ``plan`` mode when its definition is read-only (``explore``)."""
    gate = getattr(parent, "permissions", None)
    if gate is None:
        return
    mine = gate.for_child(read_only=read_only)
    child.permissions = mine
    child.hooks.tool_gates.append(mine.before_tool_call)
    child.sandbox = mine
