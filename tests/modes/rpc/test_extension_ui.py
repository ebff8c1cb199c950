"""Extension dialogs over RPC (pi-behaviour.md §9.4): ``ctx.ui`` calls become
``extension_ui_request`` frames and the client's ``extension_ui_response`` lines answer them, on a
real session with real extensions behind a real ``RpcServer``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.modes.rpc.conftest import ClientFactory, RpcClient

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "extensions"
RM_TURNS = [
    {"tool_calls": [{"id": "b1", "name": "bash", "arguments": {"command": "rm -rf victim"}}]},
    {"text": "done"},
]

ASKER = '''
def register(pi):
    async def ask(args, ctx):
        ctx.ui.set_status("asker", "asking")
        colour = await ctx.ui.select("Colour?", ["red", "green"])
        name = await ctx.ui.input("Name?", "your name")
        text = await ctx.ui.editor("Notes", "line 1\\nline 2")
        sure = await ctx.ui.confirm("Sure?", "really")
        quick = await ctx.ui.confirm("Quick?", "", timeout_s=0.05)
        ctx.ui.set_status("asker", None)
        ctx.ui.notify(f"{colour}|{name}|{text}|{sure}|{quick}|{ctx.has_ui}")
    pi.register_command("ask", ask)
'''


def ui_requests(client: RpcClient, method: str | None = None) -> list[dict[str, Any]]:
    return [f for f in client.frames
            if f["type"] == "extension_ui_request" and (method is None or f["method"] == method)]


async def next_request(client: RpcClient, method: str, index: int = 0) -> dict[str, Any]:
    await client.wait_for(lambda: len(ui_requests(client, method)) > index)
    return ui_requests(client, method)[index]


def tool_end(client: RpcClient) -> dict[str, Any]:
    return next(f for f in client.frames if f["type"] == "tool_execution_end")


@pytest.fixture
async def gated_client(make_client: ClientFactory, project: Path) -> RpcClient:
    (project / "victim").mkdir()
    (project / "victim" / "keep.txt").write_text("precious")
    return make_client(RM_TURNS, load_extensions=True, extension_paths=[str(EXAMPLES / "permission_gate.py")])


async def test_the_permission_gate_asks_and_a_refusal_blocks_the_command(gated_client: RpcClient,
                                                                          project: Path) -> None:
    client = gated_client
    client.send({"id": "p", "type": "prompt", "message": "clean up"})
    request = await next_request(client, "confirm")
    assert request == {"type": "extension_ui_request", "id": request["id"], "method": "confirm",
                       "title": "Allow a dangerous command (rm -rf)?", "message": "rm -rf victim",
                       "timeout": 120000}
    client.send({"type": "extension_ui_response", "id": request["id"], "confirmed": False})
    await client.close()
    end = tool_end(client)
    assert end["isError"] is True
    assert "Blocked by user: the command uses rm -rf" in end["result"]["content"][0]["text"]
    assert (project / "victim" / "keep.txt").read_text() == "precious"
    assert {"method": "notify", "message": "Blocked: rm -rf victim", "notifyType": "warning"}.items() \
        <= ui_requests(client, "notify")[-1].items()
    # The response line itself gets no response frame of its own.
    assert [f["command"] for f in client.frames if f["type"] == "response"] == ["prompt"]


async def test_an_approval_lets_the_command_run(gated_client: RpcClient, project: Path) -> None:
    client = gated_client
    client.send({"id": "p", "type": "prompt", "message": "clean up"})
    request = await next_request(client, "confirm")
    client.send({"type": "extension_ui_response", "id": request["id"], "confirmed": True})
    await client.close()
    assert tool_end(client)["isError"] is False
    assert not (project / "victim").exists()


async def test_end_of_input_cancels_an_open_dialog_instead_of_hanging(gated_client: RpcClient,
                                                                     project: Path) -> None:
    client = gated_client
    client.send({"id": "p", "type": "prompt", "message": "clean up"})
    await next_request(client, "confirm")
    await client.close()  # no answer will ever come
    assert tool_end(client)["isError"] is True
    assert (project / "victim").is_dir()


async def test_every_dialog_method_and_status_frames(make_client: ClientFactory, project: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    (project / "asker.py").write_text(ASKER)
    client = make_client(load_extensions=True, extension_paths=[str(project / "asker.py")])
    client.send({"id": "p", "type": "prompt", "message": "/ask"})

    select = await next_request(client, "select")
    assert {k: select[k] for k in ("title", "options")} == {"title": "Colour?", "options": ["red", "green"]}
    assert "timeout" not in select
    client.send({"type": "extension_ui_response", "id": select["id"], "value": "green"})
    entered = await next_request(client, "input")
    assert entered["placeholder"] == "your name"
    client.send({"type": "extension_ui_response", "id": entered["id"], "cancelled": True})
    editor = await next_request(client, "editor")
    assert (editor["title"], editor["prefill"]) == ("Notes", "line 1\nline 2")
    client.send({"type": "extension_ui_response", "id": editor["id"], "value": "new\ntext"})
    sure = await next_request(client, "confirm")
    client.send({"type": "extension_ui_response", "id": sure["id"], "confirmed": "yes"})  # wrong type
    quick = await next_request(client, "confirm", 1)
    assert quick["timeout"] == 50  # and nobody answers: it times out by itself
    await client.wait_for(lambda: any("|" in f.get("message", "") for f in ui_requests(client, "notify")))
    await client.close()

    result = next(f for f in ui_requests(client, "notify") if "|" in f["message"])
    assert result["message"] == "green|None|new\ntext|False|False|True"
    statuses = ui_requests(client, "setStatus")
    assert [{k: v for k, v in s.items() if k not in ("id", "type")} for s in statuses] == [
        {"method": "setStatus", "statusKey": "asker", "statusText": "asking"},
        {"method": "setStatus", "statusKey": "asker"},  # cleared: statusText left out
    ]
    assert len({f["id"] for f in ui_requests(client)}) == len(ui_requests(client))
    assert 'extension_ui_response to confirm: expected "confirmed": true/false' in capsys.readouterr().err


async def test_a_select_answer_outside_the_options_counts_as_cancelled(
        make_client: ClientFactory, project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "pick.py").write_text(
        "def register(pi):\n"
        "    async def pick(args, ctx):\n"
        "        ctx.ui.notify(f'picked {await ctx.ui.select(\"Pick\", [\"a\", \"b\"])}')\n"
        "    pi.register_command('pick', pick)\n"
    )
    client = make_client(load_extensions=True, extension_paths=[str(project / "pick.py")])
    client.send({"id": "p", "type": "prompt", "message": "/pick"})
    request = await next_request(client, "select")
    client.send({"type": "extension_ui_response", "id": request["id"], "value": "c"})
    await client.wait_for(lambda: any(f.get("message") == "picked None" for f in ui_requests(client, "notify")))
    await client.close()
    assert "value 'c' is not one of the options; treated as cancelled" in capsys.readouterr().err


async def test_a_closed_server_leaves_no_ui_behind(make_client: ClientFactory) -> None:
    client = make_client()
    assert client.session.has_ui is True
    await client.close()
    await client.server.close()
    assert client.session.has_ui is False
