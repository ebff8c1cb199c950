"""RPC flows in-process: raw stdin bytes in, frames out, on a real session and the scripted
provider (pi-behaviour.md §9.4, §13.9)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

from tests.modes.rpc.conftest import SMALL_MODEL, ClientFactory, GatedProvider

PROMPT_EVENTS = ["agent_start", "turn_start", "message_start", "message_end", "message_start", "message_end",
                 "turn_end", "agent_end"]


async def test_prompt_answers_after_preflight_then_streams_the_run(make_client: ClientFactory) -> None:
    client = make_client([{"text": "Hello there"}])
    client.send({"id": "p1", "type": "prompt", "message": "hi"})
    await client.close()
    frames = client.frames
    assert frames[0] == {"id": "p1", "type": "response", "command": "prompt", "success": True}
    assert client.types()[1:] == PROMPT_EVENTS
    assert any(f["type"] == "message_update" for f in frames)
    end = frames[-1]
    assert [m["role"] for m in end["messages"]] == ["user", "assistant"]
    assert end["messages"][1]["content"] == [{"type": "text", "text": "Hello there"}]
    assert sum(1 for f in frames if f["type"] == "response") == 1  # nothing after the run


async def test_a_preflight_failure_is_the_only_response(make_client: ClientFactory) -> None:
    provider = GatedProvider([{"text": "first"}])
    client = make_client(provider)
    client.send({"id": 1, "type": "prompt", "message": "first"})
    await asyncio.wait_for(provider.waiting.wait(), 5)
    busy = await client.request({"id": 2, "type": "prompt", "message": "second"})
    assert busy == {"id": 2, "type": "response", "command": "prompt", "success": False,
                    "error": "Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') "
                             "to queue the message."}
    provider.gate.set()
    await client.close()
    assert [f["success"] for f in client.frames if f.get("id") == 2] == [False]
    assert client.types().count("agent_start") == 1


async def test_a_failure_after_preflight_gets_no_response(make_client: ClientFactory) -> None:
    client = make_client([{"error": {"status": 400, "message": "bad request body"}}])
    client.send({"id": "p", "type": "prompt", "message": "hi"})
    await client.close()
    responses = [f for f in client.frames if f["type"] == "response"]
    assert responses == [{"id": "p", "type": "response", "command": "prompt", "success": True}]
    final = next(f["message"] for f in reversed(client.frames) if f["type"] == "message_end")
    assert final["stopReason"] == "error" and "bad request body" in final["errorMessage"]


async def test_steer_and_follow_up_during_a_run(make_client: ClientFactory) -> None:
    provider = GatedProvider([
        {"text": "first answer"},
        {"text": "steered answer", "when": {"last_user_contains": "also check"}},
        {"text": "follow-up answer", "when": {"last_user_contains": "afterwards"}},
    ])
    client = make_client(provider)
    client.send({"id": "p", "type": "prompt", "message": "start"})
    await asyncio.wait_for(provider.waiting.wait(), 5)
    assert (await client.request({"id": "s", "type": "steer", "message": "also check the tests"}))["success"]
    queued = await client.request({"id": "f", "type": "prompt", "message": "afterwards, summarize",
                                   "streamingBehavior": "followUp"})
    assert queued == {"id": "f", "type": "response", "command": "prompt", "success": True}
    state = (await client.request({"id": "st", "type": "get_state"}))["data"]
    assert state["isStreaming"] is True and state["pendingMessageCount"] == 2
    assert [f for f in client.frames if f["type"] == "queue_update"][-1] == {
        "type": "queue_update", "steering": ["also check the tests"], "followUp": ["afterwards, summarize"]}
    provider.gate.set()
    await client.close()
    users = [m for m in provider.requests[-1].messages if m["role"] == "user"]
    assert [u["content"][0]["text"] for u in users] == ["start", "also check the tests", "afterwards, summarize"]
    assert client.types().count("agent_end") == 1  # one run took all three turns
    text = await _request_after_close(client, {"id": "t", "type": "get_last_assistant_text"})
    assert text["data"] == {"text": "follow-up answer"}


async def _request_after_close(client: Any, command: dict[str, Any]) -> dict[str, Any]:
    """Run one more command on the same server after its input ended (a fresh input)."""
    from tests.modes.rpc.conftest import RpcClient

    again = RpcClient(client.session)
    response = await again.request(command)
    await again.close()
    return response


async def test_abort_stops_the_run(make_client: ClientFactory) -> None:
    provider = GatedProvider([{"text": "never"}])
    client = make_client(provider)
    client.send({"id": "p", "type": "prompt", "message": "long task"})
    await asyncio.wait_for(provider.waiting.wait(), 5)
    aborted = await client.request({"id": "a", "type": "abort"})
    assert aborted == {"id": "a", "type": "response", "command": "abort", "success": True}
    await client.close()
    assert client.response("p") == {"id": "p", "type": "response", "command": "prompt", "success": True}
    end = next(f for f in client.frames if f["type"] == "agent_end")
    assert end["messages"][-1]["stopReason"] == "aborted"
    assert client.frames.index(end) < client.frames.index(aborted)  # abort answers once the run ended


async def test_get_state_reports_every_field(make_client: ClientFactory) -> None:
    client = make_client([{"text": "ok"}])
    await client.request({"id": 1, "type": "prompt", "message": "hi"})
    await client.wait_for(lambda: "agent_end" in client.types())
    await client.request({"id": 2, "type": "set_session_name", "name": "  my work  "})
    state = (await client.request({"id": 3, "type": "get_state"}))["data"]
    await client.close()
    assert set(state) == {"model", "thinkingLevel", "isStreaming", "isCompacting", "steeringMode", "followUpMode",
                          "sessionFile", "sessionId", "sessionName", "autoCompactionEnabled", "messageCount",
                          "pendingMessageCount"}
    assert state["model"]["provider"] == "fake" and state["model"]["id"] == "fake-model"
    assert state["model"]["contextWindow"] == 200_000 and state["model"]["reasoning"] is True
    assert state["thinkingLevel"] == "medium" and state["isStreaming"] is False and state["isCompacting"] is False
    assert state["steeringMode"] == "one-at-a-time" and state["followUpMode"] == "one-at-a-time"
    assert state["sessionId"] == client.session.session_manager.session_id
    assert state["sessionFile"] == str(client.session.session_manager.session_file)
    assert state["sessionName"] == "my work"
    assert state["autoCompactionEnabled"] is True
    assert state["messageCount"] == 2 and state["pendingMessageCount"] == 0


async def test_manual_compaction_returns_the_result(make_client: ClientFactory) -> None:
    summary = {"text": "## Goal\nRPC-SUMMARY", "when": {"system_contains": "summarize conversations"}}
    client = make_client([{"text": "a" * 3000}, {"text": "b" * 3000}, {"text": "c"}, summary, dict(summary)],
                         model=SMALL_MODEL, settings={"compaction": {"reserveTokens": 2000, "keepRecentTokens": 100}})
    for index, text in enumerate(["first " + "x" * 3000, "second " + "y" * 3000, "third"]):
        client.send({"id": f"p{index}", "type": "prompt", "message": text})
        await client.wait_for(_runs_ended(client, index + 1))
    result = await client.request({"id": "c", "type": "compact", "customInstructions": "focus on y"})
    await client.close()
    assert result["success"] is True, (result["error"], client.types())
    data = result["data"]
    assert data["summary"].startswith("## Goal\nRPC-SUMMARY")  # (a split turn adds a second summary)
    assert isinstance(data["firstKeptEntryId"], str) and data["tokensBefore"] > 1000
    kinds = [f["type"] for f in client.frames if f["type"].startswith("compaction")]
    assert kinds == ["compaction_start", "compaction_end"]
    assert client.frames.index(result) > client.types(updates=True).index("compaction_end")
    assert client.session.messages[0]["role"] == "compactionSummary"


async def test_fork_messages_and_fork(make_client: ClientFactory) -> None:
    client = make_client([{"text": "one"}, {"text": "two"}])
    for index, text in enumerate(["first question", "second question"]):
        client.send({"id": f"p{index}", "type": "prompt", "message": text})
        await client.wait_for(_runs_ended(client, index + 1))
    old_file = client.session.session_manager.session_file
    choices = (await client.request({"id": "m", "type": "get_fork_messages"}))["data"]["messages"]
    assert [c["text"] for c in choices] == ["first question", "second question"]
    bad = await client.request({"id": "bad", "type": "fork", "entryId": "nope"})
    assert bad["success"] is False and bad["error"] == "Invalid entry ID for forking"
    forked = await client.request({"id": "f", "type": "fork", "entryId": choices[1]["entryId"]})
    assert forked["data"] == {"text": "second question", "cancelled": False}
    messages = (await client.request({"id": "g", "type": "get_messages"}))["data"]["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant"]
    assert messages[1]["content"][0]["text"] == "one"
    state = (await client.request({"id": "s", "type": "get_state"}))["data"]
    await client.close()
    assert state["sessionFile"] != str(old_file)


async def test_bash_runs_records_and_aborts(make_client: ClientFactory) -> None:
    client = make_client([])
    done = await client.request({"id": "b", "type": "bash", "command": "echo hi"})
    assert done["data"] == {"output": "hi\n", "exitCode": 0, "cancelled": False, "truncated": False}
    client.send({"id": "slow", "type": "bash", "command": "echo started; sleep 20"})
    await client.wait_for(lambda: _bash_running(client))
    await client.request({"id": "ab", "type": "abort_bash"})
    await client.wait_for(lambda: client.response("slow") is not None)
    await client.close()
    slow = client.response("slow")
    assert slow is not None and slow["data"]["cancelled"] is True and "exitCode" not in slow["data"]
    assert [m["role"] for m in client.session.messages] == ["bashExecution", "bashExecution"]
    entries = client.session.session_manager.get_entries()
    assert [e["message"]["command"] for e in entries if e.get("type") == "message"] == ["echo hi", "echo started; sleep 20"]


def _bash_running(client: Any) -> bool:
    return bool(client.server.context.bash_running)


def _runs_ended(client: Any, count: int) -> Callable[[], bool]:
    return lambda: bool(client.types().count("agent_end") == count)


async def test_notify_becomes_an_extension_ui_request(make_client: ClientFactory) -> None:
    client = make_client([])
    client.session.notify("Heads up", "warning")
    client.send({"type": "extension_ui_response", "id": "not-pending", "value": "x"})
    await client.close()
    (frame,) = client.frames
    assert frame["type"] == "extension_ui_request" and frame["method"] == "notify"
    assert frame["message"] == "Heads up" and frame["notifyType"] == "warning" and isinstance(frame["id"], str)


async def test_parse_errors_and_unknown_commands(make_client: ClientFactory) -> None:
    client = make_client([])
    client.send_raw(b'{"id": 1, "type": \n')
    client.send_raw(b"[1, 2]\n\n   \n")
    client.send({"id": "u", "type": "frobnicate"})
    client.send({"id": "q", "type": "set_thinking_level", "level": "max"})
    await client.close()
    first, second, unknown, invalid = client.frames
    assert first["command"] == "parse" and first["success"] is False and "id" not in first
    assert first["error"].startswith("Failed to parse command: ")
    assert second == {"type": "response", "command": "parse", "success": False,
                      "error": 'Failed to parse command: expected a JSON object with a string "type"'}
    assert unknown == {"id": "u", "type": "response", "command": "frobnicate", "success": False,
                       "error": "Unknown command: frobnicate"}
    assert invalid["success"] is False and "Invalid thinking level: 'max'" in invalid["error"]


async def test_a_command_nested_too_deeply_is_a_parse_error_not_the_end(make_client: ClientFactory) -> None:
    """A line of valid JSON nested 100,000 deep hit Python's recursion limit: RPC mode died with
    a RecursionError traceback instead of answering it."""
    client = make_client([])
    client.send_raw(b"[" * 100_000 + b"]" * 100_000 + b"\n")
    client.send({"id": "s", "type": "get_state"})
    await client.close()
    parse, state = client.frames
    assert parse == {"type": "response", "command": "parse", "success": False,
                     "error": "Failed to parse command: nested too deeply"}
    assert state["id"] == "s" and state["success"] is True


async def test_crlf_line_separators_and_a_final_line_without_lf(make_client: ClientFactory) -> None:
    client = make_client([{"text": "got it"}])
    text = "line\u2028separated\u2029paragraph"
    client.send_raw(json.dumps({"id": 1, "type": "prompt", "message": text}, ensure_ascii=False).encode() + b"\r\n")
    await client.wait_for(lambda: "agent_end" in client.types())
    client.send_raw(b'{"id": 2, "type": "get_messages"}')  # no LF: handled at end of input
    await client.close()
    messages = client.response(2)["data"]["messages"]  # type: ignore[index]
    assert messages[0]["content"][0]["text"] == text
    assert all(b"\xe2\x80\xa8" not in line for line in client.raw)  # escaped on the way out


EXTENSION = '''
def register(pi):
    async def greet(args, ctx):
        pi.notify(f"hello {args}", "info")

    pi.register_command("greet", greet, description="Say hello")

    def on_turn_start(event, ctx):
        raise RuntimeError("turn_start handler broke")

    pi.on("turn_start", on_turn_start)
'''


async def test_extensions_errors_commands_and_notify(make_client: ClientFactory, project: Any) -> None:
    from pi_tui.extensions.loader import load_extensions

    good = project / "greeter.py"
    good.write_text(EXTENSION)
    broken = project / "broken.py"
    broken.write_text("def register(pi):\n    raise ValueError('cannot load')\n")
    client = make_client([{"text": "ran"}], extensions=load_extensions([broken, good]))
    commands = (await client.request({"id": "c", "type": "get_commands"}))["data"]["commands"]
    handled = await client.request({"id": "g", "type": "prompt", "message": "/greet world"})
    client.send({"id": "p", "type": "prompt", "message": "normal prompt"})
    await client.close()
    frames = client.frames
    load_error = frames[0]
    assert load_error["type"] == "extension_error" and load_error["event"] == "load"
    assert load_error["extensionPath"] == str(broken) and "cannot load" in load_error["error"]
    # An extension given by path (-e): pi's sourceInfo for it is {source: "cli", scope: "temporary"}.
    assert {"name": "greet", "description": "Say hello", "source": "extension",
            "sourceInfo": {"path": str(good), "source": "cli", "scope": "temporary", "origin": "top-level"},
            "path": str(good)} in commands
    assert handled == {"id": "g", "type": "response", "command": "prompt", "success": True}
    notify = next(f for f in frames if f["type"] == "extension_ui_request")
    assert notify["method"] == "notify" and notify["message"] == "hello world" and notify["notifyType"] == "info"
    assert frames.index(notify) < frames.index(handled)  # the command ran before its prompt was answered
    runtime = [f for f in frames if f["type"] == "extension_error" and f["event"] == "turn_start"]
    assert runtime and runtime[0]["extensionPath"] == str(good) and "turn_start handler broke" in runtime[0]["error"]
    assert client.types().count("agent_start") == 1  # only the normal prompt ran the agent


async def test_a_command_registered_in_pis_typescript_shape_is_refused_at_start(make_client: ClientFactory,
                                                                                project: Any) -> None:
    """``pi.register_command("deploy", {"handler": ..., "description": ...})`` (pi's TypeScript
    shape) is refused while loading: the client hears why, naming the file and the command, the
    other command works, and typing ``/deploy`` later is a plain prompt, not a crash."""
    from pi_tui.extensions.loader import load_extensions

    path = project / "ported.py"
    path.write_text("def register(pi):\n"
                    "    pi.register_command('deploy', {'description': 'Deploy', 'handler': lambda a, c: None})\n"
                    "    pi.register_command('greet', lambda args: pi.notify('hi ' + args))\n")
    client = make_client([{"text": "ran"}], extensions=load_extensions([path]))
    commands = (await client.request({"id": "c", "type": "get_commands"}))["data"]["commands"]
    await client.request({"id": "g", "type": "prompt", "message": "/greet you"})
    await client.request({"id": "d", "type": "prompt", "message": "/deploy now"})
    await client.wait_for(lambda: "agent_end" in client.types())
    await client.close()
    errors = [f for f in client.frames if f["type"] == "extension_error"]
    assert [(e["extensionPath"], e["event"]) for e in errors] == [(str(path), "load")]
    assert errors[0]["error"].startswith("register_command('deploy') refused: the handler is a dict, not a function")
    assert [c["name"] for c in commands if c["source"] == "extension"] == ["greet"]
    assert [f["message"] for f in client.frames if f["type"] == "extension_ui_request"] == ["hi you"]
    assert ("extensions", f"{path}: {errors[0]['error']}") in client.session.diagnostics()  # stderr and the TUI
    assert client.session.messages[0]["content"][0]["text"] == "/deploy now"  # went to the model as typed


async def test_end_of_input_waits_for_a_run_an_extension_command_started(make_client: ClientFactory, project: Any) -> None:
    from pi_tui.extensions.loader import load_extensions

    path = project / "later.py"
    path.write_text("def register(pi):\n"
                    "    pi.register_command('later', lambda args, ctx: pi.send_user_message('run ' + args))\n")
    client = make_client([{"text": "done later", "delay_ms": 200}], extensions=load_extensions([path]))
    client.send({"id": "l", "type": "prompt", "message": "/later now"})
    await client.close()
    assert client.response("l") == {"id": "l", "type": "response", "command": "prompt", "success": True}
    assert client.types()[-1] == "agent_end"
    assert client.frames[-1]["messages"][-1]["content"] == [{"type": "text", "text": "done later"}]


LIFECYCLE = '''
def register(pi):
    def on_start(event, ctx):
        pi.notify("session_start: " + event["reason"], "info")

    def on_discover(event, ctx):
        pi.notify("resources_discover: " + event["reason"], "info")
        return {}

    pi.on("session_start", on_start)
    pi.on("resources_discover", on_discover)
'''


async def test_the_session_is_started_once_before_the_first_command(make_client: ClientFactory, project: Any) -> None:
    from pi_tui.extensions.loader import load_extensions

    (project / "lifecycle.py").write_text(LIFECYCLE)
    client = make_client([{"text": "ran"}], extensions=load_extensions([project / "lifecycle.py"]))
    state = await client.request({"id": "s", "type": "get_state"})
    client.send({"id": "p", "type": "prompt", "message": "hi"})
    await client.close()
    notices = [f for f in client.frames if f["type"] == "extension_ui_request"]
    assert [n["message"] for n in notices] == ["session_start: startup", "resources_discover: startup"]
    assert client.frames.index(notices[-1]) < client.frames.index(state)  # before any command ran
    assert client.types().count("agent_end") == 1


async def test_startup_diagnostics_go_to_stderr_and_the_client(make_client: ClientFactory, agent_dir: Any,
                                                               capsys: Any) -> None:
    (agent_dir / "models.json").write_text("{not json")
    client = make_client([])
    client.session.session_manager.load_warnings.append("session.jsonl: line 3 is not JSON; skipped")
    await client.request({"id": "s", "type": "get_state"})
    await client.close()
    problems = [message for _source, message in client.session.diagnostics()]
    assert any("models.json" in message for message in problems)
    assert "session.jsonl: line 3 is not JSON; skipped" in problems
    notices = [f for f in client.frames if f["type"] == "extension_ui_request"]
    assert [n["message"] for n in notices] == problems
    assert {n["notifyType"] for n in notices} == {"warning"}
    assert client.frames.index(notices[-1]) < client.frames.index(client.response("s"))  # type: ignore[arg-type]
    stderr = capsys.readouterr().err
    assert all(f"pi-tui: {message}" in stderr for message in problems)
