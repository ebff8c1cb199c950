"""Each permission mode through the real loop: a scripted model calls the tools, the real gate,
sandbox and settings files decide, and the tool results say what happened."""

from __future__ import annotations

import json
import socket
from typing import Any

import pytest

from pi_tui.permissions.gate import PermissionAnswer, PermissionRequest
from pi_tui.permissions.sandbox import find_bwrap
from pi_tui.permissions.setup import PermissionOptions
from pi_tui.sdk import create_agent_session
from pi_tui.testing.scripted import ScriptedProvider
from tests.permissions.conftest import KEY, FakeWorld

pytestmark = pytest.mark.skipif(find_bwrap() is None, reason="NO SANDBOX TESTED: bwrap is not installed")


class Asker:
    def __init__(self, *answers: str, scope: str = "user") -> None:
        self.answers = list(answers)
        self.scope = scope
        self.requests: list[PermissionRequest] = []

    async def __call__(self, request: PermissionRequest) -> PermissionAnswer:
        self.requests.append(request)
        kind = self.answers.pop(0) if self.answers else "deny"
        return PermissionAnswer(kind, self.scope)  # type: ignore[arg-type]


def call(call_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {"id": call_id, "name": name, "arguments": arguments}


CALLS = [
    call("bash-in", "bash", command="echo made > by-bash.txt && echo ran"),
    call("write-in", "write", path="by-write.txt", content="x"),
    call("write-out", "write", path="../sibling/out.txt", content="x"),
    call("read-ssh", "read", path="~/.ssh/id_rsa"),
]


async def run(world: FakeWorld, calls: list[dict[str, Any]], *, mode: str | None, asker: Any = None,
              trusted: bool = True, settings: dict[str, Any] | None = None) -> tuple[dict[str, dict[str, Any]], Any]:
    if settings is not None:
        (world.agent / "settings.json").write_text(json.dumps(settings))
    provider = ScriptedProvider([{"tool_calls": calls}, {"text": "done"}])
    events: list[dict[str, Any]] = []
    options = PermissionOptions(mode=mode, asker=asker)
    session = create_agent_session(cwd=world.project, agent_dir=world.agent, provider=provider, no_session=True,
                                   permissions=options, trust_project=trusted, load_extensions=False,
                                   active_tools=["read", "bash", "edit", "write"])
    session.subscribe(events.append)
    await session.prompt("go")
    results: dict[str, Any] = {m["toolCallId"]: m for m in session.messages if m["role"] == "toolResult"}
    session.events = events  # type: ignore[attr-defined]
    session.notices = options.notices  # type: ignore[attr-defined]
    return results, session


def text(result: dict[str, Any]) -> str:
    return "".join(block.get("text", "") for block in result["content"])


async def test_auto_runs_inside_and_asks_to_leave(fake_world: FakeWorld) -> None:
    asker = Asker("once", "deny")
    results, session = await run(fake_world, CALLS, mode="auto", asker=asker)
    assert session.permissions.mode == "auto" and session.permissions.sandboxed
    assert not results["bash-in"]["isError"] and (fake_world.project / "by-bash.txt").exists()
    assert not results["write-in"]["isError"] and (fake_world.project / "by-write.txt").exists()
    assert [r.call_id for r in asker.requests] == ["write-out", "read-ssh"]
    assert "outside the writable roots" in asker.requests[0].reason and asker.requests[0].escalation
    assert (fake_world.sibling / "out.txt").exists()  # allowed once by the user
    assert results["read-ssh"]["isError"] and KEY not in text(results["read-ssh"])
    assert "Denied by the user: do not retry it" in text(results["read-ssh"])


async def test_default_asks_for_bash_and_edits(fake_world: FakeWorld) -> None:
    asker = Asker("once", "once")
    results, _ = await run(fake_world, CALLS[:2], mode="default", asker=asker)
    assert [(r.call_id, r.reason) for r in asker.requests] == [
        ("bash-in", "bash asks first in default mode (it runs in the sandbox)"),
        ("write-in", "edits ask first in default mode")]
    assert asker.requests[0].rule == "Bash(echo made > by-bash.txt)" or asker.requests[0].rule is None
    assert not results["bash-in"]["isError"] and not results["write-in"]["isError"]


async def test_accept_edits_asks_for_bash_only(fake_world: FakeWorld) -> None:
    asker = Asker("deny")
    results, _ = await run(fake_world, CALLS[:2], mode="acceptEdits", asker=asker)
    assert [r.call_id for r in asker.requests] == ["bash-in"]
    assert results["bash-in"]["isError"] and not (fake_world.project / "by-bash.txt").exists()
    assert not results["write-in"]["isError"]


async def test_plan_is_read_only(fake_world: FakeWorld) -> None:
    asker = Asker()
    server = socket.socket()  # on the host's loopback: reachable only through the host's network
    server.bind(("127.0.0.1", 0))
    server.listen(5)
    reach = f"echo x > /dev/tcp/127.0.0.1/{server.getsockname()[1]} && echo CONNECTED"
    calls = [call("bash", "bash", command=f"echo x > plan.txt; cat .git/config; {reach}"),
             call("write", "write", path="plan.txt", content="x"),
             call("esc", "bash", command="ls", escalate=True, justification="please")]
    network_on = {"sandbox": {"network": "on"}}
    try:
        control, _ = await run(fake_world, [call("auto", "bash", command=reach)], mode="auto", settings=network_on)
        assert "CONNECTED" in text(control["auto"])  # the network is on: auto mode reaches it
        results, _ = await run(fake_world, calls, mode="plan", asker=asker, settings=network_on)
    finally:
        server.close()
    assert "CONNECTED" not in text(results["bash"]) and "Connection refused" in text(results["bash"])
    assert asker.requests == []
    assert "Read-only file system" in text(results["bash"]) and "[core]" in text(results["bash"])
    assert not (fake_world.project / "plan.txt").exists()
    assert "plan mode is read-only" in text(results["write"]) and results["write"]["isError"]
    assert "plan mode runs nothing outside" in text(results["esc"])


async def test_dont_ask_denies_what_would_ask(fake_world: FakeWorld) -> None:
    asker = Asker("once")
    calls = [*CALLS[:3], call("esc", "bash", command="id", escalate=True, justification="need it")]
    results, session = await run(fake_world, calls, mode="dontAsk", asker=asker)
    assert asker.requests == []
    assert not results["bash-in"]["isError"] and not results["write-in"]["isError"]
    assert "it was not asked (dontAsk mode)" in text(results["write-out"])
    assert "it was not asked (dontAsk mode)" in text(results["esc"])
    denied = [e for e in session.events if e["type"] == "permission_denied"]
    assert [e["toolCallId"] for e in denied] == ["write-out", "esc"]


async def test_escalation_asks_with_the_justification_and_runs_outside(fake_world: FakeWorld) -> None:
    asker = Asker("once")
    calls = [call("esc", "bash", command="echo out > ~/escaped.txt", escalate=True, justification="write my home")]
    results, session = await run(fake_world, calls, mode="auto", asker=asker)
    (request,) = asker.requests
    assert request.escalation and request.justification == "write my home" and request.rule is None
    assert not results["esc"]["isError"] and (fake_world.home / "escaped.txt").exists()
    tool = session._state.all_tools["bash"]
    assert "escalate" in tool.parameters["properties"]


async def test_bypass_is_pis_behaviour(fake_world: FakeWorld) -> None:
    results, session = await run(fake_world, [call("b", "bash", command="echo x > ~/bypass.txt")],
                                 mode="bypassPermissions")
    assert not session.permissions.sandboxed and not results["b"]["isError"]
    assert (fake_world.home / "bypass.txt").exists()
    assert "escalate" not in session._state.all_tools["bash"].parameters["properties"]


async def test_headless_denies_with_the_reason_and_an_event(fake_world: FakeWorld) -> None:
    results, session = await run(fake_world, CALLS[:1], mode="default", asker=None)
    assert results["bash-in"]["isError"]
    assert text(results["bash-in"]) == (
        "Permission denied for bash `echo made > by-bash.txt && echo ran`: bash asks first in default mode "
        "(it runs in the sandbox), and it was not asked (nobody can answer in this mode).")
    (event,) = [e for e in session.events if e["type"] == "permission_denied"]
    assert event["reason"].startswith("bash asks first") and event["mode"] == "default"


async def test_untrusted_project_gets_default_and_cannot_allow(fake_world: FakeWorld) -> None:
    (fake_world.project / ".pi" / "settings.json").write_text(json.dumps(
        {"permissions": {"allow": ["Bash", "Write"], "defaultMode": "bypassPermissions"}}))
    asker = Asker("deny", "deny")
    _, session = await run(fake_world, CALLS[:2], mode=None, asker=asker, trusted=False,
                                 settings={"permissions": {"defaultMode": "auto"}})
    assert session.permissions.mode == "default"
    assert [r.call_id for r in asker.requests] == ["bash-in", "write-in"]
    # trusted, the same files give bypass (the project's defaultMode wins over the global one)
    _, trusted = await run(fake_world, CALLS[:1], mode=None, asker=Asker(), trusted=True)
    assert trusted.permissions.mode == "bypassPermissions"


async def test_trusted_project_defaults_to_auto_and_a_flag_wins_with_a_warning(fake_world: FakeWorld) -> None:
    # (with someone to ask the gate is built with the session; print mode builds it at the first call)
    _, session = await run(fake_world, [], mode=None, asker=Asker(), trusted=True)
    assert session.permissions.mode == "auto"
    _, untrusted = await run(fake_world, [], mode="auto", asker=Asker(), trusted=False)
    assert untrusted.permissions.mode == "auto"
    assert any("in a project you have not trusted" in n for n in untrusted.notices)


async def test_deny_rule_wins_and_names_its_file(fake_world: FakeWorld) -> None:
    settings = {"permissions": {"allow": ["Bash"], "deny": ["Bash(rm:*)"]}}
    results, _ = await run(fake_world, [call("rm", "bash", command="timeout 5 rm -rf .git")], mode="bypassPermissions",
                           settings=settings)
    assert results["rm"]["isError"] and (fake_world.project / ".git").exists()
    assert f"denied by the deny rule Bash(rm:*) in {fake_world.agent / 'settings.json'}" in text(results["rm"])


async def test_always_writes_the_rule_and_it_holds(fake_world: FakeWorld) -> None:
    asker = Asker("always", scope="project")
    await run(fake_world, [call("ls", "bash", command="ls -a")], mode="default", asker=asker)
    saved = json.loads((fake_world.project / ".pi" / "settings.json").read_text())
    assert saved["permissions"]["allow"] == ["Bash(ls -a)"]
    again = Asker()
    results, _ = await run(fake_world, [call("ls2", "bash", command="ls -a")], mode="default", asker=again)
    assert again.requests == [] and not results["ls2"]["isError"]


async def test_stop_denies_and_ends_the_turn(fake_world: FakeWorld) -> None:
    asker = Asker("stop")
    results, session = await run(fake_world, CALLS[:1], mode="default", asker=asker)
    assert "Denied by the user" in text(results["bash-in"])
    assert session.messages[-1]["role"] != "assistant" or session.messages[-1].get("stopReason") == "aborted"


async def test_a_user_bang_command_runs_in_the_sandbox(fake_world: FakeWorld) -> None:
    session = create_agent_session(cwd=fake_world.project, agent_dir=fake_world.agent, no_session=True,
                                   provider=ScriptedProvider([{"text": "x"}]), trust_project=True,
                                   permissions=PermissionOptions(mode="auto", asker=Asker()), load_extensions=False)
    message = await session.run_user_bash("echo x > ~/by-user.txt; echo made > here.txt; cat ~/.ssh/id_rsa")
    assert "Read-only file system" in message["output"] and KEY not in message["output"], message
    assert not (fake_world.home / "by-user.txt").exists()
    assert (fake_world.project / "here.txt").read_text() == "made\n"  # the project is writable, as for bash
