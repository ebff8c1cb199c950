"""``pi-tui --mode rpc`` driven as pi 0.73.1's ``RpcClient`` drives it: the response shapes and
event sequences a pi client relies on (issue 14). ``pi_parity/test_pi_side_by_side.py`` checks
the same items against pi itself where pi is installed; these always run.

Events and responses are read from the frames the server writes, as on the pipe; session files
are read from disk.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pi_tui.extensions.loader import load_extensions
from pi_tui.resources.loader import ResourceOptions, load_resources
from pi_tui.resources.settings import load_settings
from pi_tui.sdk import apply_project_trust
from tests.modes.rpc.conftest import ClientFactory, RpcClient

SLOW_TEXT = {"text": "Once upon a time, a story streamed slowly. " * 10, "chunk_size": 6, "chunk_delay_ms": 30}
ASSISTANT_ABORTED_KEYS = ["role", "content", "api", "provider", "model", "usage", "stopReason", "timestamp",
                          "responseId", "errorMessage"]


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _models_json(agent_dir: Path) -> None:
    models = {"providers": {"fake": {
        "baseUrl": "http://127.0.0.1:9/v1", "api": "openai-completions", "apiKey": "literal-key",
        "models": [
            {"id": "plain", "contextWindow": 100_000},
            {"id": "thinker", "reasoning": True, "contextWindow": 100_000},
            {"id": "mapped", "reasoning": True, "contextWindow": 100_000,
             "thinkingLevelMap": {"minimal": None, "low": None, "medium": None}},
        ],
    }}}
    (agent_dir / "models.json").write_text(json.dumps(models))


def _is_file(path: str) -> bool:
    return Path(path).is_file()


def _stream_events(frames: list[dict[str, Any]]) -> list[str]:
    return [f["assistantMessageEvent"]["type"] for f in frames if f["type"] == "message_update"]


# --------------------------------------------------------------------------- clone


async def test_clone_copies_the_branch_into_a_new_current_session(make_client: ClientFactory) -> None:
    client = make_client([{"text": "Hi there!"}])
    client.send({"id": "p", "type": "prompt", "message": "hello"})
    await client.wait_for(lambda: "agent_end" in client.types())
    before = client.session.session_manager.session_file
    old_entries = client.session.session_manager.get_entries()
    answer = await client.request({"id": "req_2", "type": "clone"})
    state = (await client.request({"id": "req_3", "type": "get_state"}))["data"]
    await client.close()
    assert answer == {"id": "req_2", "type": "response", "command": "clone", "success": True,
                      "data": {"cancelled": False}}
    assert state["sessionFile"] != str(before) and state["messageCount"] == 2
    lines = _lines(Path(state["sessionFile"]))
    assert lines[0]["parentSession"] == str(before)
    assert [e["id"] for e in lines[1:]] == [e["id"] for e in old_entries]  # the whole branch, ids kept
    assert [m["role"] for m in client.session.messages] == ["user", "assistant"]


async def test_clone_refused_by_an_extension_answers_cancelled(make_client: ClientFactory, project: Path) -> None:
    (project / "veto.py").write_text(
        'def register(pi):\n    pi.on("session_before_fork", lambda event, ctx: {"cancel": True})\n')
    client = make_client([], extensions=load_extensions([project / "veto.py"]))
    before = client.session.session_manager.session_file
    answer = await client.request({"id": "c", "type": "clone"})
    await client.close()
    assert answer["data"] == {"cancelled": True}
    assert client.session.session_manager.session_file == before


# --------------------------------------------------------------------------- get_commands


async def test_get_commands_source_info_for_each_place(make_client: ClientFactory, project: Path,
                                                      agent_dir: Path, tmp_path: Path) -> None:
    (project / ".pi" / "prompts").mkdir(parents=True)
    (project / ".pi" / "prompts" / "check.md").write_text("Check the build\n")
    listed = tmp_path / "listed"
    listed.mkdir()
    (listed / "listed.md").write_text("From the project settings\n")
    (project / ".pi" / "settings.json").write_text(json.dumps({"prompts": [str(listed)]}))
    extra = tmp_path / "extra"
    extra.mkdir()
    (extra / "cli.md").write_text("Given on the command line\n")
    # A project's prompts path outside it counts once the project is trusted (tests/resources/test_trust.py).
    (agent_dir / "settings.json").write_text(json.dumps({"trustedProjects": [str(project)]}))
    settings = load_settings(project, agent_dir)
    assert apply_project_trust(project, agent_dir, settings, None).trusted
    resources = load_resources(project, agent_dir, ResourceOptions(prompt_template_paths=[str(extra / "cli.md")],
                                                                   settings=settings))
    client = make_client([], settings=settings, resources=resources)
    commands = {c["name"]: c for c in (await client.request({"id": 1, "type": "get_commands"}))["data"]["commands"]}
    await client.close()
    assert commands["check"]["sourceInfo"] == {
        "path": str(project / ".pi" / "prompts" / "check.md"), "source": "auto", "scope": "project",
        "origin": "top-level", "baseDir": str(project / ".pi")}
    assert commands["listed"]["sourceInfo"] == {
        "path": str(listed / "listed.md"), "source": "local", "scope": "project", "origin": "top-level"}
    assert commands["cli"]["sourceInfo"] == {
        "path": str(extra / "cli.md"), "source": "local", "scope": "temporary", "origin": "top-level",
        "baseDir": str(extra)}
    for command in commands.values():  # RpcSlashCommand: every field a pi client reads is there
        assert list(command)[:1] == ["name"] and command["source"] in ("extension", "prompt", "skill")
        info = command["sourceInfo"]
        assert {"path", "source", "scope", "origin"} <= info.keys()
        assert info["scope"] in ("user", "project", "temporary") and info["origin"] in ("package", "top-level")


async def test_get_commands_names_the_extension_that_found_a_prompt_or_skill(
        make_client: ClientFactory, project: Path, agent_dir: Path, tmp_path: Path) -> None:
    """What pi 0.73.1 answers (measured with its RpcClient, a ``.ts`` extension in
    ``<agentDir>/extensions`` and one given with ``-e``): a prompt or skill returned from
    ``resources_discover`` has ``sourceInfo.source == "extension:<file name without suffix>"``,
    scope ``temporary`` and the extension's folder as ``baseDir``; the extension's own command
    keeps the extension's sourceInfo (``auto``/``user`` here)."""
    found = tmp_path / "found"
    (found / "prompts").mkdir(parents=True)
    (found / "prompts" / "fromext.md").write_text("Found by an extension\n")
    (found / "skills" / "sweep").mkdir(parents=True)
    (found / "skills" / "sweep" / "SKILL.md").write_text("---\nname: sweep\ndescription: Sweep up\n---\nSweep.\n")
    (found / "single.md").write_text("One file\n")
    finder = agent_dir / "extensions" / "finder.py"
    finder.parent.mkdir(parents=True)
    finder.write_text("def register(pi):\n"
                      "    pi.register_command('find', lambda args: None, description='Find')\n"
                      f"    pi.on('resources_discover', lambda e: {{'promptPaths': [{str(found / 'prompts')!r}],\n"
                      f"                                           'skillPaths': [{str(found / 'skills')!r}]}})\n")
    package = tmp_path / "cli_pkg"
    package.mkdir()
    (package / "__init__.py").write_text(
        f"def register(pi):\n    pi.on('resources_discover', lambda e: {{'promptPaths': [{str(found / 'single.md')!r}]}})\n")
    client = make_client([], extensions=load_extensions([finder, package]),
                         resource_options=ResourceOptions(include_builtin=False))
    commands = {c["name"]: c for c in (await client.request({"id": 1, "type": "get_commands"}))["data"]["commands"]}
    await client.close()
    assert commands["find"]["source"] == "extension"
    assert commands["find"]["sourceInfo"] == {"path": str(finder), "source": "auto", "scope": "user",
                                              "origin": "top-level", "baseDir": str(agent_dir)}
    assert commands["fromext"]["sourceInfo"] == {
        "path": str(found / "prompts" / "fromext.md"), "source": "extension:finder", "scope": "temporary",
        "origin": "top-level", "baseDir": str(finder.parent)}
    assert commands["skill:sweep"]["sourceInfo"] == {
        "path": str(found / "skills" / "sweep" / "SKILL.md"), "source": "extension:finder", "scope": "temporary",
        "origin": "top-level", "baseDir": str(finder.parent)}
    assert commands["single"]["sourceInfo"] == {  # a package extension is named after its folder
        "path": str(found / "single.md"), "source": "extension:cli_pkg", "scope": "temporary",
        "origin": "top-level", "baseDir": str(package)}


# --------------------------------------------------------------------------- set_model


async def test_set_model_to_a_reasoning_model_turns_thinking_on_as_pi(make_client: ClientFactory,
                                                                      agent_dir: Path, project: Path) -> None:
    _models_json(agent_dir)
    settings = load_settings(project, agent_dir)
    client = make_client([], model="fake/plain", settings=settings)
    assert client.session.thinking_level == "off"
    answer = await client.request({"id": "req_1", "type": "set_model", "provider": "fake", "modelId": "thinker"})
    events = [f for f in client.frames if f.get("type") != "response"]
    state = (await client.request({"id": "req_2", "type": "get_state"}))["data"]
    back = await client.request({"id": "req_3", "type": "set_model", "provider": "fake", "modelId": "plain"})
    await client.close()
    assert answer["data"]["id"] == "thinker" and answer["data"]["reasoning"] is True
    assert events == [{"type": "thinking_level_changed", "level": "medium"}]  # and no model_changed
    assert state["thinkingLevel"] == "medium"
    assert back["success"] and client.session.thinking_level == "off"
    entries = [(e["type"], e.get("thinkingLevel") or e.get("modelId")) for e in
               client.session.session_manager.get_entries()]
    assert entries[-4:] == [("model_change", "thinker"), ("thinking_level_change", "medium"),
                            ("model_change", "plain"), ("thinking_level_change", "off")]
    assert load_settings(project, agent_dir).default_thinking_level == "medium"


async def test_set_model_clamps_the_settings_default_level(make_client: ClientFactory, agent_dir: Path,
                                                           project: Path) -> None:
    """The default level (``xhigh`` here) is clamped to the model (§13.1): ``mapped`` has no
    ``xhigh`` in its map, so the next lower supported level, ``high``."""
    _models_json(agent_dir)
    (agent_dir / "settings.json").write_text(json.dumps({"defaultThinkingLevel": "xhigh"}))
    client = make_client([], model="fake/plain", settings=load_settings(project, agent_dir))
    await client.request({"id": 1, "type": "set_model", "provider": "fake", "modelId": "mapped"})
    await client.close()
    assert client.session.thinking_level == "high"
    assert {"type": "thinking_level_changed", "level": "high"} in client.frames


# --------------------------------------------------------------------------- abort


async def test_abort_while_streaming_closes_the_block_and_keeps_pis_shape(make_client: ClientFactory) -> None:
    client = make_client([SLOW_TEXT])
    client.send({"id": "req_1", "type": "prompt", "message": "tell me a long story"})
    await client.wait_for(lambda: "text_delta" in _stream_events(client.frames))
    await client.request({"id": "req_2", "type": "abort"})
    await client.wait_for(lambda: "agent_end" in client.types())
    file = client.session.session_manager.session_file
    await client.close()
    frames = client.frames
    end = next(i for i, f in enumerate(frames) if f["type"] == "message_end" and f["message"]["role"] == "assistant")
    message = frames[end]["message"]
    assert frames[end - 1]["type"] == "message_update"
    closing = frames[end - 1]["assistantMessageEvent"]
    assert closing["type"] == "text_end" and closing["content"] == message["content"][0]["text"]
    # pi's provider marks the reply aborted before its closing events are read: they show it
    for shown in (closing["partial"], frames[end - 1]["message"]):
        assert (shown["stopReason"], shown.get("errorMessage")) == ("aborted", "Request was aborted")
    assert message["stopReason"] == "aborted" and message["errorMessage"] == "Request was aborted"
    assert list(message) == ASSISTANT_ABORTED_KEYS and message["responseId"]
    assert [f["type"] for f in frames[end + 1:] if f["type"] != "response"] == ["turn_end", "agent_end"]
    stored = _lines(file)[-1]["message"]  # the session file: the same text and key order
    assert list(stored) == ASSISTANT_ABORTED_KEYS and stored["errorMessage"] == "Request was aborted"


# --------------------------------------------------------------------------- bash and tool updates


async def test_bash_command_sends_only_its_response(make_client: ClientFactory) -> None:
    client = make_client([])
    answer = await client.request({"id": "req_1", "type": "bash", "command": "echo hi"})
    messages = (await client.request({"id": "req_2", "type": "get_messages"}))["data"]["messages"]
    await client.close()
    assert answer["data"] == {"output": "hi\n", "exitCode": 0, "cancelled": False, "truncated": False}
    assert [f["type"] for f in client.frames] == ["response", "response"]  # no message_start/_end
    assert [m["role"] for m in messages] == ["bashExecution"]


async def test_an_aborted_bash_command_keeps_pis_message_shape(make_client: ClientFactory, tmp_path: Path) -> None:
    """``abort_bash``: the response and the ``bashExecution`` message say ``cancelled`` and keep
    the output so far; like pi's, they carry no ``exitCode`` (pi leaves the undefined code out;
    pi-tui wrote ``"exitCode": null`` into get_messages and the session file)."""
    started = tmp_path / "started"
    client = make_client([])
    client.send({"id": "b", "type": "bash", "command": f"echo start; touch {started}; sleep 30"})
    await client.wait_for(started.exists)
    await client.request({"id": "a", "type": "abort_bash"})
    await client.wait_for(lambda: client.response("b") is not None)
    messages = (await client.request({"id": "m", "type": "get_messages"}))["data"]["messages"]
    await client.close()
    assert client.response("b")["data"] == {"output": "start\n", "cancelled": True, "truncated": False}
    assert messages[0]["output"] == "start\n" and messages[0]["cancelled"] is True
    assert list(messages[0]) == ["role", "command", "output", "cancelled", "truncated", "timestamp"]


async def test_a_truncated_bash_command_keeps_pis_key_order(make_client: ClientFactory) -> None:
    """pi writes ``fullOutputPath`` before ``timestamp`` (the session file's key order)."""
    client = make_client([])
    answer = await client.request({"id": "b", "type": "bash", "command": "seq 1 3000"})
    messages = (await client.request({"id": "m", "type": "get_messages"}))["data"]["messages"]
    await client.close()
    assert answer["data"]["truncated"] is True and _is_file(answer["data"]["fullOutputPath"])
    assert list(messages[0]) == ["role", "command", "output", "exitCode", "cancelled", "truncated",
                                 "fullOutputPath", "timestamp"]


def _bash_turns(command: str) -> list[dict[str, Any]]:
    return [{"tool_calls": [{"id": "call_1", "name": "bash", "arguments": {"command": command}}]},
            {"text": "done"}]


async def test_a_tools_last_update_is_sent_once(make_client: ClientFactory) -> None:
    client = make_client(_bash_turns("echo hi; sleep 0.3"))
    client.send({"id": "req_1", "type": "prompt", "message": "run it"})
    await client.wait_for(lambda: "agent_end" in client.types())
    await client.close()
    updates = [f["partialResult"] for f in client.frames if f["type"] == "tool_execution_update"]
    assert updates == [{"content": []}, {"content": [{"type": "text", "text": "hi\n"}], "details": {}}]


async def test_a_streaming_tool_calls_partials_carry_its_arguments_as_pis(make_client: ClientFactory) -> None:
    """Cut into 3-character fragments, the arguments end inside an escape or a literal on the
    way; pi's partial parse still shows what came so far (ours showed ``{}`` there). The first
    fragment's arguments are in ``toolcall_start`` already (pi applies a chunk before its events
    are read) and the finish reason shows from the blocks' ends on."""
    arguments = {"command": 'echo "hi" && true', "timeout": 5, "background": False}
    client = make_client([{"tool_calls": [{"id": "call_1", "name": "bash", "arguments": arguments, "chunks": 20}]},
                          {"text": "done"}])
    client.send({"id": "req_1", "type": "prompt", "message": "run it"})
    await client.wait_for(lambda: "agent_end" in client.types())
    await client.close()
    updates = [f["assistantMessageEvent"] for f in client.frames if f["type"] == "message_update"
               and f["assistantMessageEvent"]["type"].startswith("toolcall")]
    shown = [u["partial"]["content"][0]["arguments"] for u in updates]
    assert updates[0]["type"] == "toolcall_start" and shown[0] == shown[1]
    keys_seen: set[str] = set()
    for value in shown:
        assert keys_seen <= set(value), f"arguments went back to {value}"
        keys_seen |= set(value)
    assert shown[-1] == arguments
    assert updates[-1]["type"] == "toolcall_end" and updates[-1]["partial"]["stopReason"] == "toolUse"


async def test_a_streaming_reply_is_not_counted_until_it_ends(make_client: ClientFactory) -> None:
    """pi's ``get_state.messageCount`` and ``get_messages`` hold what ended (its agent adds a
    reply at ``message_end``): with a steer and a follow-up queued mid-stream, pi reports 1
    where pi-tui counted the partial reply too."""
    client = make_client([SLOW_TEXT, {"text": "Shorter."}, {"text": "Summary."}])
    client.send({"id": "req_1", "type": "prompt", "message": "tell me a long story"})
    await client.wait_for(lambda: "text_delta" in _stream_events(client.frames))
    await client.request({"id": "req_2", "type": "steer", "message": "make it shorter"})
    await client.request({"id": "req_3", "type": "follow_up", "message": "then summarize it"})
    state = (await client.request({"id": "req_4", "type": "get_state"}))["data"]
    messages = (await client.request({"id": "req_5", "type": "get_messages"}))["data"]["messages"]
    assert (state["messageCount"], state["pendingMessageCount"]) == (1, 2)
    assert [m["role"] for m in messages] == ["user"]
    await client.wait_for(lambda: client.types().count("agent_end") == 1 and client.types()[-1] == "agent_end", 30)
    state = (await client.request({"id": "req_6", "type": "get_state"}))["data"]
    assert (state["messageCount"], state["pendingMessageCount"]) == (6, 0)
    await client.close()


async def _abort_a_running_bash_tool(client: RpcClient) -> None:
    client.send({"id": "req_1", "type": "prompt", "message": "run the slow one"})
    await client.wait_for(lambda: any(f["type"] == "tool_execution_update" and f["partialResult"]["content"]
                                      for f in client.frames))
    await client.request({"id": "req_2", "type": "abort"})
    await client.wait_for(lambda: "agent_end" in client.types())


async def test_a_bash_tool_aborted_while_running_is_stored_as_command_aborted(make_client: ClientFactory) -> None:
    client = make_client(_bash_turns("echo start; sleep 30"))
    await _abort_a_running_bash_tool(client)
    file = client.session.session_manager.session_file
    await client.close()
    end = next(f for f in client.frames if f["type"] == "tool_execution_end")
    assert end["result"] == {"content": [{"type": "text", "text": "start\n\n\nCommand aborted"}], "details": {}}
    assert end["isError"] is True
    stored = [line["message"] for line in _lines(file) if line.get("type") == "message"]
    result = next(m for m in stored if m["role"] == "toolResult")
    assert result["content"] == [{"type": "text", "text": "start\n\n\nCommand aborted"}]  # what the model reads
    assert list(result) == ["role", "toolCallId", "toolName", "content", "details", "isError", "timestamp"]
    aborted = stored[-1]
    assert aborted["stopReason"] == "aborted" and list(aborted)[-2:] == ["timestamp", "errorMessage"]
