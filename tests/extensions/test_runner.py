from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

from pi_tui.core.tool import ToolContext
from pi_tui.extensions.api import Extension, ExtensionAPI, ExtensionNotBoundError
from pi_tui.extensions.runner import ExtensionRunner
from tests.extensions.host import RecordingHost


def make_runner(*setups: Any, timeout_s: float = 1.0) -> ExtensionRunner:
    """One extension per setup function ``setup(pi)``, in order."""
    runner = ExtensionRunner(timeout_s=timeout_s)
    for index, setup in enumerate(setups):
        extension = Extension(path=Path(f"/ext/e{index}.py"))
        setup(ExtensionAPI(extension, runner))
        runner.add(extension)
    return runner


async def test_handlers_run_in_load_order_sync_and_async_with_or_without_ctx() -> None:
    calls: list[str] = []

    def first(pi: Any) -> None:
        pi.on("turn_start", lambda event: calls.append(f"a:{event['turnIndex']}"))

    def second(pi: Any) -> None:
        @pi.on("turn_start")
        async def handler(event: dict[str, Any], ctx: Any) -> None:
            await asyncio.sleep(0)
            calls.append(f"b:{event['type']}:{ctx.has_host}")

    runner = make_runner(first, second)
    await runner.emit("turn_start", {"turnIndex": 2})
    assert calls == ["a:2", "b:turn_start:False"]


async def test_raise_and_hang_are_reported_and_the_rest_continues() -> None:
    seen: list[str] = []

    def boom(pi: Any) -> None:
        pi.on("agent_end", lambda e: 1 / 0)

    def hang(pi: Any) -> None:
        async def forever(event: Any) -> None:
            await asyncio.sleep(3600)

        pi.on("agent_end", forever)

    def fine(pi: Any) -> None:
        pi.on("agent_end", lambda e: seen.append("fine"))

    runner = make_runner(boom, hang, fine, timeout_s=0.05)
    reported: list[dict[str, Any]] = []
    runner.on_error(reported.append)
    started = time.monotonic()
    await runner.emit("agent_end", {"messages": []})
    assert time.monotonic() - started < 1.0
    assert seen == ["fine"]
    assert reported == [
        {"type": "extension_error", "extensionPath": "/ext/e0.py", "event": "agent_end", "error": "ZeroDivisionError: division by zero"},
        {"type": "extension_error", "extensionPath": "/ext/e1.py", "event": "agent_end", "error": "handler timed out after 0.05s"},
    ]
    assert runner.errors == reported


async def test_input_transform_chains_and_handled_short_circuits() -> None:
    after: list[str] = []

    def upper(pi: Any) -> None:
        pi.on("input", lambda e: {"action": "transform", "text": e["text"].upper()})

    def suffix(pi: Any) -> None:
        pi.on("input", lambda e: {"action": "transform", "text": e["text"] + "!"})

    def handle(pi: Any) -> None:
        pi.on("input", lambda e: {"action": "handled"} if e["text"].startswith("STOP") else {"action": "continue"})

    def later(pi: Any) -> None:
        pi.on("input", lambda e: after.append(e["text"]))

    runner = make_runner(upper, suffix, handle, later)
    result = await runner.emit_input("hello", source="rpc")
    assert (result.action, result.text) == ("continue", "HELLO!")
    stopped = await runner.emit_input("stop now")
    assert stopped.action == "handled"
    assert after == ["HELLO!"]


async def test_before_agent_start_chains_prompt_and_collects_messages() -> None:
    seen_prompts: list[str] = []

    def add_rules(pi: Any) -> None:
        @pi.on("before_agent_start")
        def handler(event: dict[str, Any], ctx: Any) -> dict[str, Any]:
            seen_prompts.append(ctx.get_system_prompt())
            return {"systemPrompt": event["systemPrompt"] + " +rules", "message": {"customType": "note", "content": "first"}}

    def add_more(pi: Any) -> None:
        @pi.on("before_agent_start")
        def handler(event: dict[str, Any], ctx: Any) -> dict[str, Any]:
            seen_prompts.append(ctx.get_system_prompt())
            assert event["systemPromptOptions"]["cwd"] == "/w"
            return {"systemPrompt": event["systemPrompt"] + " +more", "message": {"customType": "n2", "content": [], "display": False}}

    runner = make_runner(add_rules, add_more)
    result = await runner.emit_before_agent_start("do it", [], "BASE", {"cwd": "/w"})
    assert result.system_prompt == "BASE +rules +more"
    assert seen_prompts == ["BASE", "BASE +rules"]
    assert [(m["role"], m["customType"], m["display"]) for m in result.messages] == [("custom", "note", True), ("custom", "n2", False)]


async def test_before_agent_start_without_change_or_empty_means_base() -> None:
    assert (await make_runner(lambda pi: pi.on("before_agent_start", lambda e: None)).emit_before_agent_start("p", [], "B")).system_prompt is None
    empty = make_runner(lambda pi: pi.on("before_agent_start", lambda e: {"systemPrompt": ""}))
    assert (await empty.emit_before_agent_start("p", [], "B")).system_prompt is None


async def test_context_gets_a_deep_copy_and_chains() -> None:
    def mutate(pi: Any) -> None:
        @pi.on("context")
        def handler(event: dict[str, Any]) -> dict[str, Any]:
            event["messages"][0]["content"] = "changed in place"
            return {"messages": [*event["messages"], {"role": "user", "content": "added", "timestamp": 0}]}

    def count(pi: Any) -> None:
        pi.on("context", lambda e: {"messages": e["messages"][-1:]})

    original = [{"role": "user", "content": "orig", "timestamp": 0}]
    result = await make_runner(mutate, count).emit_context(original)  # type: ignore[arg-type]
    assert original[0]["content"] == "orig"
    assert result == [{"role": "user", "content": "added", "timestamp": 0}]


async def test_tool_call_first_block_wins_and_raising_blocks() -> None:
    later: list[str] = []

    def allow(pi: Any) -> None:
        pi.on("tool_call", lambda e: None)

    def block_rm(pi: Any) -> None:
        pi.on("tool_call", lambda e: {"block": True, "reason": "no rm"} if "rm" in e["input"].get("command", "") else None)

    def record(pi: Any) -> None:
        pi.on("tool_call", lambda e: later.append(e["toolName"]))

    runner = make_runner(allow, block_rm, record)
    decision = await runner.emit_tool_call("bash", "c1", {"command": "rm -rf /"})
    assert decision is not None and (decision.block, decision.reason) == (True, "no rm")
    assert later == []
    assert await runner.emit_tool_call("bash", "c2", {"command": "ls"}) is None
    assert later == ["bash"]

    failing = make_runner(lambda pi: pi.on("tool_call", lambda e: {}["missing"]))
    decision = await failing.emit_tool_call("read", "c3", {})
    assert decision is not None and decision.block
    assert decision.reason is not None and "/ext/e0.py" in decision.reason and "KeyError" in decision.reason
    assert failing.errors[0]["event"] == "tool_call"


async def test_tool_result_chains_and_applies_to_errors() -> None:
    def redact(pi: Any) -> None:
        pi.on("tool_result", lambda e: {"content": [{"type": "text", "text": e["content"][0]["text"].replace("secret", "***")}]})

    def flip(pi: Any) -> None:
        pi.on("tool_result", lambda e: {"isError": False, "details": {"seen": e["content"][0]["text"], "was": e["isError"]}})

    runner = make_runner(redact, flip)
    change = await runner.emit_tool_result("bash", "c", {}, [{"type": "text", "text": "a secret"}], None, True)
    assert change is not None
    assert change.content == [{"type": "text", "text": "a ***"}]
    assert change.is_error is False
    assert change.replace_details and change.details == {"seen": "a ***", "was": True}
    assert await make_runner(lambda pi: pi.on("tool_result", lambda e: None)).emit_tool_result("x", "c", {}, [], None, False) is None


async def test_message_end_replacement_keeps_role() -> None:
    def wrong_role(pi: Any) -> None:
        pi.on("message_end", lambda e: {"message": {"role": "user", "content": "x", "timestamp": 0}})

    def rewrite(pi: Any) -> None:
        pi.on("message_end", lambda e: {"message": {**e["message"], "content": [{"type": "text", "text": "rewritten"}]}})

    runner = make_runner(wrong_role, rewrite)
    message = {"role": "assistant", "content": [{"type": "text", "text": "orig"}], "timestamp": 1}
    result = await runner.emit_message_end(message)  # type: ignore[arg-type]
    assert result["content"] == [{"type": "text", "text": "rewritten"}]
    assert runner.errors[0]["error"] == "message_end handlers must return a message with the same role"


def _compaction(summary: str) -> dict[str, Any]:
    return {"compaction": {"summary": summary, "firstKeptEntryId": "abc", "tokensBefore": 10}}


async def test_before_compact_last_compaction_wins_cancel_short_circuits_errors_fall_back() -> None:
    calls: list[str] = []

    def one(pi: Any) -> None:
        pi.on("session_before_compact", lambda e: calls.append("one") or _compaction("first"))

    def broken(pi: Any) -> None:
        pi.on("session_before_compact", lambda e: calls.append("broken") or 1 / 0)

    def invalid(pi: Any) -> None:
        pi.on("session_before_compact", lambda e: {"compaction": {"summary": 3}})

    def two(pi: Any) -> None:
        pi.on("session_before_compact", lambda e: calls.append("two") or _compaction("second"))

    kwargs = {"preparation": {"tokensBefore": 10}, "branch_entries": [], "custom_instructions": "focus", "reason": "manual", "will_retry": False}
    decision = await make_runner(one, broken, invalid, two).emit_session_before_compact(**kwargs)
    assert calls == ["one", "broken", "two"]
    assert not decision.cancel and decision.from_extension
    assert decision.compaction == {"summary": "second", "firstKeptEntryId": "abc", "tokensBefore": 10}

    calls.clear()
    cancel = make_runner(lambda pi: pi.on("session_before_compact", lambda e: {"cancel": True}), two)
    decision = await cancel.emit_session_before_compact(**kwargs)
    assert decision.cancel and calls == []

    only_errors = make_runner(broken)
    decision = await only_errors.emit_session_before_compact(**kwargs)
    assert not decision.cancel and decision.compaction is None  # default compaction continues


async def test_before_compact_payload_and_follow_up_events() -> None:
    events: list[dict[str, Any]] = []

    def record(pi: Any) -> None:
        for name in ("session_before_compact", "session_compact", "session_compact_failed"):
            pi.on(name, events.append)

    runner = make_runner(record)
    await runner.emit_session_before_compact(preparation={"p": 1}, branch_entries=[{"id": "x"}], custom_instructions=None,
                                             reason="threshold", will_retry=False, signal="sig")
    await runner.emit_session_compact({"type": "compaction", "id": "c1"}, True)
    await runner.emit_session_compact_failed(reason="overflow", error_message="boom", aborted=False, will_retry=True, from_extension=False)
    assert events[0] == {"type": "session_before_compact", "preparation": {"p": 1}, "branchEntries": [{"id": "x"}],
                         "customInstructions": None, "reason": "threshold", "willRetry": False, "signal": "sig"}
    assert events[1] == {"type": "session_compact", "compactionEntry": {"type": "compaction", "id": "c1"}, "fromExtension": True}
    assert events[2] == {"type": "session_compact_failed", "reason": "overflow", "errorMessage": "boom", "aborted": False,
                         "willRetry": True, "fromExtension": False}


async def test_before_tree_and_cancellable_events() -> None:
    def summarize(pi: Any) -> None:
        pi.on("session_before_tree", lambda e: {"summary": {"summary": "mine"}, "label": "L", "customInstructions": "c"})

    runner = make_runner(summarize)
    decision = await runner.emit_session_before_tree({"targetId": "x"})
    assert (decision.cancel, decision.summary, decision.label, decision.custom_instructions) == (False, {"summary": "mine"}, "L", "c")
    cancel = make_runner(lambda pi: pi.on("session_before_tree", lambda e: {"cancel": True}), summarize)
    assert (await cancel.emit_session_before_tree({})).cancel
    fork = make_runner(lambda pi: pi.on("session_before_fork", lambda e: {"cancel": e["entryId"] == "no"}))
    assert await fork.emit_cancellable("session_before_fork", {"entryId": "no", "position": "at"})
    assert not await fork.emit_cancellable("session_before_fork", {"entryId": "ok", "position": "at"})


async def test_provider_request_async_and_sync_paths() -> None:
    def add_header(pi: Any) -> None:
        pi.on("before_provider_request", lambda e: {**e["payload"], "extra": 1})

    runner = make_runner(add_header)
    assert await runner.emit_before_provider_request({"model": "m"}) == {"model": "m", "extra": 1}
    assert runner.before_provider_request_sync({"model": "m"}) == {"model": "m", "extra": 1}

    async def async_handler(event: Any) -> dict[str, Any]:
        return {}

    only_async = make_runner(lambda pi: pi.on("before_provider_request", async_handler))
    assert only_async.before_provider_request_sync({"model": "m"}) is None
    assert "synchronous" in only_async.errors[0]["error"]


async def test_resources_discover_collects_paths() -> None:
    runner = make_runner(
        lambda pi: pi.on("resources_discover", lambda e: {"skillPaths": ["/s"], "promptPaths": ["/p"]}),
        lambda pi: pi.on("resources_discover", lambda e: {"skillPaths": ["/s2", 3]}),
    )
    paths = await runner.emit_resources_discover(Path("/w"), "startup")
    assert (paths.skill_paths, paths.prompt_paths) == (["/s", "/s2"], ["/p"])


async def test_tools_registered_with_snippets_and_duplicates_reported(tmp_path: Path) -> None:
    def tools(pi: Any) -> None:
        pi.register_tool(name="shout", description="Upper-case", execute=lambda cid, args, ctx: args["text"].upper(),
                         prompt_snippet="Shout text", prompt_guidelines=["Shout rarely"])

        async def failing(cid: str, args: dict[str, Any], ctx: Any) -> str:
            raise RuntimeError("nope")

        pi.register_tool(name="fail", description="", execute=failing)

    def duplicate(pi: Any) -> None:
        pi.register_tool(name="shout", description="again", execute=lambda *a: "x")

    runner = make_runner(tools, duplicate)
    assert [t.name for t in runner.tools()] == ["shout", "fail"]
    assert runner.errors[0]["error"] == "tool 'shout' is already registered by /ext/e0.py"
    shout = runner.tools()[0]
    assert (shout.prompt_snippet, shout.prompt_guidelines, shout.label) == ("Shout text", ("Shout rarely",), "shout")
    result = await shout.execute("c1", {"text": "hi"}, ToolContext(cwd=tmp_path))
    assert result.content == [{"type": "text", "text": "HI"}] and not result.is_error
    with pytest.raises(RuntimeError, match="nope"):
        await runner.tools()[1].execute("c2", {}, ToolContext(cwd=tmp_path))


async def test_commands_run_with_ctx_duplicates_are_numbered_and_failures_reported(tmp_path: Path) -> None:
    ran: list[str] = []

    def first(pi: Any) -> None:
        pi.register_command("deploy", lambda args, ctx: ran.append(f"1:{args}:{ctx.cwd.name}"), description="Deploy")
        pi.register_command("/solo", lambda args: ran.append("solo"))

    def second(pi: Any) -> None:
        async def deploy(args: str, ctx: Any) -> None:
            await ctx.compact("keep the plan")
            ran.append("2")

        pi.register_command("deploy", deploy)
        pi.register_command("broken", lambda args: [][1])

    runner = make_runner(first, second)
    host = RecordingHost(tmp_path)
    runner.bind(host)
    assert [c.invocation_name for c in runner.commands()] == ["deploy:1", "solo", "deploy:2", "broken"]
    assert await runner.execute_command("/deploy:1 prod now")
    assert await runner.execute_command("/solo")
    assert await runner.execute_command("/deploy:2")
    assert await runner.execute_command("/broken")
    assert not await runner.execute_command("/deploy x")
    assert not await runner.execute_command("plain")
    assert ran == [f"1:prod now:{tmp_path.name}", "solo", "2"]
    assert host.compactions == ["keep the plan"]
    assert runner.errors[-1]["event"] == "command:/broken" and runner.errors[-1]["error"].startswith("IndexError")


async def test_actions_need_a_bound_host_and_notifications_wait(tmp_path: Path) -> None:
    captured: dict[str, Any] = {}

    def setup(pi: Any) -> None:
        captured["pi"] = pi
        pi.notify("loaded", "warning")
        with pytest.raises(ExtensionNotBoundError, match="append_entry"):
            pi.append_entry("x", {})

    runner = make_runner(setup)
    host = RecordingHost(tmp_path)
    runner.bind(host)
    assert host.notes == [("loaded", "warning")]
    pi = captured["pi"]
    assert pi.append_entry("marker", {"n": 1}) == "e1"
    pi.send_message({"customType": "t", "content": "c", "display": True}, trigger_turn=True)
    pi.set_session_name("named")
    pi.set_label("e1", "important")
    pi.set_active_tools(["read"])
    assert pi.get_active_tools() == ["read"] and pi.get_session_name() == "named"
    assert host.sent == [({"customType": "t", "content": "c", "display": True}, True)]
    assert host.labels == {"e1": "important"}
    result = await pi.exec("echo", "hello")
    assert (result.stdout, result.code) == ("hello\n", 0)


async def test_ctx_exposes_the_session(tmp_path: Path) -> None:
    seen: dict[str, Any] = {}

    def setup(pi: Any) -> None:
        @pi.on("agent_end")
        async def handler(event: Any, ctx: Any) -> None:
            seen.update(cwd=ctx.cwd, sm=ctx.session_manager, usage=ctx.get_context_usage(),
                        prompt=ctx.get_system_prompt(), idle=ctx.is_idle())
            await ctx.abort()

    runner = make_runner(setup)
    host = RecordingHost(tmp_path)
    runner.bind(host)
    await runner.emit("agent_end", {"messages": []})
    assert seen == {"cwd": tmp_path, "sm": "the session manager", "usage": {"tokens": 10, "contextWindow": 100, "percent": 10.0},
                    "prompt": "BASE PROMPT", "idle": True}
    assert host.aborted == 1 and runner.errors == []


async def test_unknown_event_name_warns_once_bound(tmp_path: Path) -> None:
    runner = make_runner(lambda pi: pi.on("turn_ends", lambda e: None))
    host = RecordingHost(tmp_path)
    runner.bind(host)
    assert host.notes == [("/ext/e0.py: pi.on('turn_ends'): no such event; the handler will never run", "warning")]
