"""The runner's rules as the real agent loop applies them (through ``create_agent_session``)."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

from pi_tui.core.tool import FunctionTool, ToolResult, text_result
from pi_tui.sdk import create_agent_session
from pi_tui.testing.scripted import ScriptedProvider


def extension(tmp_path: Path, source: str) -> str:
    path = tmp_path / "ext.py"
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    return str(path)


def recording_tool(name: str, calls: list[dict[str, Any]], output: str) -> FunctionTool:
    async def run(call_id: str, args: dict[str, Any], ctx: Any) -> ToolResult:
        calls.append(args)
        return text_result(output)

    return FunctionTool(name=name, description=name, parameters={"type": "object", "properties": {"x": {"type": "string"}}}, run=run)


def tool_results(session: Any) -> list[dict[str, Any]]:
    return [m for m in session.session_manager.build_session_context().messages if m["role"] == "toolResult"]


SOURCE = """
    def register(pi):
        @pi.on("tool_call")
        def gate(event):
            if event["toolName"] == "danger":
                return {"block": True, "reason": "danger is disabled here"}
            if event["input"].get("x") == "explode":
                raise RuntimeError("gate crashed")

        @pi.on("tool_result")
        def redact(event):
            text = event["content"][0]["text"]
            if "secret" in text:
                return {"content": [{"type": "text", "text": text.replace("secret", "[redacted]")}], "details": {"redacted": True}}

        @pi.on("message_end")
        def sign(event):
            message = event["message"]
            if message["role"] == "assistant" and message["content"] and message["content"][0]["type"] == "text":
                return {"message": {**message, "content": [{"type": "text", "text": message["content"][0]["text"] + " -- signed"}]}}
"""


async def test_tool_gate_result_rewrite_and_message_replacement(project: Path, tmp_path: Path) -> None:
    danger_calls: list[dict[str, Any]] = []
    safe_calls: list[dict[str, Any]] = []
    turns = [
        {"tool_calls": [
            {"id": "c1", "name": "danger", "arguments": {"x": "1"}},
            {"id": "c2", "name": "safe", "arguments": {"x": "2"}},
            {"id": "c3", "name": "safe", "arguments": {"x": "explode"}},
        ]},
        {"text": "all done"},
    ]
    session = create_agent_session(
        cwd=project, provider=ScriptedProvider(turns), no_session=True,
        tools=[recording_tool("danger", danger_calls, "boom"), recording_tool("safe", safe_calls, "the secret is 42")],
        extension_paths=[extension(tmp_path, SOURCE)],
    )
    errors: list[dict[str, Any]] = []
    session.subscribe(lambda e: errors.append(e) if e.get("type") == "extension_error" else None)
    await session.prompt("go")
    assert danger_calls == []
    assert safe_calls == [{"x": "2"}]
    results = {m["toolCallId"]: m for m in tool_results(session)}
    assert results["c1"]["isError"] and "danger is disabled here" in results["c1"]["content"][0]["text"]
    assert not results["c2"]["isError"]
    assert results["c2"]["content"][0]["text"] == "the [redacted] is 42"
    assert results["c2"].get("details") == {"redacted": True}
    assert results["c3"]["isError"] and "gate crashed" in results["c3"]["content"][0]["text"]
    assert [(e["event"], e["error"]) for e in errors] == [("tool_call", "RuntimeError: gate crashed")]
    final = session.session_manager.build_session_context().messages[-1]
    assert final["role"] == "assistant" and final["content"][0]["text"] == "all done -- signed"


async def test_input_and_before_agent_start_messages(project: Path, tmp_path: Path) -> None:
    source = """
        def register(pi):
            pi.on("input", lambda e: {"action": "handled"} if e["text"] == "ping" else {"action": "transform", "text": e["text"] + " please"})
            pi.on("before_agent_start", lambda e: {"message": {"customType": "reminder", "content": "Remember the style guide.", "display": False}})
    """
    provider = ScriptedProvider([{"text": "ok"}])
    session = create_agent_session(cwd=project, provider=provider, no_session=True, tools=[],
                                   extension_paths=[extension(tmp_path, source)])
    await session.prompt("ping")
    assert provider.requests == []
    await session.prompt("fix the bug")
    roles = [(m["role"], m.get("customType")) for m in session.session_manager.build_session_context().messages]
    assert roles == [("user", None), ("custom", "reminder"), ("assistant", None)]
    sent = [m["content"] for m in provider.requests[0].messages]
    assert sent[0][0]["text"] == "fix the bug please"
    assert "Remember the style guide." in str(sent[1])
