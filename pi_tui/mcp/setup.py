"""From config files and the trust decision to a manager (or None: nothing configured, and then
nothing of the SDK, nor of this package beyond ``config``, is imported).

A project's servers (``.mcp.json``, ``.pi/mcp.json``) are project code: ``project_code`` lists
them for the trust dialog (``resources/trust.py``), each described by its full command line,
cwd, env names and URL and trusted by that text — a changed command or URL is new code and asks
again. Until the project is trusted they are not started and their ``${VAR}``s are not expanded.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pi_tui.mcp.config import McpConfig, ServerConfig, load_config
from pi_tui.mcp.files import any_config
from pi_tui.resources.trust import ProjectCode

LOG_FOLDER = "mcp-logs"


def project_code(cwd: Path, agent_dir: Path) -> list[ProjectCode]:
    """The project's enabled servers as trust items (nothing read when no file exists)."""
    if not any_config(cwd, agent_dir):
        return []
    config = load_config(cwd, agent_dir)
    return [server_code(s, cwd) for s in config.servers.values() if s.is_project and not s.disabled]


def server_code(server: ServerConfig, cwd: Path) -> ProjectCode:
    try:
        where = str(server.source.relative_to(cwd))
    except ValueError:
        where = str(server.source)
    return ProjectCode("mcp server", where, f"{server.name}: {server.describe()}")


def build_manager(cwd: Path, agent_dir: Path, *, project_trusted: bool, extra_files: Sequence[Path] = (),
                  editor_servers: Sequence[ServerConfig] = (), environ: Mapping[str, str] | None = None,
                  settings: Any = None, elicit: Any = None) -> Any:
    """An ``McpManager`` for the configured servers, not started; None when there are none."""
    if not editor_servers and not any_config(cwd, agent_dir, extra_files):
        return None
    config = load_config(cwd, agent_dir, extra_files)
    for server in editor_servers:
        config.servers[server.name] = server
    if not config.servers and not config.diagnostics:
        return None
    return manager_for(config, cwd, agent_dir, project_trusted=project_trusted,
                       environ=os.environ if environ is None else environ, settings=settings, elicit=elicit)


def manager_for(config: McpConfig, cwd: Path, agent_dir: Path, *, project_trusted: bool,
                environ: Mapping[str, str], settings: Any = None, elicit: Any = None) -> Any:
    from pi_tui.mcp.manager import DEFAULT_CONTEXT_SHARE, McpManager

    diagnostics = list(config.diagnostics)
    started: list[ServerConfig] = []
    skipped: list[ServerConfig] = []
    for server in config.servers.values():
        if server.is_project and not project_trusted:
            skipped.append(server)  # not started, not expanded
            continue
        try:
            started.append(server.expand(environ))
        except ValueError as error:
            diagnostics.append(f"{error} (server not started)")
    share = DEFAULT_CONTEXT_SHARE
    value = _setting(settings, "mcp.maxContextShare", None)
    if isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value <= 1:
        share = float(value)
    if skipped:
        names = ", ".join(s.name for s in skipped)
        diagnostics.append(f"MCP servers of the project not started ({names}): the project is not trusted "
                           "(trust it with --trust-project or /trust)")
    return McpManager(started, cwd=cwd, log_dir=agent_dir / LOG_FOLDER, skipped=skipped, diagnostics=diagnostics,
                      elicit=elicit, context_share=share)


def _setting(settings: Any, key: str, default: Any) -> Any:
    get = getattr(settings, "get", None)
    if callable(get):
        try:
            return get(key, default)
        except TypeError:
            return default
    return default
