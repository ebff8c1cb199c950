"""``sourceInfo`` for RPC ``get_commands``: where a command's resource came from, in the shape
pi 0.73.1's client types declare (``SourceInfo`` in ``core/source-info.d.ts``)::

    {"path": str, "source": str, "scope": "user" | "project" | "temporary",
     "origin": "package" | "top-level", "baseDir"?: str}

The values are what pi reports for the same places (measured with pi's own ``RpcClient``):

==========================================  =========  =========  =========================
where                                       source     scope      baseDir
==========================================  =========  =========  =========================
``<agentDir>/prompts|skills|extensions``    auto       user       the agent dir
``<cwd>/.pi/prompts|skills|extensions``     auto       project    ``<cwd>/.pi``
a path listed in a settings file            local      that file  —
``--prompt-template`` / ``--skill`` path    local      temporary  the file's folder
``-e`` extension                            cli        temporary  —
==========================================  =========  =========  =========================

A prompt or skill an extension returned from ``resources_discover`` is pi's
``{source: "extension:<name>", scope: "temporary", origin: "top-level", baseDir: <the
extension's folder>}``, ``<name>`` being the extension's file name without ``.py`` (pi: without
``.ts``/``.js``). A package extension is named after its folder and its ``baseDir`` is that
folder (pi's folder extension is its ``index.ts``, so pi would say ``extension:index``).
Extension commands carry the extension's own ``sourceInfo`` (the table) with the top-level
``source: "extension"``.

pi-tui has one source pi lacks: the prompts and skills it ships (``source: "builtin"``,
``origin: "package"``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pi_tui.resources.locations import project_dir

_SETTINGS_SCOPE = {"global": "user", "project": "project"}


def _info(path: Path, source: str, scope: str, origin: str = "top-level", base_dir: Path | None = None) -> dict[str, Any]:
    info: dict[str, Any] = {"path": str(path), "source": source, "scope": scope, "origin": origin}
    if base_dir is not None:
        info["baseDir"] = str(base_dir)
    return info


def _under(path: Path, folder: Path) -> bool:
    try:
        path.resolve().relative_to(folder.resolve())
    except (ValueError, OSError):
        return False
    return True


def _settings_scope(path: Path, settings: Any, key: str) -> str | None:
    """``user`` or ``project``: the settings file that listed ``path`` (or a folder above it)."""
    entries = getattr(settings, "resource_entries", None)
    if not callable(entries):
        return None
    for listed, scope in entries(key):
        if _under(path, listed):
            return _SETTINGS_SCOPE.get(scope)
    return None


def resource_source_info(path: Path, source: str, *, kind: str, cwd: Path, agent_dir: Path,
                         settings: Any = None, base_dir: Path | None = None,
                         extension: Path | None = None) -> dict[str, Any]:
    """A prompt template's or skill's ``sourceInfo``. ``source`` is pi-tui's loader label
    (``user``, ``project``, ``settings``, ``path``, ``extension``, ``builtin``); ``kind`` is the
    settings key (``prompts`` or ``skills``); ``extension`` is the extension that returned the
    path from ``resources_discover``."""
    if source == "user":
        return _info(path, "auto", "user", base_dir=agent_dir)
    if source == "project":
        return _info(path, "auto", "project", base_dir=project_dir(cwd))
    if source == "settings":
        return _info(path, "local", _settings_scope(path, settings, kind) or "user")
    if source == "builtin":
        return _info(path, "builtin", "temporary", "package", base_dir or path.parent)
    if source == "extension" and extension is not None:
        name = extension.name if extension.is_dir() else extension.name.removesuffix(".py")
        return _info(path, f"extension:{name}", "temporary",
                     base_dir=extension if extension.is_dir() else extension.parent)
    return _info(path, "local", "temporary", base_dir=base_dir or path.parent)


def extension_source_info(path: Path, *, cwd: Path, agent_dir: Path, settings: Any = None) -> dict[str, Any]:
    """An extension command's ``sourceInfo`` (that of the extension that registered it)."""
    if _under(path, agent_dir / "extensions"):
        return _info(path, "auto", "user", base_dir=agent_dir)
    if _under(path, project_dir(cwd) / "extensions"):
        return _info(path, "auto", "project", base_dir=project_dir(cwd))
    scope = _settings_scope(path, settings, "extensions")
    if scope is not None:
        return _info(path, "local", scope)
    return _info(path, "cli", "temporary")
