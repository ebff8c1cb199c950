"""Building a session's permission gate from the settings, the trust decision and the mode's
options (what ``sdk.create_agent_session(permissions=…)`` calls)."""

from __future__ import annotations

import shutil
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pi_tui.core.exit_cleanup import at_exit
from pi_tui.permissions.config import PermissionSettings, permission_settings
from pi_tui.permissions.gate import PendingSandbox, PermissionGate, Scope
from pi_tui.permissions.modes import Mode, ModeChoice, choose_mode
from pi_tui.permissions.options import PermissionOptions
from pi_tui.permissions.sandbox import (
    Preflight,
    SandboxPolicy,
    SandboxRuntime,
    new_temp_dir,
    run_preflight,
)

_PREFLIGHTS: dict[str, Preflight] = {}
"""One preflight per run (per process), whatever the number of sessions."""
_PREFLIGHT_LOCK = threading.Lock()


def preflight_for(policy: SandboxPolicy) -> Preflight:
    """The run's preflight, run by the first gate that needs it."""
    with _PREFLIGHT_LOCK:
        cached = _PREFLIGHTS.get("bwrap")
        if cached is None:
            cached = _PREFLIGHTS["bwrap"] = run_preflight(policy)
    return cached


def build_gate(options: PermissionOptions, *, cwd: Path, agent_dir: Path, settings: Any, trusted: bool,
               on_event: Callable[[dict[str, Any]], None] | None = None,
               stop_turn: Callable[[], None] | None = None,
               notify: Callable[[str], None] | None = None) -> PermissionGate:
    """The session's gate. bwrap's preflight is not run here: the gate runs it when something
    first needs its answer (print mode: the first bash or edit call; none at all for a run
    without one). ``notify`` gets what is learnt then ("no sandbox: …")."""
    home = Path.home()
    files = getattr(settings, "file_settings", None)
    global_file = files("global") if callable(files) else {}
    project_file = files("project") if callable(files) else {}
    global_source = str(getattr(settings, "global_path", None) or "the global settings")
    project_source = str(getattr(settings, "project_path", None) or "the project settings")
    config = permission_settings(global_file, project_file, trusted=trusted, home=home, project=cwd,
                                 global_source=global_source, project_source=project_source)
    options.notices.extend(config.errors)
    temp = new_temp_dir()
    at_exit(shutil.rmtree, temp, True)
    policy = SandboxPolicy(project=cwd, temp_dir=temp, home=home, agent_dir=agent_dir,
                           allow_write=config.allow_write, deny_read=config.deny_read, network=config.network,
                           domains=config.domains)

    def choice_for(sandbox_ok: bool) -> ModeChoice:
        return choose_mode(flag=options.mode, flag_name=options.mode_source, settings_modes=config.modes,
                           trusted=trusted, sandbox_ok=sandbox_ok)

    working, failing = choice_for(True), choice_for(False)
    if working.warning:
        options.notices.append(working.warning)
    known = working.mode if working.mode == failing.mode else None

    def resolve() -> tuple[SandboxRuntime | None, str]:
        preflight = preflight_for(policy)
        return (SandboxRuntime(policy, preflight) if preflight.ok else None), preflight.message

    def mode_for(sandbox_ok: bool) -> tuple[Mode, str]:
        choice = working if sandbox_ok else failing
        return choice.mode, choice.source

    bypass = known == "bypassPermissions"
    gate = PermissionGate(mode=known, settings=config, cwd=cwd, home=home, trusted=trusted, sandbox=None,
                          sandbox_problem="bypassPermissions: no sandbox" if bypass else "", asker=options.asker,
                          headless_reason=options.headless_reason, write_rule=_rule_writer(settings),
                          on_event=on_event, stop_turn=stop_turn, policy=policy,
                          pending=None if bypass else PendingSandbox(resolve, mode_for, notify), probe=resolve)
    gate.mode_source = working.source
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
