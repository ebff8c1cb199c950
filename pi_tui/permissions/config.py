"""The ``permissions`` and ``sandbox`` settings of one run, from the global and project files.

What a project's ``.pi/settings.json`` may do before it is trusted: add ``deny`` and ``ask``
rules, hide more paths (``sandbox.denyRead``), turn the network off. Its ``allow`` rules,
``defaultMode``, ``sandbox.allowWrite`` and a network more open than the global setting count
only once it is trusted. ``sandbox.allowUnsandboxed`` (run bash without a sandbox in print/JSON
/RPC mode when bwrap cannot run) is read from the global file only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pi_tui.permissions.rules import RuleSet, rules_from_settings
from pi_tui.permissions.sandbox import Network

DEFAULT_NETWORK: Network = "on"
"""Package installs and ``git fetch`` keep working (pi users expect them); plan mode is always off."""


@dataclass(slots=True)
class PermissionSettings:
    """The run's permission and sandbox settings, the project's counted as its trust allows."""

    rules: RuleSet
    modes: list[tuple[str, str]]
    """``permissions.defaultMode`` values with their file, project first."""
    network: Network = DEFAULT_NETWORK
    domains: tuple[str, ...] = ()
    """A domain list given for ``sandbox.network``: network off but the domain proxy (``proxy.py``)."""
    allow_write: tuple[Path, ...] = ()
    deny_read: tuple[Path, ...] = ()
    allow_unsandboxed: bool = False
    errors: list[str] = field(default_factory=list)


def _section(settings: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = settings.get(key)
    return value if isinstance(value, dict) else {}


def _paths(value: Any, base: Path, home: Path, where: str, errors: list[str]) -> list[Path]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        errors.append(f"{where} must be a list of paths")
        return []
    found = []
    for entry in value:
        text = entry.strip()
        if not text:
            continue
        path = home / text[2:] if text.startswith("~/") else home if text == "~" else Path(text)
        found.append(path if path.is_absolute() else base / path)
    return found


def _network(value: Any, where: str, errors: list[str]) -> tuple[Network, tuple[str, ...]] | None:
    if value is None:
        return None
    if value in ("off", "on"):
        return value, ()
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "off", tuple(v.strip().lower() for v in value if v.strip())
    errors.append(f'{where} must be "off", "on" or a list of domains')
    return None


def permission_settings(global_settings: Mapping[str, Any], project_settings: Mapping[str, Any], *, trusted: bool,
                        home: Path, project: Path, global_source: str, project_source: str) -> PermissionSettings:
    errors: list[str] = []
    rules = rules_from_settings([(global_settings, global_source, True), (project_settings, project_source, trusted)],
                                home, project, errors)
    modes: list[tuple[str, str]] = []
    for settings, source in ((project_settings, project_source), (global_settings, global_source)):
        mode = _section(settings, "permissions").get("defaultMode")
        if isinstance(mode, str) and mode:
            modes.append((mode, source))
        elif mode is not None:
            errors.append(f"permissions.defaultMode in {source} must be a string")
    result = PermissionSettings(rules, modes, errors=errors)
    g_box, p_box = _section(global_settings, "sandbox"), _section(project_settings, "sandbox")
    chosen = _network(g_box.get("network"), f"sandbox.network in {global_source}", errors)
    if chosen is not None:
        result.network, result.domains = chosen
    project_network = _network(p_box.get("network"), f"sandbox.network in {project_source}", errors)
    if project_network is not None and (trusted or project_network == ("off", ())):
        result.network, result.domains = project_network
    result.allow_write = tuple(_paths(g_box.get("allowWrite"), project, home, f"sandbox.allowWrite in {global_source}",
                                      errors))
    if trusted:
        result.allow_write += tuple(_paths(p_box.get("allowWrite"), project, home,
                                           f"sandbox.allowWrite in {project_source}", errors))
    result.deny_read = tuple(_paths(g_box.get("denyRead"), project, home, f"sandbox.denyRead in {global_source}", errors)
                             + _paths(p_box.get("denyRead"), project, home, f"sandbox.denyRead in {project_source}",
                                      errors))
    result.allow_unsandboxed = g_box.get("allowUnsandboxed") is True
    return result
