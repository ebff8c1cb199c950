"""The ``task`` tool through the real loop: a child AgentSession with a fresh context."""

from __future__ import annotations

import json
from pathlib import Path

from pi_tui.core.provider import ModelInfo
from tests.subagents.conftest import (
    SUBAGENT,
    child_requests,
    parent_requests,
    read_jsonl,
    read_text,
    text_of_request,
)


def _delegating(child_turns: list[dict], answer: str = "Parent done.") -> list[dict]:
    return [
        {"when": {"last_user_contains": "PARENT"},
         "tool_calls": [{"id": "t1", "name": "task",
                         "arguments": {"description": "find it", "prompt": "CHILD-A: what does notes.txt say?"}}]},
        *child_turns,
        {"when": {"last_user_contains": "PARENT"}, "text": answer},
    ]


async def test_child_gets_a_fresh_context_and_the_parent_only_its_answer(make_parent, project: Path) -> None:
    (project / "notes.txt").write_text("FILE-BODY-SHOULD-STAY-IN-THE-CHILD\n")
    session, provider, events = make_parent(_delegating([
        {"when": {"last_user_contains": "CHILD-A"},
         "tool_calls": [{"id": "r1", "name": "read", "arguments": {"path": "notes.txt"}}]},
        {"when": {"last_user_contains": "CHILD-A"}, "text": "The notes say: the answer is 42."},
    ]))
    await session.prompt("PARENT: please delegate the lookup")
    children = child_requests(provider)
    assert len(children) == 2
    for request in children:
        assert "PARENT" not in text_of_request(request)  # nothing of the parent's conversation
        assert "task" not in [t.name for t in request.tools]  # depth 1: no task inside a child
    assert json.loads(text_of_request(children[0]))[0]["content"][0]["text"].startswith("CHILD-A")
    second = parent_requests(provider)[1]
    assert "the answer is 42" in text_of_request(second)
    assert "FILE-BODY-SHOULD-STAY-IN-THE-CHILD" not in text_of_request(second)

    result = next(m for m in session.messages if m.get("role") == "toolResult")
    assert result["isError"] is False
    details = result["details"]
    assert details["status"] == "completed" and details["agent"] == "general"
    assert details["usage"]["turns"] == 2 and details["usage"]["totalTokens"] > 0
    assert details["lines"] == ["read notes.txt"]
    child_file = Path(details["childSession"])
    entries = read_jsonl(child_file)
    assert entries[0]["type"] == "session"
    assert entries[0]["parentSession"] == str(session.session_manager.session_file)
    roles = [e["message"]["role"] for e in entries if e["type"] == "message"]
    assert roles == ["user", "assistant", "toolResult", "assistant"]
    kinds = [e["type"] for e in events]
    assert "subagent_start" in kinds and "subagent_end" in kinds
    forwarded = [e for e in events if e["type"] == "subagent_event"]
    assert forwarded and all(e["childId"] == details["childSessionId"] and e["toolCallId"] == "t1" for e in forwarded)
    assert any(e["type"] == "tool_execution_update" and e["toolName"] == "task" for e in events)


async def test_child_model_error_is_an_error_result_not_a_hang(make_parent) -> None:
    session, _provider, _ = make_parent(_delegating([
        {"when": {"last_user_contains": "CHILD-A"}, "error": {"status": 400, "message": "bad request from child"}},
    ]))
    await session.prompt("PARENT: delegate")
    result = next(m for m in session.messages if m.get("role") == "toolResult")
    assert result["isError"] is True
    assert "bad request from child" in result["content"][0]["text"]
    assert result["details"]["status"] == "error"
    assert session.messages[-1]["content"][0]["text"] == "Parent done."


async def test_rate_limited_child_retries_then_reports_an_error(make_parent) -> None:
    limited = {"when": {"last_user_contains": "CHILD-A"}, "error": {"status": 429, "message": "slow down"}}
    session, provider, _ = make_parent(_delegating([limited] * 3),
                                       settings={"retry": {"maxRetries": 2, "baseDelayMs": 1}})
    await session.prompt("PARENT: delegate")
    result = next(m for m in session.messages if m.get("role") == "toolResult")
    assert result["isError"] is True and result["details"]["status"] == "error"
    assert len(child_requests(provider)) == 3  # the first call and its two retries
    assert session.messages[-1]["content"][0]["text"] == "Parent done."


async def test_child_overflow_that_cannot_compact_is_an_error_result(make_parent) -> None:
    overflow = {"when": {"last_user_contains": "CHILD-A"},
                "error": {"status": 400, "message": "prompt is too long: context length exceeded",
                          "code": "context_length_exceeded"}}
    session, _, _ = make_parent(_delegating([overflow] * 3))
    await session.prompt("PARENT: delegate")
    result = next(m for m in session.messages if m.get("role") == "toolResult")
    assert result["isError"] is True
    assert result["details"]["status"] == "error"


async def test_unknown_subagent_type_names_the_available_agents(make_parent) -> None:
    session, _, _ = make_parent([
        {"when": {"last_user_contains": "PARENT"},
         "tool_calls": [{"id": "t1", "name": "task", "arguments": {
             "description": "x", "prompt": "do it", "subagent_type": "nope"}}]},
        {"when": {"last_user_contains": "PARENT"}, "text": "ok"},
    ])
    await session.prompt("PARENT: delegate")
    result = next(m for m in session.messages if m.get("role") == "toolResult")
    assert result["isError"] is True
    assert "general" in result["content"][0]["text"] and "explore" in result["content"][0]["text"]


async def test_explore_agent_gets_the_read_only_tools_and_its_own_prompt(make_parent) -> None:
    session, provider, _ = make_parent([
        {"when": {"last_user_contains": "PARENT"},
         "tool_calls": [{"id": "t1", "name": "task", "arguments": {
             "description": "look around", "prompt": "CHILD-E: list things", "subagent_type": "explore"}}]},
        {"when": {"last_user_contains": "CHILD-E"}, "text": "found it"},
        {"when": {"last_user_contains": "PARENT"}, "text": "ok"},
    ])
    await session.prompt("PARENT: delegate")
    (child,) = child_requests(provider)
    assert sorted(t.name for t in child.tools) == ["find", "grep", "ls", "read"]
    assert "exploration agent" in child.system_prompt and SUBAGENT in child.system_prompt


async def test_a_definition_cannot_grant_a_tool_the_parent_lacks(make_parent) -> None:
    session, provider, _ = make_parent([
        {"when": {"last_user_contains": "PARENT"},
         "tool_calls": [{"id": "t1", "name": "task", "arguments": {
             "description": "look", "prompt": "CHILD-G: go"}}]},
        {"when": {"last_user_contains": "CHILD-G"}, "text": "done"},
        {"when": {"last_user_contains": "PARENT"}, "text": "ok"},
    ], tools="read,task")
    await session.prompt("PARENT: delegate")
    (child,) = child_requests(provider)
    assert [t.name for t in child.tools] == ["read"]


async def test_settings_switch_the_tools_on_and_raise_the_depth(project: Path, agent_dir: Path) -> None:
    from pi_tui.sdk import create_agent_session
    from pi_tui.testing.scripted import ScriptedProvider
    from tests.session.conftest import MODEL, FakeClock

    plain = create_agent_session(cwd=project, agent_dir=agent_dir, provider=ScriptedProvider([]), model=MODEL,
                                 load_extensions=False, settings={})
    assert plain.get_active_tools() == ["read", "bash", "edit", "write"]
    assert not {"task", "todo"} & set(plain.get_all_tools())  # built only when asked for
    named = create_agent_session(cwd=project, agent_dir=agent_dir, provider=ScriptedProvider([]), model=MODEL,
                                 load_extensions=False, settings={}, active_tools=["read", "todo"])
    assert named.get_active_tools() == ["read", "todo"] and named.todos is not None
    provider = ScriptedProvider([
        {"when": {"last_user_contains": "PARENT"}, "tool_calls": [{"id": "t1", "name": "task", "arguments": {
            "description": "d", "prompt": "CHILD-1: go deeper"}}]},
        {"when": {"last_user_contains": "CHILD-1"}, "text": "child one done"},
        {"when": {"last_user_contains": "PARENT"}, "text": "ok"},
    ])
    session = create_agent_session(
        cwd=project, agent_dir=agent_dir, provider=provider, model=MODEL, load_extensions=False, clock=FakeClock(),
        settings={"subagents": {"enabled": True, "maxDepth": 2}, "todo": {"enabled": True}})
    assert session.get_active_tools() == ["read", "bash", "edit", "write", "task", "todo"]
    await session.prompt("PARENT: go")
    (child,) = [r for r in provider.requests if SUBAGENT in r.system_prompt]
    assert [t.name for t in child.tools] == ["read", "bash", "edit", "write", "task", "todo"]  # depth 2 allows task


async def test_json_mode_forwards_the_childs_events_marked_with_its_id(make_parent) -> None:
    import io

    from pi_tui.modes.json_mode import attach_json_output

    session, _, _ = make_parent(_delegating([{"when": {"last_user_contains": "CHILD-A"}, "text": "child says hi"}]))
    out = io.StringIO()
    attach_json_output(session, out)
    await session.prompt("PARENT: delegate")
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    start = next(e for e in lines if e.get("type") == "subagent_start")
    child = [e for e in lines if e.get("type") == "subagent_event"]
    assert {e["childId"] for e in child} == {start["childId"]} and {e["toolCallId"] for e in child} == {"t1"}
    kinds = [e["event"]["type"] for e in child]
    assert kinds[0] == "agent_start" and kinds[-1] == "agent_end" and "message_end" in kinds
    end = next(e for e in lines if e.get("type") == "subagent_end")
    assert end["status"] == "completed" and end["usage"]["turns"] == 1


async def test_a_long_answer_is_truncated_and_kept_whole_in_a_file(make_parent) -> None:
    answer = "\n".join(f"finding {i}" for i in range(3000))
    session, provider, _ = make_parent(_delegating([{"when": {"last_user_contains": "CHILD-A"}, "text": answer}]))
    await session.prompt("PARENT: delegate")
    result = next(m for m in session.messages if m.get("role") == "toolResult")
    text = result["content"][0]["text"]
    assert text.startswith("finding 0\n") and "finding 2999" not in text
    full = Path(result["details"]["fullOutputPath"])
    assert read_text(full) == answer
    assert text.endswith(f"[Answer truncated: 2000 of 3000 lines shown. Full answer: {full}]")
    assert "finding 2999" not in text_of_request(parent_requests(provider)[1])


def test_a_session_without_the_tools_never_imports_the_room(project: Path, agent_dir: Path) -> None:
    import subprocess
    import sys

    code = ("import sys\nfrom pathlib import Path\nfrom pi_tui.sdk import create_agent_session\n"
            "from pi_tui.testing.scripted import ScriptedProvider\n"
            f"create_agent_session(cwd=Path({str(project)!r}), agent_dir=Path({str(agent_dir)!r}), "
            "provider=ScriptedProvider([]), load_extensions=False, settings={}, no_session=True)\n"
            "print(sorted(m for m in sys.modules if m.startswith('pi_tui.subagents')))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "[]"  # -p and the TUI's session load pay nothing for task/todo


SUMMARIZER = {"when": {"system_contains": "summarize conversations"}, "text": "## Goal\nCHILD-SUMMARY"}
OVERFLOW = {"status": 400, "message": "prompt is too long: context length exceeded", "code": "context_length_exceeded"}


def _assistant_usages(path: Path) -> list[dict]:
    return [e["message"]["usage"] for e in read_jsonl(path) if e["type"] == "message" and e["message"]["role"] == "assistant"]


async def test_a_child_that_compacted_reports_every_model_call_of_its_run(make_parent, project: Path) -> None:
    for i in range(2):
        (project / f"f{i}.txt").write_text(f"file {i}\n" + ("x" * 79 + "\n") * 100)
    session, _, _ = make_parent(_delegating([
        SUMMARIZER,
        {"when": {"last_user_contains": "CHILD-A"}, "tool_calls": [{"id": "r0", "name": "read", "arguments": {"path": "f0.txt"}}],
         "usage": {"prompt_tokens": 3000, "completion_tokens": 7}},
        {"when": {"last_user_contains": "CHILD-A"}, "tool_calls": [{"id": "r1", "name": "read", "arguments": {"path": "f1.txt"}}],
         "usage": {"prompt_tokens": 5000, "completion_tokens": 11}},
        {"when": {"system_contains": SUBAGENT}, "error": OVERFLOW},
        {"when": {"system_contains": SUBAGENT}, "text": "child answer", "usage": {"prompt_tokens": 2000, "completion_tokens": 13}},
    ]), settings={"compaction": {"keepRecentTokens": 500}})
    await session.prompt("PARENT: delegate")
    result = next(m for m in session.messages if m.get("role") == "toolResult")
    assert result["details"]["status"] == "completed", result["content"]
    child_file = Path(result["details"]["childSession"])
    assert any(e["type"] == "compaction" for e in read_jsonl(child_file))  # the child did compact
    usages = _assistant_usages(child_file)
    usage = result["details"]["usage"]
    # every model call of the child's run, the ones compaction took out of its context included
    # (the summarizer's call is counted nowhere, as for the parent's compactions)
    assert usage["turns"] == len(usages) == 4
    assert usage["input"] == sum(u["input"] for u in usages) == 10_000
    assert usage["output"] == sum(u["output"] for u in usages) == 31
    assert usage["cost"] == sum(u["cost"]["total"] for u in usages) > 0


SMALL = ModelInfo(provider="fake", id="fake-model", context_window=8192, max_tokens=1000)
"""Compaction threshold 6,192 tokens with ``reserveTokens`` 2,000."""


def _reading_child(answer_usage: int) -> list[dict]:
    """Two reads (the second request at 3,000 tokens, the third at 7,000: above the threshold),
    then the answer, whose request is ``answer_usage`` tokens."""
    return [
        SUMMARIZER,
        {"when": {"last_user_contains": "CHILD-A"}, "tool_calls": [{"id": "r0", "name": "read", "arguments": {"path": "f0.txt"}}],
         "usage": {"prompt_tokens": 1000, "completion_tokens": 5}},
        {"when": {"last_user_contains": "CHILD-A"}, "tool_calls": [{"id": "r1", "name": "read", "arguments": {"path": "f1.txt"}}],
         "usage": {"prompt_tokens": 3000, "completion_tokens": 5}},
        {"when": {"system_contains": SUBAGENT}, "text": "child answer", "usage": {"prompt_tokens": answer_usage, "completion_tokens": 5}},
    ]


def _summarizer_calls(provider) -> int:
    return sum("summarize conversations" in r.system_prompt for r in provider.requests)


async def test_a_child_does_not_compact_after_its_answer(make_parent, project: Path) -> None:
    for i in range(2):
        (project / f"f{i}.txt").write_text(f"file {i}\n" + ("x" * 79 + "\n") * 60)
    # Below the threshold until the answer's own request: nothing to compact before a request,
    # and a one-shot child needs no smaller context once it has answered.
    session, provider, events = make_parent(_delegating(_reading_child(answer_usage=7000)), model=SMALL,
                                            settings={"compaction": {"reserveTokens": 2000, "keepRecentTokens": 2000}})
    await session.prompt("PARENT: delegate")
    result = next(m for m in session.messages if m.get("role") == "toolResult")
    assert result["details"]["status"] == "completed"
    assert _summarizer_calls(provider) == 0
    assert [e["type"] for e in read_jsonl(Path(result["details"]["childSession"])) if e["type"] == "compaction"] == []
    forwarded = [e["event"]["type"] for e in events if e["type"] == "subagent_event"]
    assert "compaction_start" not in forwarded
    assert session.messages[-1]["content"][0]["text"] == "Parent done."


async def test_a_child_compacts_on_its_own_threshold_between_its_turns(make_parent, project: Path) -> None:
    for i in range(2):
        (project / f"f{i}.txt").write_text(f"file {i}\n" + ("x" * 79 + "\n") * 60)
    turns = _reading_child(answer_usage=2000)
    turns[2]["usage"]["prompt_tokens"] = 7000  # the third request would be above the threshold
    session, provider, events = make_parent(_delegating(turns), model=SMALL,
                                            settings={"compaction": {"reserveTokens": 2000, "keepRecentTokens": 2000}})
    await session.prompt("PARENT: delegate")
    result = next(m for m in session.messages if m.get("role") == "toolResult")
    assert result["details"]["status"] == "completed"
    assert _summarizer_calls(provider) == 1
    children = child_requests(provider)
    assert len(children) == 3 and "CHILD-SUMMARY" in text_of_request(children[2])  # compacted before it
    kinds = [e["type"] if e["type"] != "message" else e["message"]["role"]
             for e in read_jsonl(Path(result["details"]["childSession"]))]
    assert kinds.index("compaction") < len(kinds) - 1 and kinds[-1] == "assistant"  # not after the answer
    compactions = [e["event"] for e in events if e["type"] == "subagent_event" and e["event"]["type"] == "compaction_end"]
    assert [c["reason"] for c in compactions] == ["threshold"] and compactions[0]["result"] is not None
    assert "compacting its context (threshold)" in result["details"]["lines"]
    assert result["details"]["usage"]["turns"] == 3  # the summarizer's call is not a turn of the child
