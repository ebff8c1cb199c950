"""Shared helpers for the MCP tests: config files, sessions on the scripted provider, the real
servers' paths (installed by ``make mcp-servers`` into ``.mcp-servers/``; tests skip, saying so,
when they are missing)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = Path(__file__).with_name("hostile_server.py")
SERVERS = ROOT / ".mcp-servers"
EVERYTHING = SERVERS / "npm" / "node_modules" / ".bin" / "mcp-server-everything"
FILESYSTEM = SERVERS / "npm" / "node_modules" / ".bin" / "mcp-server-filesystem"
TIME = SERVERS / "time" / "bin" / "mcp-server-time"


def hostile(mode: str = "normal", n: int = 1, **extra: Any) -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(HOSTILE), mode, str(n)], **extra}


def write_servers(path: Path, servers: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    return path


def need(binary: Path) -> None:
    if not binary.exists():
        pytest.skip(f"MCP SERVER MISSING: {binary} is not installed — run `make mcp-servers` (needs npm and the "
                    "registries) to test against the real server")


def session_with(project: Path, agent_dir: Path, turns: list[dict[str, Any]], **kwargs: Any) -> Any:
    from pi_tui.core.provider import ModelInfo
    from pi_tui.sdk import create_agent_session
    from pi_tui.testing.scripted import ScriptedProvider

    provider = ScriptedProvider(turns)
    kwargs.setdefault("model", ModelInfo(provider="scripted", id="scripted-vision", name="Scripted",
                                         input=("text", "image"), context_window=kwargs.pop("context_window", 128_000)))
    session = create_agent_session(cwd=project, agent_dir=agent_dir, provider=provider, settings=kwargs.pop("settings", {}),
                                   load_extensions=False, no_session=kwargs.pop("no_session", True), **kwargs)
    return session, provider


def tool_names(request: Any) -> list[str]:
    return [t.name for t in request.tools]


def result_texts(session: Any) -> list[str]:
    return ["".join(b.get("text", "") for b in m["content"] if b.get("type") == "text")
            for m in session.messages if m["role"] == "toolResult"]
