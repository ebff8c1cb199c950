"""A command that fails in the sandbox says what the sandbox blocked and how to ask the user
(pi_tui/permissions/failure_hint.py): the real loop, real bwrap, the tool results the model reads."""

from __future__ import annotations

import sys

import pytest

from pi_tui.permissions.sandbox import find_bwrap
from tests.permissions.conftest import FakeWorld
from tests.permissions.test_modes_loop import Asker, call, run, text

pytestmark = pytest.mark.skipif(find_bwrap() is None, reason="NO SANDBOX TESTED: bwrap is not installed")
ESCALATE = "call bash again with escalate: true and a justification: the user is asked."
NET = f"{sys.executable} -c \"import socket; socket.create_connection(('10.1.2.3', 80), timeout=2)\""


async def test_a_failure_names_what_the_sandbox_blocked(fake_world: FakeWorld) -> None:
    calls = [call("home", "bash", command="echo x > ~/x"),
             call("git", "bash", command="echo '[core]' >> .git/config"),
             call("ssh", "bash", command="cat ~/.ssh/id_rsa"),
             call("net", "bash", command=NET),
             call("plain", "bash", command="ls /no-such-folder"),
             call("passed", "bash", command="echo x > /etc/x; true")]
    results, session = await run(fake_world, calls, mode="auto", asker=Asker(),
                                 settings={"sandbox": {"network": "off"}})
    roots = ", ".join(str(r) for r in session.permissions.sandbox.policy.writable_roots())
    home = text(results["home"])
    assert home.endswith("Command exited with code 1\n[sandbox] the sandbox blocked this: writes outside the "
                         f"writable roots ({roots}) are read-only ({fake_world.home}/x). If the task needs it, "
                         + ESCALATE), home
    assert f"{fake_world.project}/.git/config is read-only (config would run later outside the sandbox)" \
        in text(results["git"])
    assert f"{fake_world.home}/.ssh is hidden from the sandbox" in text(results["ssh"])
    assert "the sandbox blocked this: network is off (sandbox.network). If the task needs it" in text(results["net"])
    assert "[sandbox]" not in text(results["plain"])  # failed, but not because of the sandbox
    assert "[sandbox]" not in text(results["passed"]) and not results["passed"]["isError"]


async def test_network_on_and_plan_mode(fake_world: FakeWorld) -> None:
    results, _ = await run(fake_world, [call("net", "bash", command=NET)], mode="auto", asker=Asker())
    assert "[sandbox]" not in text(results["net"])  # the network is on: not the sandbox's doing
    results, _ = await run(fake_world, [call("w", "bash", command="echo x > plan.txt"),
                                        call("net", "bash", command=NET)], mode="plan", asker=Asker())
    assert "the sandbox blocked this: plan mode is read-only: only " in text(results["w"])
    assert "plan mode runs commands without network" in text(results["net"])
    assert "escalate" not in text(results["w"]) + text(results["net"])  # plan mode refuses escalations
