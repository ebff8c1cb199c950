"""Where MCP servers are configured, and the one cheap check made at every start: without any of
these files (and no ``--mcp-config``, no editor servers) nothing else of MCP is imported."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

Scope = Literal["user", "project", "flag", "editor"]
USER_FILE = "mcp.json"
PROJECT_FILES = (".mcp.json", ".pi/mcp.json")


def config_files(cwd: Path, agent_dir: Path, extra: Sequence[Path] = ()) -> list[tuple[Path, Scope]]:
    """Every file that may hold servers, in the order they apply (later wins)."""
    found: list[tuple[Path, Scope]] = [(agent_dir / USER_FILE, "user")]
    found += [(cwd / name, "project") for name in PROJECT_FILES]
    found += [(Path(p), "flag") for p in extra]
    return found


def any_config(cwd: Path, agent_dir: Path, extra: Sequence[Path] = ()) -> bool:
    """Whether any file exists (a stat each)."""
    return bool(extra) or any(os.path.lexists(p) for p, _scope in config_files(cwd, agent_dir))
