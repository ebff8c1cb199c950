"""``pi-tui mcp list|add|remove`` (docs/mcp.md).

``list`` starts every configured server (a project's only when the project is trusted), waits
for each at most its start-up timeout, and prints its state, tools and what their definitions
cost in tokens. ``add`` and ``remove`` edit the user's file, ``<agentDir>/mcp.json``, keeping
whatever else is in it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

from pi_tui.core.terminal_text import printable


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="pi-tui mcp", description="MCP servers: list, add, remove")
    sub = p.add_subparsers(dest="command", required=True)
    listing = sub.add_parser("list", help="servers, state, tools and their token cost")
    listing.add_argument("--json", action="store_true")
    listing.add_argument("--mcp-config", dest="mcp_config", action="append", default=[], metavar="FILE")
    listing.add_argument("--trust-project", dest="trust_project", action="store_true")
    add = sub.add_parser("add", help="add a server to <agentDir>/mcp.json",
                         description="pi-tui mcp add NAME -- COMMAND [ARGS…]   or   pi-tui mcp add NAME --url URL")
    add.add_argument("name")
    add.add_argument("--url")
    add.add_argument("--transport", choices=["stdio", "http", "sse"])
    add.add_argument("--env", action="append", default=[], metavar="KEY=VALUE")
    add.add_argument("--header", action="append", default=[], metavar="NAME: VALUE")
    remove = sub.add_parser("remove", help="remove a server from <agentDir>/mcp.json")
    remove.add_argument("name")
    return p


def run_mcp_command(argv: list[str]) -> int:
    command_line: list[str] = []
    if "--" in argv:  # everything after -- is the server's command line, options included
        at = argv.index("--")
        argv, command_line = argv[:at], argv[at + 1:]
    args = _parser().parse_args(argv)
    args.command_line = command_line
    from pi_tui.resources.locations import agent_dir

    agent = agent_dir()
    if args.command == "list":
        return asyncio.run(_list(Path.cwd(), agent, args))
    path = agent / "mcp.json"
    try:
        data = _read_user_file(path)
    except ValueError as error:
        print(f"pi-tui: {error}", file=sys.stderr)
        return 1
    servers = data.setdefault("mcpServers", {})
    if args.command == "remove":
        if args.name not in servers:
            print(f"pi-tui: no server '{args.name}' in {path}", file=sys.stderr)
            return 1
        del servers[args.name]
        _write(path, data)
        print(f"Removed MCP server '{args.name}' from {path}")
        return 0
    entry = _entry(args)
    if isinstance(entry, str):
        print(f"pi-tui: {entry}", file=sys.stderr)
        return 1
    replaced = args.name in servers
    servers[args.name] = entry
    _write(path, data)
    print(f"{'Replaced' if replaced else 'Added'} MCP server '{args.name}' in {path}")
    return 0


def _entry(args: argparse.Namespace) -> dict[str, Any] | str:
    command = list(args.command_line)
    entry: dict[str, Any] = {}
    if args.url:
        if command:
            return "give either --url or a command after --, not both"
        entry = {"type": args.transport if args.transport in ("http", "sse") else "http", "url": args.url}
    elif command:
        entry = {"command": command[0], "args": command[1:]}
    else:
        return "give the server's command after -- (pi-tui mcp add NAME -- npx -y pkg) or --url URL"
    env = {}
    for pair in args.env:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            return f"--env {pair!r}: expected KEY=VALUE"
        env[key] = value
    headers = {}
    for pair in args.header:
        key, sep, value = pair.partition(":")
        if not sep or not key.strip():
            return f"--header {pair!r}: expected 'Name: value'"
        headers[key.strip()] = value.strip()
    if env:
        entry["env"] = env
    if headers:
        entry["headers"] = headers
    return entry


def _read_user_file(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, RecursionError) as error:
        raise ValueError(f"{path}: bad JSON ({error}); not changed") from None
    if not isinstance(data, dict) or not isinstance(data.get("mcpServers", {}), dict):
        raise ValueError(f"{path}: expected {{\"mcpServers\": {{…}}}}; not changed")
    return data


def _write(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    os.chmod(tmp, 0o600)  # env values and headers may hold tokens
    os.replace(tmp, path)


async def _list(cwd: Path, agent: Path, args: argparse.Namespace) -> int:
    from pi_tui.mcp.names import tool_name
    from pi_tui.mcp.setup import build_manager
    from pi_tui.resources.settings import load_settings
    from pi_tui.sdk import project_trust

    settings = load_settings(cwd, agent)
    trust = project_trust(cwd, agent, settings, True if args.trust_project else None)
    manager = build_manager(cwd, agent, project_trusted=trust.trusted, extra_files=[Path(f) for f in args.mcp_config],
                            settings=settings)
    if manager is None:
        print("No MCP servers configured (docs/mcp.md: <agentDir>/mcp.json, .mcp.json, .pi/mcp.json)")
        return 0
    try:
        await manager.wait_started()
        rows = manager.state()
        for row in rows:
            connection = manager.connections.get(row["name"])
            row["toolNames"] = sorted(tool_name(row["name"], t.name) for t in connection.allowed_tools) if connection else []
    finally:
        await manager.close()
    for message in manager.diagnostics:
        print(f"pi-tui: {printable(message)}", file=sys.stderr)
    if args.json:
        print(json.dumps(rows, indent=2, ensure_ascii=False))
        return 0
    for row in rows:
        head = f"{row['name']}  {row['status']}  {row['transport']}  ({row['scope']}: {row['source']})"
        print(printable(head))
        if row["status"] == "connected":
            print(f"  {row['tools']} tools, ~{row['toolTokens']} tokens of definitions; {row['prompts']} prompts"
                  f"{'; ' + printable(row['server']) if row['server'] else ''}")
            for name in row["toolNames"]:
                print(f"    {printable(name)}")
        if row["error"]:
            print(f"  error: {printable(row['error'])}")
        if row["log"]:
            print(f"  log: {row['log']}")
    return 0
