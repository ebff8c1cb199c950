"""The seed 004 examples, rewritten as Python extensions in ``examples/``, loaded and run.

Each is run through the runner (its exact rule) and end to end through ``create_agent_session``
with the ``ScriptedProvider``, asserting on the requests the model actually received.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from pi_tui.core.tool import FunctionTool, text_result
from pi_tui.extensions.loader import load_extensions
from pi_tui.sdk import create_agent_session
from pi_tui.testing.scripted import ScriptedProvider

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "extensions"


def text_of_request_messages(request: Any) -> list[str]:
    out = []
    for message in request.messages:
        content = message["content"]
        out.append(content if isinstance(content, str) else "".join(b.get("text", "") for b in content if b.get("type") == "text"))
    return out


def session_with(example: str, cwd: Path, turns: list[dict[str, Any]]) -> tuple[Any, ScriptedProvider]:
    provider = ScriptedProvider(turns)
    session = create_agent_session(cwd=cwd, provider=provider, no_session=True,
                                   extension_paths=[str(EXAMPLES / example)], tools=[])
    return session, provider


def test_every_example_loads_cleanly() -> None:
    paths = sorted(EXAMPLES.glob("*.py"))
    assert len(paths) >= 4
    runner = load_extensions(paths)
    assert runner.errors == []
    assert len(runner.extensions) == len(paths)


# --------------------------------------------------------------------------- trim_context


def _msgs(n: int) -> list[dict[str, Any]]:
    return [{"role": "user" if i % 2 == 0 else "assistant", "content": f"m{i}", "timestamp": i} for i in range(n)]


async def test_trim_context_rule() -> None:
    runner = load_extensions([EXAMPLES / "trim_context.py"])
    short = _msgs(12)
    assert await runner.emit_context(short) == short  # type: ignore[arg-type]
    trimmed = await runner.emit_context(_msgs(20))  # type: ignore[arg-type]
    assert len(trimmed) == 13
    assert trimmed[0]["content"][0]["text"] == "[Trimmed 8 earlier messages: the initial task and old tool output]"
    assert [m["content"] for m in trimmed[1:]] == [f"m{i}" for i in range(8, 20)]
    # A kept part never starts with an orphaned tool result.
    with_tools = _msgs(6) + [{"role": "assistant", "content": [], "timestamp": 6}] + [
        {"role": "toolResult", "toolCallId": f"t{i}", "content": [], "timestamp": 7} for i in range(12)
    ]
    result = await runner.emit_context(with_tools)  # type: ignore[arg-type]
    assert result[1]["role"] == "assistant" and len(result) == 14


async def test_trim_context_end_to_end_keeps_the_session_whole(project: Path) -> None:
    session, provider = session_with("trim_context.py", project, [{"text": f"answer {i}"} for i in range(8)])
    for i in range(8):
        await session.prompt(f"question {i}")
    last = provider.requests[-1]
    texts = text_of_request_messages(last)
    assert texts[0] == "[Trimmed 3 earlier messages: the initial task and old tool output]"
    assert len(texts) == 13 and texts[-1] == "question 7"
    # The canonical history is untouched: all 16 messages are still in the session.
    assert len(session.session_manager.build_session_context().messages) == 16


# --------------------------------------------------------------------------- custom_compaction


def _compact_kwargs(reason: str, tokens: int) -> dict[str, Any]:
    prep = {"tokensBefore": tokens, "firstKeptEntryId": "keep1", "messagesToSummarize": [],
            "fileOps": {"read": ["a.py"], "written": ["b.py"], "edited": ["c.py"]}}
    return {"preparation": prep, "branch_entries": [], "custom_instructions": None, "reason": reason, "will_retry": False}


async def test_custom_compaction_rules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = tmp_path / "failures.jsonl"
    monkeypatch.setenv("PI_TUI_COMPACTION_LOG", str(log))
    runner = load_extensions([EXAMPLES / "custom_compaction.py"])
    assert (await runner.emit_session_before_compact(**_compact_kwargs("threshold", 49_999))).cancel
    for reason, tokens in (("threshold", 50_000), ("manual", 10), ("overflow", 10)):
        decision = await runner.emit_session_before_compact(**_compact_kwargs(reason, tokens))
        assert not decision.cancel and decision.compaction is not None
        assert decision.compaction["firstKeptEntryId"] == "keep1" and decision.compaction["tokensBefore"] == tokens
        assert decision.compaction["summary"].startswith("## Goal\n")
        assert "- b.py\n- c.py" in decision.compaction["summary"]
    await runner.emit_session_compact_failed(reason="overflow", error_message="boom", aborted=False, will_retry=True, from_extension=True)
    (line,) = log.read_text().splitlines()
    record = json.loads(line)
    assert {k: record[k] for k in ("reason", "errorMessage", "aborted", "willRetry", "fromExtension")} == {
        "reason": "overflow", "errorMessage": "boom", "aborted": False, "willRetry": True, "fromExtension": True}
    assert runner.errors == []


async def test_custom_compaction_end_to_end(project: Path) -> None:
    turns = [{"text": "x" * 400, "usage": {"prompt_tokens": 100, "completion_tokens": 100}} for _ in range(4)]
    session, provider = session_with("custom_compaction.py", project, turns)
    for i in range(4):
        await session.prompt(f"step {i} " + "y" * 400)
    calls_before = len(provider.requests)
    await session.compact()
    assert len(provider.requests) == calls_before  # the extension's summary replaced the model call
    compactions = [e for e in session.session_manager.get_entries() if e["type"] == "compaction"]
    assert len(compactions) == 1
    assert compactions[0]["summary"].startswith("## Goal\nContinue fixing the type errors.")
    assert compactions[0]["fromHook"] is True


# --------------------------------------------------------------------------- project_state


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                   env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@t", "HOME": str(cwd), "PATH": "/usr/bin:/bin"})


async def test_project_state_is_read_fresh_for_every_request(project: Path) -> None:
    _git(project, "init", "-q", "-b", "feature/fix-types")
    (project / "types.py").write_text("x = 1\n")
    _git(project, "add", "types.py")
    _git(project, "commit", "-q", "-m", "init")
    turns = [{"tool_calls": [{"name": "touch", "arguments": {}}]}, {"text": "done"}]

    async def touch(call_id: str, args: dict[str, Any], ctx: Any) -> Any:
        (project / "types.py").write_text("x = 2\n")  # the project changes between two model calls
        return text_result("modified")

    tool = FunctionTool(name="touch", description="modify", parameters={"type": "object", "properties": {}}, run=touch)
    provider = ScriptedProvider(turns)
    session = create_agent_session(cwd=project, provider=provider, no_session=True, tools=[tool],
                                   extension_paths=[str(EXAMPLES / "project_state.py")])
    await session.prompt("fix it")
    first, second = (text_of_request_messages(r)[-1] for r in provider.requests)
    assert first == "<project-state>\nbranch: feature/fix-types\nchanged files: (none)\n</project-state>"
    assert second == "<project-state>\nbranch: feature/fix-types\nchanged files: types.py\n</project-state>"
    stored = [m for m in session.session_manager.build_session_context().messages if m["role"] == "user"]
    assert len(stored) == 1  # never written into the session


# --------------------------------------------------------------------------- review_mode (per-turn system prompt)


async def test_per_turn_system_prompt_holds_for_the_run_and_is_restored(project: Path) -> None:
    turns = [
        {"tool_calls": [{"name": "word_count", "arguments": {"text": "three little words"}}]},
        {"text": "It has 3 words."},
        {"text": "normal answer"},
    ]
    session, provider = session_with("review_mode.py", project, turns)
    session.set_active_tools(["word_count"])
    base = session.base_system_prompt
    assert "- word_count: Count words and characters of a text" in base
    await session.prompt("/review-mode on")
    assert provider.requests == []  # the command ran instead of the model
    await session.prompt("count the words")
    assert len(provider.requests) == 2
    for request in provider.requests:  # the first call and the tool-call continuation
        assert request.system_prompt.endswith("most severe first.")
        assert request.system_prompt.startswith(base.split("\nCurrent date:")[0])
    tool_results = [m for m in session.session_manager.build_session_context().messages if m["role"] == "toolResult"]
    assert tool_results[0]["content"][0]["text"] == "3 words, 18 characters"
    assert "Review mode is on" not in session.base_system_prompt
    await session.prompt("/review-mode off")
    await session.prompt("hello")
    assert "Review mode is on" not in provider.requests[-1].system_prompt
