"""A small MCP server over stdio (JSON-RPC by hand, stdlib only, so it starts fast) that can
misbehave in the ways real servers do. ``python hostile_server.py MODE [N]``:

``normal``       answers everything (tools ``echo``, ``env``, ``big``, ``hang``, ``crash``)
``silent``       reads its input and never answers ``initialize``
``crash``        exits after N tool calls (the N+1th call finds it dead)
``garbage``      prints non-JSON lines and invalid UTF-8 on stdout before each answer
``flood``        writes N megabytes to stderr at start, then answers normally
``ask``          also has the tool ``ask``: it asks the user for a name (``elicitation/create``)
                 and answers with what came back
``changing``     after its first tool call adds the tool ``late`` and sends
                 ``notifications/tools/list_changed`` (after the call's answer)
``racing``       while answering the first ``tools/list`` adds the tool ``early``, sends
                 ``list_changed`` and only then (0.3 s later) the list it had before
``names``        tools whose names need sanitizing: ``a.b c``, one of 80 characters

Tools: ``echo {text}``, ``env`` (its environment as JSON), ``big {mb}`` (one text of that many
megabytes), ``hang`` (never answers; records a cancellation it receives in ``$CANCEL_FILE``).
"""

from __future__ import annotations

import json
import os
import sys
import time

MODE = sys.argv[1] if len(sys.argv) > 1 else "normal"
N = int(sys.argv[2]) if len(sys.argv) > 2 else 1
TOOLS = [
    {"name": "echo", "description": "Echo the text back", "inputSchema": {
        "type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
     "annotations": {"readOnlyHint": True}},
    {"name": "env", "description": "The server's environment", "inputSchema": {"type": "object", "properties": {}}},
    {"name": "big", "description": "A large result", "inputSchema": {
        "type": "object", "properties": {"mb": {"type": "number"}}}},
    {"name": "hang", "description": "Never answers", "inputSchema": {"type": "object", "properties": {}}},
    {"name": "fail", "description": "Reports an error", "inputSchema": {"type": "object", "properties": {}},
     "annotations": {"readOnlyHint": False, "destructiveHint": True}},
]
if MODE == "ask":
    TOOLS.append({"name": "ask", "description": "Asks the user", "inputSchema": {"type": "object", "properties": {}}})
if MODE == "names":
    TOOLS.extend({"name": name, "description": f"tool {name}", "inputSchema": {"type": "object", "properties": {}}}
                 for name in ("a.b c", "t" * 80))
LATE = {"changing": "late", "racing": "early"}
calls = 0
lists = 0
asking: object = None
"""The id of the ``ask`` call waiting for the user's answer."""


def send(message: dict[str, object]) -> None:
    if MODE == "garbage":
        sys.stdout.buffer.write(b"this is not json\n\xff\xfe garbage \x1b[2J\n{\"half\": \n")
    sys.stdout.buffer.write((json.dumps(message) + "\n").encode())
    sys.stdout.flush()


def answer(request: dict[str, object]) -> None:
    global calls, asking, lists
    method = request.get("method")
    rid = request.get("id")
    if method is None and rid == "elicit-1":  # the client's answer to our question
        result = request.get("result") or {}
        assert isinstance(result, dict)
        send({"jsonrpc": "2.0", "id": asking, "result": {"content": [
            {"type": "text", "text": f"answered: {json.dumps(result, sort_keys=True)}"}]}})
        return
    params = request.get("params") or {}
    assert isinstance(params, dict)
    if rid is None:
        if method == "notifications/cancelled" and os.environ.get("CANCEL_FILE"):
            with open(os.environ["CANCEL_FILE"], "a") as fh:
                fh.write(json.dumps(params) + "\n")
        return
    if method == "initialize":
        if MODE == "silent":
            return
        send({"jsonrpc": "2.0", "id": rid, "result": {
            "protocolVersion": params.get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {"listChanged": True} if MODE in LATE else {}}, "serverInfo": {"name": f"hostile-{MODE}", "version": "1"}}})
    elif method == "tools/list":
        lists += 1
        listed = list(TOOLS)
        if MODE == "racing" and lists == 1:
            add_late_tool()
            time.sleep(0.3)
        send({"jsonrpc": "2.0", "id": rid, "result": {"tools": listed}})
    elif method == "tools/call":
        calls += 1
        if MODE == "crash" and calls > N:
            os._exit(3)
        name = params.get("name")
        args = params.get("arguments") or {}
        if name == "hang":
            return
        if name == "ask":
            asking = rid
            send({"jsonrpc": "2.0", "id": "elicit-1", "method": "elicitation/create", "params": {
                "message": "Your name?", "requestedSchema": {
                    "type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}}})
            return
        if name == "echo":
            text = f"echo: {args.get('text')}"
        elif name in ("late", "early", "a.b c", "t" * 80):
            text = f"{name}: ok"
        elif name == "env":
            text = json.dumps(dict(os.environ))
        elif name == "big":
            text = "x" * int(float(args.get("mb", 5)) * 1024 * 1024)
        elif name == "fail":
            send({"jsonrpc": "2.0", "id": rid, "result": {
                "content": [{"type": "text", "text": "it went wrong"}], "isError": True}})
            return
        else:
            send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32602, "message": f"unknown tool {name}"}})
            return
        send({"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": text}]}})
        if MODE == "changing" and calls == 1:
            add_late_tool()
    elif method == "ping":
        send({"jsonrpc": "2.0", "id": rid, "result": {}})
    else:
        send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": f"Method not found: {method}"}})


def add_late_tool() -> None:
    TOOLS.append({"name": LATE[MODE], "description": f"A tool that arrived {LATE[MODE]}",
                  "inputSchema": {"type": "object", "properties": {"x": {"type": "string"}}}})
    send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})


def main() -> None:
    sys.stderr.write(f"hostile server ({MODE}) started\n")
    sys.stderr.flush()
    if MODE == "flood":
        chunk = ("flood " * 1000 + "\n").encode()
        for _ in range(N * 1024 * 1024 // len(chunk)):
            sys.stderr.buffer.write(chunk)
        sys.stderr.flush()
    for line in sys.stdin:
        line = line.strip()
        if line:
            answer(json.loads(line))


if __name__ == "__main__":
    main()
