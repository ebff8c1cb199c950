"""AgentSession with real extensions loaded from disk: commands, input, the per-run system
prompt, message_end replacement, tool hooks and extension tools."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.session.conftest import entries_of

EXTENSION = '''
def register(pi):
    state = {"strict": False}

    def strict(args, ctx):
        state["strict"] = True

    pi.register_command("strict", strict)

    @pi.on("input")
    def shout(event):
        if event["text"].startswith("!!"):
            return {"action": "transform", "text": event["text"][2:].upper()}
        if event["text"] == "swallow":
            return {"action": "handled"}
        return None

    @pi.on("before_agent_start")
    def prompt(event, ctx):
        if state["strict"]:
            state["strict"] = False
            return {"systemPrompt": "STRICT MODE", "message": {"customType": "mode", "content": "strict on"}}
        return None

    @pi.on("tool_call")
    def gate(event):
        if event["input"].get("text") == "forbidden":
            return {"block": True, "reason": "not allowed"}

    @pi.on("message_end")
    def redact(event):
        message = event["message"]
        if message["role"] == "assistant" and any(b.get("text") == "secret" for b in message["content"]):
            return {"message": {**message, "content": [{"type": "text", "text": "[redacted]"}]}}

    def echo(call_id, args, ctx):
        return "echo " + args["text"]

    pi.register_tool(name="echo", description="Echo", parameters={
        "type": "object", "required": ["text"], "properties": {"text": {"type": "string"}}}, execute=echo)
'''


def _install(project: Path) -> None:
    folder = project / ".pi" / "extensions"
    folder.mkdir(parents=True)
    (folder / "policy.py").write_text(EXTENSION)


async def test_command_input_and_per_run_system_prompt(make_session, project: Path) -> None:
    _install(project)
    session, provider, _ = make_session([
        {"tool_calls": [{"id": "e1", "name": "echo", "arguments": {"text": "x"}}]},
        {"text": "first"},
        {"text": "second"},
    ], load_extensions=True)
    assert "echo" in session.get_active_tools()
    await session.prompt("/strict")
    assert provider.requests == []  # a command never reaches the model
    await session.prompt("!!quiet please")
    first, second = provider.requests[0], provider.requests[1]
    assert first.system_prompt == second.system_prompt == "STRICT MODE"  # every call of the run
    assert first.messages[0]["content"][0]["text"] == "QUIET PLEASE"
    assert session.get_system_prompt() != "STRICT MODE"  # restored after the run
    await session.prompt("swallow")
    assert len(provider.requests) == 2
    await session.prompt("normal")
    assert provider.requests[2].system_prompt != "STRICT MODE"
    kinds = [e.get("customType") for e in entries_of(session) if e["type"] == "custom_message"]
    assert kinds == ["mode"]


async def test_tool_gate_and_message_end_replacement(make_session, project: Path) -> None:
    _install(project)
    session, _, events = make_session([
        {"tool_calls": [{"id": "e1", "name": "echo", "arguments": {"text": "forbidden"}}]},
        {"text": "secret"},
    ], load_extensions=True)
    await session.prompt("go")
    result = next(m for m in session.messages if m["role"] == "toolResult")
    assert result["isError"] and result["content"][0]["text"] == "not allowed"
    assert session.messages[-1]["content"][0]["text"] == "[redacted]"
    stored = [e["message"] for e in entries_of(session) if e["type"] == "message"]
    assert stored[-1]["content"][0]["text"] == "[redacted]"
    ends = [e for e in events if e["type"] == "message_end" and e["message"]["role"] == "assistant"]
    assert ends[-1]["message"]["content"][0]["text"] == "[redacted]"


async def test_abort_during_a_tool_is_recorded_consistently(make_session, project: Path) -> None:
    session, _, _ = make_session([
        {"tool_calls": [{"id": "b1", "name": "bash", "arguments": {"command": "sleep 5"}}]},
        {"text": "never"},
    ])
    run = asyncio.ensure_future(session.prompt("go"))
    for _ in range(200):
        await asyncio.sleep(0.01)
        if any(m["role"] == "assistant" for m in session.messages[1:]):
            break
    await asyncio.sleep(0.1)
    await session.abort()
    await asyncio.wait_for(run, 5)
    roles = [m["role"] for m in session.messages]
    assert roles == ["user", "assistant", "toolResult", "assistant"]
    assert session.messages[2]["isError"] is True
    assert session.messages[-1]["stopReason"] == "aborted"
    stored = [e["message"]["role"] for e in entries_of(session) if e["type"] == "message"]
    assert stored == roles


async def test_model_and_thinking_selection_reach_extensions(make_session, project: Path) -> None:
    folder = project / ".pi" / "extensions"
    folder.mkdir(parents=True)
    (folder / "watch.py").write_text(
        "seen = []\n"
        "def register(pi):\n"
        "    pi.on('thinking_level_select', lambda e: seen.append(('thinking', e['level'], e['previousLevel'])))\n"
        "    pi.on('model_select', lambda e: seen.append(('model', e['model'], e['source'])))\n"
    )
    session, _, _ = make_session([], load_extensions=True)
    session.set_thinking_level("high")
    session.set_model(session.model)
    await asyncio.sleep(0.05)
    import sys
    watch = next(m for name, m in sys.modules.items() if name.endswith("watch") and hasattr(m, "seen"))
    assert ("thinking", "high", "medium") in watch.seen
    assert ("model", "fake/fake-model", "set") in watch.seen


async def test_session_lifecycle_events_and_new_session_restore(make_session, project: Path) -> None:
    folder = project / ".pi" / "extensions"
    folder.mkdir(parents=True)
    (folder / "life.py").write_text(
        "log = []\n"
        "def register(pi):\n"
        "    pi.on('session_start', lambda e: log.append(('start', e['reason'], e.get('previousSessionFile'))))\n"
        "    pi.on('session_shutdown', lambda e: log.append(('shutdown', e['reason'])))\n"
    )
    session, _, _ = make_session([{"text": "one"}, {"text": "two"}], load_extensions=True)
    await session.prompt("hi")
    first_file = session.session_manager.session_file
    await session.new_session()
    assert session.messages == []
    await session.prompt("again")
    import sys
    life = next(m for name, m in sys.modules.items() if name.endswith("life") and hasattr(m, "log"))
    assert life.log == [("start", "startup", None), ("shutdown", "new"), ("start", "new", str(first_file))]
    kinds = [e["type"] for e in entries_of(session)]
    assert kinds[:3] == ["session", "model_change", "thinking_level_change"]
    assert session.session_manager.header.get("parentSession") == str(first_file)
