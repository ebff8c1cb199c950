"""RPC commands that go through the session's newer APIs: ``cancelled`` from extension vetoes,
``new_session{parentSession}``, ``bash`` on ``AgentSession.run_user_bash``, and the ``input``
event's ``source`` (pi-behaviour.md §9.4, §10.2)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from pi_tui.extensions.loader import load_extensions
from tests.modes.rpc.conftest import ClientFactory, GatedProvider

VETO = '''
def register(pi):
    pi.on("session_before_switch", lambda event, ctx: {"cancel": True})
    pi.on("session_before_fork", lambda event, ctx: {"cancel": True})
'''


def _header(path: Path) -> dict[str, Any]:
    header: dict[str, Any] = json.loads(path.read_text().splitlines()[0])
    return header


async def test_an_extension_veto_answers_cancelled_and_keeps_the_session(make_client: ClientFactory,
                                                                        project: Path) -> None:
    (project / "veto.py").write_text(VETO)
    client = make_client([{"text": "answer"}], extensions=load_extensions([project / "veto.py"]))
    client.send({"id": "p", "type": "prompt", "message": "keep me"})
    await client.wait_for(lambda: "agent_end" in client.types())
    current = client.session.session_manager.session_file
    other = project / "other.jsonl"
    other.write_text(current.read_text())
    user_entry = next(e for e in client.session.session_manager.get_entries() if e.get("type") == "message")

    new = await client.request({"id": "n", "type": "new_session"})
    switch = await client.request({"id": "s", "type": "switch_session", "sessionPath": str(other)})
    forked = await client.request({"id": "f", "type": "fork", "entryId": user_entry["id"]})
    await client.close()

    assert new["data"] == {"cancelled": True}
    assert switch["data"] == {"cancelled": True}
    assert forked["data"] == {"text": "", "cancelled": True}
    assert client.session.session_manager.session_file == current
    assert [m["role"] for m in client.session.messages] == ["user", "assistant"]


async def test_new_session_without_a_veto_is_not_cancelled(make_client: ClientFactory) -> None:
    client = make_client([])
    old = client.session.session_manager.session_file
    answer = await client.request({"id": "n", "type": "new_session"})
    await client.close()
    assert answer["data"] == {"cancelled": False}
    new_file = client.session.session_manager.session_file
    assert new_file != old
    assert client.session.session_manager.header.get("parentSession") == str(old)


async def test_new_session_records_the_given_parent_session(make_client: ClientFactory, project: Path) -> None:
    client = make_client([{"text": "so it is written"}, {"text": "and this"}])
    client.send({"id": "p", "type": "prompt", "message": "hi"})
    await client.wait_for(lambda: "agent_end" in client.types())
    parent = str(project / "elsewhere" / "parent.jsonl")
    answer = await client.request({"id": "n", "type": "new_session", "parentSession": parent})
    client.send({"id": "p2", "type": "prompt", "message": "again"})
    await client.wait_for(lambda: client.types().count("agent_end") == 2)
    bad = await client.request({"id": "b", "type": "new_session", "parentSession": 7})
    await client.close()
    assert answer["data"] == {"cancelled": False}
    manager = client.session.session_manager
    assert manager.header.get("parentSession") == parent
    assert manager.session_file is not None and _header(manager.session_file)["parentSession"] == parent
    assert bad["success"] is False and bad["error"] == 'new_session: field "parentSession" must be a string, not int'


async def test_bash_during_a_run_is_recorded_before_the_next_prompt(make_client: ClientFactory) -> None:
    provider = GatedProvider([{"text": "first"}, {"text": "second"}])
    client = make_client(provider)
    client.send({"id": "p1", "type": "prompt", "message": "first"})
    await asyncio.wait_for(provider.waiting.wait(), 5)
    done = await client.request({"id": "b", "type": "bash", "command": "echo during"})
    roles_mid_run = [m["role"] for m in client.session.messages]
    provider.gate.set()
    await client.wait_for(lambda: "agent_end" in client.types())
    client.send({"id": "p2", "type": "prompt", "message": "second"})
    await client.close()
    assert done["data"] == {"output": "during\n", "exitCode": 0, "cancelled": False, "truncated": False}
    assert "bashExecution" not in roles_mid_run  # not wedged into the running turn
    assert [m["role"] for m in client.session.messages] == ["user", "assistant", "bashExecution", "user", "assistant"]
    # As pi: the response carries the result; no message events announce the bashExecution.
    assert not [f for f in client.frames if f.get("message", {}).get("role") == "bashExecution"]


USER_BASH = '''
def register(pi):
    def replace(event, ctx):
        return {"result": {"output": "handled by extension: " + event["command"], "exitCode": 3}}

    pi.on("user_bash", replace)
'''


async def test_bash_goes_through_the_user_bash_extension_event(make_client: ClientFactory, project: Path) -> None:
    (project / "shell.py").write_text(USER_BASH)
    client = make_client([], extensions=load_extensions([project / "shell.py"]))
    done = await client.request({"id": "b", "type": "bash", "command": "rm -rf /nothing"})
    await client.close()
    assert done["data"] == {"output": "handled by extension: rm -rf /nothing", "exitCode": 3,
                            "cancelled": False, "truncated": False}
    (message,) = client.session.messages
    assert message["role"] == "bashExecution" and message["exitCode"] == 3


INPUT_SPY = '''
SEEN = []

def register(pi):
    def on_input(event, ctx):
        SEEN.append(event["source"])
        pi.notify("input from " + event["source"], "info")
        return {"action": "continue"}

    pi.on("input", on_input)
'''


async def test_the_input_event_says_the_prompt_came_over_rpc(make_client: ClientFactory, project: Path) -> None:
    (project / "spy.py").write_text(INPUT_SPY)
    client = make_client([{"text": "ok"}], extensions=load_extensions([project / "spy.py"]))
    client.send({"id": "p", "type": "prompt", "message": "hello"})
    await client.close()
    notices = [f["message"] for f in client.frames if f["type"] == "extension_ui_request"]
    assert notices == ["input from rpc"]
