"""The session's extension points (``session/hooks.py``): where checkpoints, permissions and MCP
plug in — through a real AgentSession on the scripted provider, real tools and real files."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from pi_tui.agent.types import BeforeToolCallResult, ToolCallInfo
from pi_tui.core.errors import PiError
from pi_tui.core.tool import FunctionTool, ToolContext, ToolResult, text_result
from pi_tui.session.hooks import TurnEnded

WRITE = {"tool_calls": [{"id": "w1", "name": "write", "arguments": {"path": "out.txt", "content": "new\n"}}]}


def _tool_texts(request: Any) -> list[str]:
    """The text of every toolResult the model was sent."""
    return [block["text"] for m in request.messages if m.get("role") == "toolResult"
            for block in m["content"] if block.get("type") == "text"]


async def test_lifecycle_hooks_run_at_start_before_the_prompt_and_after_each_turn(make_session, project: Path) -> None:
    session, _, _ = make_session([WRITE, {"text": "done"}])
    seen: list[str] = []

    async def started(reason: str) -> None:
        seen.append(f"started:{reason}")

    async def before_prompt(text: str) -> None:
        seen.append(f"prompt:{text}:{(project / 'out.txt').exists()}")

    async def turn_ended(turn: TurnEnded) -> None:
        seen.append(f"turn:{turn.tool_names}:{(project / 'out.txt').exists()}")

    session.hooks.session_started.append(started)
    session.hooks.before_prompt.append(before_prompt)
    session.hooks.turn_ended.append(turn_ended)
    await session.prompt("write it")
    # The snapshot points a checkpoint needs: the file is not there before the prompt, and the
    # turn whose write ran is reported with the tool's name once the file is on disk.
    assert seen == ["started:startup", "prompt:write it:False", "turn:['write']:True", "turn:[]:True"]
    await session.new_session()
    assert seen[-1] == "started:new"


async def test_a_hook_that_raises_is_reported_and_the_run_goes_on(make_session) -> None:
    session, provider, events = make_session([{"text": "answered"}])

    async def broken(text: str) -> None:
        raise RuntimeError("snapshot store is full")

    session.hooks.before_prompt.append(broken)
    await session.prompt("hi")
    notes = [e["message"] for e in events if e["type"] == "notify" and e["level"] == "error"]
    assert notes == ["A before-prompt hook failed: snapshot store is full"]
    assert len(provider.requests) == 1 and session.messages[-1]["content"][0]["text"] == "answered"


async def test_a_tool_gate_blocks_the_call_before_it_runs(make_session, project: Path) -> None:
    session, provider, _ = make_session([WRITE, {"text": "ok"}])
    asked: list[str] = []

    async def deny_writes(info: ToolCallInfo) -> BeforeToolCallResult | None:
        asked.append(info.tool_call["name"])
        return BeforeToolCallResult(block=True, reason="writing is not allowed here")

    session.hooks.tool_gates.append(deny_writes)
    await session.prompt("write it")
    assert asked == ["write"]
    assert not (project / "out.txt").exists()
    assert any("writing is not allowed here" in t for t in _tool_texts(provider.requests[1]))


async def test_a_gate_that_raises_blocks_the_call(make_session, project: Path) -> None:
    session, provider, _ = make_session([WRITE, {"text": "ok"}])

    async def broken(info: ToolCallInfo) -> BeforeToolCallResult | None:
        raise RuntimeError("rules file unreadable")

    session.hooks.tool_gates.append(broken)
    await session.prompt("write it")
    assert not (project / "out.txt").exists()
    assert any("permission check failed (rules file unreadable)" in t for t in _tool_texts(provider.requests[1]))


class _ChoosingUI:
    def __init__(self, answer: str | None) -> None:
        self.answer = answer
        self.asked: list[tuple[str, list[str]]] = []

    async def select(self, title: str, options: Sequence[str], *, timeout_s: float | None) -> str | None:
        self.asked.append((title, list(options)))
        return self.answer

    async def confirm(self, title: str, message: str, *, timeout_s: float | None) -> bool | None:
        return None

    async def input(self, title: str, placeholder: str | None, *, timeout_s: float | None) -> str | None:
        return None

    async def editor(self, title: str, prefill: str, *, timeout_s: float | None) -> str | None:
        return None

    def set_status(self, key: str, text: str | None) -> None:
        pass


@pytest.mark.parametrize(("ui_answer", "written"), [("Allow", True), ("Deny", False), (None, False)])
async def test_a_gate_asks_the_person_through_the_modes_dialogs(
    make_session, project: Path, ui_answer: str | None, written: bool,
) -> None:
    session, _, _ = make_session([WRITE, {"text": "ok"}])
    ui = _ChoosingUI(ui_answer)
    session.set_extension_ui(ui)

    async def ask(info: ToolCallInfo) -> BeforeToolCallResult | None:
        answer = await session.ask_user(f"Allow {info.tool_call['name']}?", ["Allow", "Deny"])
        return None if answer == "Allow" else BeforeToolCallResult(block=True, reason="denied by the user")

    session.hooks.tool_gates.append(ask)
    await session.prompt("write it")
    assert ui.asked == [("Allow write?", ["Allow", "Deny"])]
    assert (project / "out.txt").exists() is written


async def test_ask_user_without_a_ui_answers_none_at_once(make_session) -> None:
    session, _, _ = make_session([])
    assert await session.ask_user("Allow bash?", ["Allow", "Deny"]) is None


async def test_before_leaf_change_runs_before_tree_navigation_and_fork(make_session) -> None:
    session, _, _ = make_session([{"text": "one"}, {"text": "two"}])
    await session.prompt("first")
    await session.prompt("second")
    first_user = next(e for e in session.session_manager.get_branch() if e.get("message", {}).get("role") == "user")
    leaves: list[tuple[str, str | None]] = []

    async def before(target_id: str) -> None:
        leaves.append((target_id, session.session_manager.leaf_id))

    session.hooks.before_leaf_change.append(before)
    leaf_before = session.session_manager.leaf_id
    await session.navigate_tree(first_user["id"])
    assert leaves == [(first_user["id"], leaf_before)]  # called while the leaf had not moved yet
    assert session.session_manager.leaf_id != leaf_before
    await session.fork(first_user["id"])
    assert leaves[-1][0] == first_user["id"] and len(leaves) == 2


def _tool(name: str) -> FunctionTool:
    async def run(call_id: str, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return text_result(f"{name} ran")

    return FunctionTool(name=name, description=f"the {name} tool", parameters={"type": "object", "properties": {}},
                        run=run)


async def test_tools_that_arrive_late_join_the_end_of_the_next_request(make_session) -> None:
    session, provider, _ = make_session([{"text": "one"}, {"text": "two"}])
    await session.prompt("before")
    before = [t.name for t in provider.requests[0].tools]
    assert session.add_tools([_tool("mcp__srv__echo"), _tool("mcp__srv__sum")]) == ["mcp__srv__echo", "mcp__srv__sum"]
    await session.prompt("after")
    assert [t.name for t in provider.requests[1].tools] == [*before, "mcp__srv__echo", "mcp__srv__sum"]
    assert session.get_all_tools()[-2:] == ["mcp__srv__echo", "mcp__srv__sum"]


async def test_a_late_tool_with_a_taken_name_is_refused_and_nothing_is_added(make_session) -> None:
    session, _, _ = make_session([])
    tools_before = session.get_all_tools()
    with pytest.raises(PiError, match="Cannot add tool 'read'"):
        session.add_tools([_tool("mcp__srv__new"), _tool("read")])
    assert session.get_all_tools() == tools_before
    session.add_tools([_tool("mcp__srv__quiet")], active=False)
    assert "mcp__srv__quiet" in session.get_all_tools() and "mcp__srv__quiet" not in session.get_active_tools()
