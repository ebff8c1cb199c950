"""RPC's side of files that follow the tree: navigate_tree with restoreFiles, fork with
restoreFiles, get_checkpoints and preview_restore, on a real session and the real git."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.modes.rpc.conftest import ClientFactory

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="LOUD SKIP: no git on PATH")


def _write(path: str, content: str) -> dict:
    return {"tool_calls": [{"name": "write", "arguments": {"path": path, "content": content}}]}


async def test_navigate_fork_and_list_with_files(make_client: ClientFactory, project: Path) -> None:
    client = make_client([_write("f.txt", "1"), {"text": "a"}, _write("f.txt", "2"), {"text": "b"}])
    await client.request({"id": 1, "type": "prompt", "message": "one"})
    await client.wait_for(lambda: not client.session.is_streaming and "agent_end" in client.types())
    await client.request({"id": 2, "type": "prompt", "message": "two"})
    await client.wait_for(lambda: client.types().count("agent_end") == 2)
    users = [e["id"] for e in client.session.session_manager.get_entries()
             if e.get("type") == "message" and e["message"]["role"] == "user"]
    listed = (await client.request({"id": 3, "type": "get_checkpoints"}))["data"]
    assert listed["enabled"] is True
    assert [n["counts"] for n in listed["nodes"]] == [{"changed": 0, "created": 1, "deleted": 0},
                                                     {"changed": 1, "created": 0, "deleted": 0}]
    preview = (await client.request({"id": 4, "type": "preview_restore", "targetId": users[1]}))["data"]
    assert preview["changed"] == ["f.txt"]
    moved = await client.request({"id": 5, "type": "navigate_tree", "targetId": users[1], "restoreFiles": True})
    assert moved["success"] is True, moved.get("error")
    assert moved["data"]["cancelled"] is False
    assert moved["data"]["editorText"] == "two" and moved["data"]["files"]["changed"] == ["f.txt"]
    assert (project / "f.txt").read_text() == "1"
    plain = await client.request({"id": 6, "type": "navigate_tree", "targetId": users[0]})
    assert "files" not in plain["data"] and (project / "f.txt").read_text() == "1"
    forked = await client.request({"id": 7, "type": "fork", "entryId": users[0], "restoreFiles": True})
    assert forked["data"]["text"] == "one" and forked["data"]["files"]["deleted"] == ["f.txt"]
    assert not (project / "f.txt").exists()
    missing = await client.request({"id": 8, "type": "navigate_tree", "targetId": "nope", "restoreFiles": True})
    assert missing["success"] is False and missing["error"] == "Entry nope not found"
    await client.close()
    assert "checkpoint" not in client.types()  # pi's clients get no frames pi has no name for


async def test_a_file_of_the_users_in_no_snapshot_is_named_in_skipped(make_client: ClientFactory, project: Path) -> None:
    client = make_client([_write("data.bin", "small\n"), {"text": "a"},
                          {"tool_calls": [{"name": "bash", "arguments": {"command": "rm data.bin"}}]}, {"text": "b"}],
                         settings={"checkpoints": {"maxFileBytes": 100}})
    for number, text in ((1, "one"), (2, "two")):
        await client.request({"id": number, "type": "prompt", "message": text})
        await client.wait_for(lambda n=number: client.types().count("agent_end") == n)
    (project / "data.bin").write_bytes(b"mine" * 100)
    users = [e["id"] for e in client.session.session_manager.get_entries()
             if e.get("type") == "message" and e["message"]["role"] == "user"]
    kept = ["data.bin (yours, in no snapshot: left as it is)"]
    preview = (await client.request({"id": 3, "type": "preview_restore", "targetId": users[1]}))["data"]
    assert preview["created"] == [] and preview["skipped"] == kept
    moved = await client.request({"id": 4, "type": "navigate_tree", "targetId": users[1], "restoreFiles": True})
    assert moved["data"]["files"]["skipped"] == kept and moved["data"]["files"]["restored"] is True
    assert (project / "data.bin").read_bytes() == b"mine" * 100
    await client.close()
