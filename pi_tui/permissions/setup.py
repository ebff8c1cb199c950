"""Building a session's permission gate from the settings, the trust decision and the mode's
options (what ``sdk.create_agent_session(permissions=…)`` calls)."""

from __future__ import annotations

import atexit
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pi_tui.permissions.config import PermissionSettings, permission_settings
from pi_tui.permissions.gate import Asker, PermissionGate, Scope
from pi_tui.permissions.modes import ModeChoice, choose_mode
from pi_tui.permissions.sandbox import (
    Preflight,
    SandboxPolicy,
    SandboxRuntime,
    new_temp_dir,
    run_preflight,
)

_PREFLIGHTS: dict[str, Preflight] = {}
"""One preflight per run (per process), whatever the number of sessions."""


@dataclass(slots=True)
class PermissionOptions:
    """What the mode (CLI, TUI, RPC, ACP) tells the SDK about permissions."""

    mode: str | None = None
    """``--permission-mode`` / ``--yolo`` for this run (None: environment, settings, defaults)."""
    mode_source: str = "--permission-mode"
    asker: Asker | None = None
    """Who answers questions; None: every question is a denial (print/JSON)."""
    ask_through_session: bool = False
    """Ask through the session's dialogs (``AgentSession.ask_user``: TUI, RPC, ACP) when no ``asker``."""
    ask_timeout_s: float | None = None
    """How long a question waits (RPC: then it is a denial); None: as long as the person takes."""
    headless_reason: str = "nobody can answer in this mode"
    notices: list[str] = field(default_factory=list)
    """Filled by ``build_gate``: lines for the user (a warning, the missing sandbox)."""


def preflight_for(policy: SandboxPolicy) -> Preflight:
    cached = _PREFLIGHTS.get("bwrap")
    if cached is None:
        cached = _PREFLIGHTS["bwrap"] = run_preflight(policy)
    return cached


def build_gate(options: PermissionOptions, *, cwd: Path, agent_dir: Path, settings: Any, trusted: bool,
               on_event: Callable[[dict[str, Any]], None] | None = None,
               stop_turn: Callable[[], None] | None = None) -> PermissionGate:
    home = Path.home()
    files = getattr(settings, "file_settings", None)
    global_file = files("global") if callable(files) else {}
    project_file = files("project") if callable(files) else {}
    global_source = str(getattr(settings, "global_path", None) or "the global settings")
    project_source = str(getattr(settings, "project_path", None) or "the project settings")
    config = permission_settings(global_file, project_file, trusted=trusted, home=home, project=cwd,
                                 global_source=global_source, project_source=project_source)
    options.notices.extend(config.errors)
    if config.domains:
        options.notices.append("sandbox.network lists domains, but the domain proxy is not built yet: "
                               "the network is off in the sandbox")
    temp = new_temp_dir()
    atexit.register(shutil.rmtree, temp, True)
    policy = SandboxPolicy(project=cwd, temp_dir=temp, home=home, agent_dir=agent_dir,
                           allow_write=config.allow_write, deny_read=config.deny_read, network=config.network)
    wants_bypass = (options.mode or os.environ.get("PI_PERMISSION_MODE") or "") == "bypassPermissions"
    preflight = Preflight(False, "bypassPermissions: no sandbox") if wants_bypass else preflight_for(policy)
    choice: ModeChoice = choose_mode(flag=options.mode, flag_name=options.mode_source, settings_modes=config.modes,
                                     trusted=trusted, sandbox_ok=preflight.ok)
    if choice.warning:
        options.notices.append(choice.warning)
    sandbox = SandboxRuntime(policy, preflight) if preflight.ok else None
    if sandbox is None and choice.mode != "bypassPermissions":
        options.notices.append(f"no sandbox: {preflight.message}; bash asks every time"
                               + ("" if options.asker is not None else " (here: is denied)"))
    gate = PermissionGate(mode=choice.mode, settings=config, cwd=cwd, home=home, trusted=trusted, sandbox=sandbox,
                          sandbox_problem=preflight.message, asker=options.asker,
                          headless_reason=options.headless_reason, write_rule=_rule_writer(settings),
                          on_event=on_event, stop_turn=stop_turn)
    gate.mode_source = choice.source
    return gate


def _rule_writer(settings: Any) -> Callable[[Scope, str], None] | None:
    files = getattr(settings, "file_settings", None)
    if not callable(files):
        return None

    def write(scope: Scope, rule: str) -> None:
        current = files("global" if scope == "user" else "project")
        section = current.get("permissions") if isinstance(current.get("permissions"), dict) else {}
        allow = [r for r in section.get("allow", []) if isinstance(r, str)] if isinstance(section, dict) else []
        if rule not in allow:
            allow.append(rule)
        setter = settings.set_global if scope == "user" else settings.set_project
        setter(("permissions", "allow"), allow)

    return write


__all__ = ["PermissionOptions", "PermissionSettings", "build_gate"]
