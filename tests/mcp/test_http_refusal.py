"""A remote server that wants a sign-in (HTTP 401) fails at once with a reason the user can act
on — OAuth is not supported yet — instead of the SDK's bare "error response"."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest

from tests.mcp.conftest import session_with, write_servers


class _Refuse(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.send_response(401)
        self.send_header("WWW-Authenticate", 'Bearer realm="mcp"')
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_POST

    def log_message(self, *args: object) -> None:
        return


@pytest.fixture
def refusing_url() -> Iterator[str]:
    server = HTTPServer(("127.0.0.1", 0), _Refuse)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/mcp"
    finally:
        server.shutdown()
        server.server_close()


async def test_a_401_says_a_sign_in_is_wanted_and_oauth_is_not_there_yet(
        project: Path, agent_dir: Path, refusing_url: str) -> None:
    write_servers(agent_dir / "mcp.json", {"remote": {"type": "http", "url": refusing_url}})
    session, _provider = session_with(project, agent_dir, [{"text": "hi"}])
    notes: list[str] = []
    session.subscribe(lambda e: notes.append(e["message"]) if e.get("type") == "notify" else None)
    try:
        await session.prompt("go")
    finally:
        await session.mcp.close()
    error = session.mcp.connections["remote"].error
    assert error == ('the server answered HTTP 401: it wants a sign-in, and OAuth is not supported yet '
                     '(give a token in "headers", docs/mcp.md)')
    assert any("MCP server 'remote' is not connected (failed: the server answered HTTP 401" in n for n in notes)
