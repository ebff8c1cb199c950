"""A permission question over RPC, with the real ``pi-tui --mode rpc`` process: the question is an
``extension_ui_request`` select; the client's answer decides, and an untrusted project's bash asks."""

from __future__ import annotations

import pytest

from pi_tui.permissions.sandbox import find_bwrap
from pi_tui.testing.fake_server import FakeServer
from tests.modes.rpc.test_rpc_process import RpcProcess, _agent_dir
from tests.permissions.conftest import FakeWorld

pytestmark = pytest.mark.skipif(find_bwrap() is None, reason="NO SANDBOX TESTED: bwrap is not installed")

TURNS = [{"tool_calls": [{"id": "call_1", "name": "bash", "arguments": {"command": "echo hi > made.txt"}}]},
         {"text": "ok"}]


@pytest.mark.parametrize(("answer", "made"), [("Allow once", True), ("Deny", False)])
def test_rpc_asks_with_a_select_request(fake_world: FakeWorld, answer: str, made: bool) -> None:
    with FakeServer(TURNS) as server:
        agent = _agent_dir(fake_world.base, server.base_url)
        rpc = RpcProcess(agent, fake_world.project, "--model", "fake/fake-model", "--no-session")
        try:
            rpc.send({"id": "p", "type": "prompt", "message": "go"})
            request = rpc.read_until(lambda f: f.get("type") == "extension_ui_request" and f.get("method") == "select")
            assert "bash `echo hi > made.txt`" in request["title"]
            assert "bash asks first in default mode" in request["title"]  # untrusted: default mode
            assert request["options"][0] == "Allow once"
            rpc.send({"type": "extension_ui_response", "id": request["id"], "value": answer})
            end = rpc.read_until(lambda f: f.get("type") == "tool_execution_end")
            assert end["isError"] is (not made)
            rpc.read_until(lambda f: f.get("type") == "agent_end")
        finally:
            rpc.finish()
    assert (fake_world.project / "made.txt").exists() is made
