"""Against real MCP servers nobody here wrote (``make mcp-servers`` installs them from the
registries into ``.mcp-servers/``; each test skips, saying so, when its server is missing):
npm's server-everything over stdio, Streamable HTTP and SSE, server-filesystem, PyPI's mcp-server-time."""

from __future__ import annotations

import asyncio
import base64
import io
import json
import os
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from tests.mcp.conftest import (
    EVERYTHING,
    FILESYSTEM,
    TIME,
    need,
    result_texts,
    session_with,
    write_servers,
)


def _tools_bytes(request: Any) -> str:
    return json.dumps([[t.name, t.description, t.parameters] for t in request.tools], sort_keys=False)


def _events(session: Any) -> list[dict[str, Any]]:
    seen: list[dict[str, Any]] = []
    session.subscribe(seen.append)
    return seen


async def test_everything_over_stdio_echo_image_and_structured_content(project: Path, agent_dir: Path, capfd) -> None:
    need(EVERYTHING)
    write_servers(agent_dir / "mcp.json", {"ev": {"command": str(EVERYTHING), "args": ["stdio"]}})
    turns = [
        {"tool_calls": [{"id": "c1", "name": "mcp__ev__echo", "arguments": {"message": "héllo ✓ 日本"}},
                        {"id": "c2", "name": "mcp__ev__get-tiny-image", "arguments": {}},
                        {"id": "c3", "name": "mcp__ev__get-structured-content", "arguments": {"location": "New York"}},
                        {"id": "c4", "name": "mcp__ev__toggle-simulated-logging", "arguments": {}}]},
        {"text": "done"},
    ]
    session, provider = session_with(project, agent_dir, turns)
    try:
        await asyncio.wait_for(session.prompt("go"), 60)
        texts = result_texts(session)
        assert texts[0] == "Echo: héllo ✓ 日本"
        image_result = [m for m in session.messages if m["role"] == "toolResult"][1]
        images = [b for b in image_result["content"] if b["type"] == "image"]
        assert images and images[0]["mimeType"] == "image/png"
        assert base64.b64decode(images[0]["data"])[:8] == b"\x89PNG\r\n\x1a\n"
        sent = json.dumps(provider.requests[1].messages)
        assert images[0]["data"] in sent  # the image reached the request as an image
        assert json.loads(texts[2].splitlines()[-1])["temperature"] is not None
        log = session.mcp.connections["ev"].log.path
        for _ in range(100):  # simulated logging: into the log file, never the terminal
            if "[" in log.read_text() and "] " in log.read_text():
                break
            await asyncio.sleep(0.1)
    finally:
        await session.mcp.close()
    assert "[" in log.read_text()
    out, err = capfd.readouterr()
    assert out == "" and err == ""


async def test_the_tool_list_stays_byte_identical_when_a_server_reconnects_and_lists_again(
        project: Path, agent_dir: Path) -> None:
    need(EVERYTHING)
    write_servers(agent_dir / "mcp.json", {"ev": {"command": str(EVERYTHING), "args": ["stdio"]}})
    turns = [{"tool_calls": [{"id": "c1", "name": "mcp__ev__get-sum", "arguments": {"a": 1, "b": 2}}]},
             {"text": "one"}, {"text": "two"},
             {"tool_calls": [{"id": "c2", "name": "mcp", "arguments": {"action": "search", "query": "sum"}}]},
             {"text": "three"}]
    session, provider = session_with(project, agent_dir, turns)
    events = _events(session)
    try:
        await asyncio.wait_for(session.prompt("first"), 60)
        connection = session.mcp.connections["ev"]
        await connection.reconnect()  # a new session on the server: its conditional tools, list_changed
        assert await connection.wait_started(30)
        await asyncio.wait_for(session.prompt("second"), 60)
        await asyncio.wait_for(session.prompt("third"), 60)
        assert len({_tools_bytes(r) for r in provider.requests}) == 1
        assert len({r.system_prompt for r in provider.requests}) == 1
        assert "mcp__ev__get-sum" in result_texts(session)[-1]
        assert connection.protocol_version == "2025-11-25"  # a 2025 server beside time's 2026 one
        assert any(e.get("type") == "mcp_server" and e.get("status") == "connected" for e in events)
    finally:
        await session.mcp.close()


async def test_progress_reaches_the_tool_panel_then_an_abort_cancels_the_call(project: Path, agent_dir: Path) -> None:
    need(EVERYTHING)
    write_servers(agent_dir / "mcp.json", {"ev": {"command": str(EVERYTHING), "args": ["stdio"]}})
    turns = [{"tool_calls": [{"id": "c1", "name": "mcp__ev__trigger-long-running-operation",
                              "arguments": {"duration": 30, "steps": 30}}]}, {"text": "done"}]
    session, _provider = session_with(project, agent_dir, turns)
    events = _events(session)
    try:
        progressed = asyncio.Event()
        session.subscribe(lambda e: progressed.set() if e.get("type") == "tool_execution_update" else None)
        running = asyncio.ensure_future(session.prompt("go"))
        await asyncio.wait_for(progressed.wait(), 40)
        updates = [e for e in events if e.get("type") == "tool_execution_update"]
        assert updates, "no progress notification reached the tool panel"
        assert "progress 1/30" in json.dumps(updates[0])
        started = time.monotonic()
        await session.abort()
        await asyncio.wait_for(running, 10)
        assert time.monotonic() - started < 5
        assert session.mcp.connections["ev"].status == "connected"  # a cancel, not a dead server
    finally:
        await session.mcp.close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _everything_listening(mode: str, path: str) -> Any:
    """server-everything in its ``streamableHttp`` or ``sse`` mode on a free port: its URL."""
    need(EVERYTHING)
    port = _free_port()
    process = subprocess.Popen([str(EVERYTHING), mode], env={**os.environ, "PORT": str(port)},
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.1)
        else:
            pytest.fail(f"server-everything ({mode}) did not listen within 30 s")
        yield f"http://127.0.0.1:{port}{path}"
    finally:
        process.terminate()
        process.wait(10)


@pytest.fixture
def everything_http() -> Any:
    yield from _everything_listening("streamableHttp", "/mcp")


@pytest.fixture
def everything_sse() -> Any:
    yield from _everything_listening("sse", "/sse")


async def test_everything_over_sse_on_localhost(project: Path, agent_dir: Path, everything_sse: str) -> None:
    write_servers(agent_dir / "mcp.json", {"old": {"type": "sse", "url": everything_sse}})
    turns = [{"tool_calls": [{"id": "c1", "name": "mcp__old__echo", "arguments": {"message": "über SSE"}}]},
             {"text": "done"}]
    session, provider = session_with(project, agent_dir, turns)
    try:
        await asyncio.wait_for(session.prompt("go"), 60)
        assert result_texts(session) == ["Echo: über SSE"]
        connection = session.mcp.connections["old"]
        assert (connection.config.transport, connection.status) == ("sse", "connected")
        assert connection.protocol_version == "2025-11-25"
        assert "mcp__old__get-sum" in [t.name for t in provider.requests[0].tools]
    finally:
        await session.mcp.close()


async def test_everything_over_streamable_http_on_localhost(project: Path, agent_dir: Path, everything_http: str) -> None:
    write_servers(agent_dir / "mcp.json", {"web": {"type": "http", "url": everything_http,
                                                   "headers": {"X-Test": "${HOME}"}}})
    turns = [{"tool_calls": [{"id": "c1", "name": "mcp__web__echo", "arguments": {"message": "über HTTP"}}]},
             {"text": "done"}]
    session, _provider = session_with(project, agent_dir, turns)
    try:
        await asyncio.wait_for(session.prompt("go"), 60)
        assert result_texts(session) == ["Echo: über HTTP"]
        assert session.mcp.connections["web"].protocol_version == "2025-11-25"
    finally:
        await session.mcp.close()


async def test_filesystem_reads_an_image_file_into_an_image_block(project: Path, agent_dir: Path) -> None:
    need(FILESYSTEM)
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (4, 4), (200, 10, 10)).save(buffer, "PNG")
    (project / "red.png").write_bytes(buffer.getvalue())
    write_servers(agent_dir / "mcp.json", {"fs": {"command": str(FILESYSTEM), "args": [str(project)]}})
    turns = [{"tool_calls": [{"id": "c1", "name": "mcp__fs__read_media_file",
                              "arguments": {"path": str(project / "red.png")}}]}, {"text": "done"}]
    session, provider = session_with(project, agent_dir, turns)
    try:
        await asyncio.wait_for(session.prompt("go"), 60)
        result = next(m for m in session.messages if m["role"] == "toolResult")
        images = [b for b in result["content"] if b["type"] == "image"]
        assert not result["isError"], result
        assert images and base64.b64decode(images[0]["data"]) == buffer.getvalue()
        assert images[0]["data"] in json.dumps(provider.requests[1].messages)
    finally:
        await session.mcp.close()


async def test_the_time_server_from_pypi_in_its_own_venv(project: Path, agent_dir: Path) -> None:
    need(TIME)
    write_servers(agent_dir / "mcp.json", {"time": {"command": str(TIME), "args": ["--local-timezone", "UTC"]}})
    turns = [{"tool_calls": [{"id": "c1", "name": "mcp__time__get_current_time", "arguments": {"timezone": "UTC"}}]},
             {"text": "done"}]
    session, _provider = session_with(project, agent_dir, turns)
    try:
        await asyncio.wait_for(session.prompt("go"), 60)
        text = result_texts(session)[0]
        assert '"timezone"' in text and "UTC" in text
        assert session.mcp.connections["time"].protocol_version == "2026-07-28"  # the newest protocol
    finally:
        await session.mcp.close()


async def test_resource_links_and_an_embedded_resource_are_named_in_the_result(project: Path, agent_dir: Path) -> None:
    need(EVERYTHING)
    write_servers(agent_dir / "mcp.json", {"ev": {"command": str(EVERYTHING), "args": ["stdio"]}})
    turns = [{"tool_calls": [{"id": "c1", "name": "mcp__ev__get-resource-links", "arguments": {"count": 2}},
                             {"id": "c2", "name": "mcp__ev__get-resource-reference",
                              "arguments": {"resourceType": "Text", "resourceId": 2}}]},
             {"text": "done"}]
    session, provider = session_with(project, agent_dir, turns)
    try:
        await asyncio.wait_for(session.prompt("go"), 60)
        links, reference = result_texts(session)
        assert "[resource link: Blob Resource 1 demo://resource/dynamic/blob/1" in links
        assert "[resource link: Text Resource 2 demo://resource/dynamic/text/2" in links
        assert "[resource demo://resource/dynamic/text/2]" in reference
        assert "[resource link: Text Resource 2" in json.dumps(provider.requests[1].messages)
    finally:
        await session.mcp.close()
