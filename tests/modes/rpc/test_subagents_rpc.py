"""RPC with the ``task`` tool (docs/subagents.md "What you see"): the child's events reach the
client as ``subagent_event`` frames between ``subagent_start`` and ``subagent_end``, and
``get_session_stats`` carries ``subagents``, the child's usage."""

from __future__ import annotations

from tests.modes.rpc.conftest import ClientFactory

TURNS = [
    {"when": {"last_user_contains": "PARENT"}, "tool_calls": [{"id": "t1", "name": "task", "arguments": {
        "description": "look", "prompt": "CHILD: list the files"}}], "usage": {"prompt_tokens": 900, "completion_tokens": 9}},
    {"when": {"last_user_contains": "CHILD"}, "tool_calls": [{"id": "c1", "name": "ls", "arguments": {"path": "."}}],
     "usage": {"prompt_tokens": 300, "completion_tokens": 3}},
    {"when": {"last_user_contains": "CHILD"}, "text": "Nothing much here.", "usage": {"prompt_tokens": 400, "completion_tokens": 4}},
    {"when": {"last_user_contains": "PARENT"}, "text": "Done.", "usage": {"prompt_tokens": 1000, "completion_tokens": 10}},
]


async def test_child_events_are_forwarded_and_the_stats_carry_the_subagents(make_client: ClientFactory) -> None:
    client = make_client(TURNS, settings={"subagents": {"enabled": True}}, active_tools=["read", "ls", "task"])
    client.send({"id": "p", "type": "prompt", "message": "PARENT: look around"})
    await client.wait_for(lambda: "agent_end" in client.types())
    frames = client.frames
    kinds = [f["type"] for f in frames]
    start, end = kinds.index("subagent_start"), kinds.index("subagent_end")
    forwarded = [f for f in frames if f["type"] == "subagent_event"]
    assert start < kinds.index("subagent_event") and kinds[start:end + 1].count("subagent_event") == len(forwarded)
    child_id = frames[start]["childId"]
    assert all(f["toolCallId"] == "t1" and f["childId"] == child_id for f in forwarded)
    inner = [f["event"]["type"] for f in forwarded]
    assert inner[0] == "agent_start" and inner[-1] == "agent_end"
    assert any(f["event"]["type"] == "tool_execution_start" and f["event"]["toolName"] == "ls" for f in forwarded)
    assert frames[end]["status"] == "completed"
    used = {"turns": 2, "input": 700, "output": 7, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 707}
    assert {k: frames[end]["usage"][k] for k in used} == used

    stats = await client.request({"id": "s", "type": "get_session_stats"})
    data = stats["data"]
    assert {k: data["subagents"][k] for k in used} == used
    assert data["tokens"]["input"] == 1900  # the parent's own two turns, the child's apart
    await client.close()
