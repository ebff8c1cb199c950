"""build_request_preview: parts, token counts, notes and prompt-cache prefix reuse."""

from __future__ import annotations

from pathlib import Path

from pi_tui.core.context.convert import convert_to_llm
from pi_tui.core.context.preview import (
    MICRO_PLACEHOLDER,
    build_request_preview,
    request_fingerprints,
)
from pi_tui.core.messages import user_message
from pi_tui.core.provider import CompletionRequest, ModelInfo, ToolSpec
from pi_tui.core.session.manager import SessionManager
from pi_tui.core.tokens import count_tokens_exact
from tests.modes.interactive.screens.builders import assistant, tool_result

TOOLS = [ToolSpec(name="read", description="Read a file.", parameters={"type": "object", "properties": {"path": {"type": "string"}}})]
MODEL = ModelInfo(provider="fake", id="fake-model", context_window=8000)
SYSTEM = "You are an expert coding assistant."


def _compacted_session(tmp_path: Path) -> SessionManager:
    manager = SessionManager.in_memory(tmp_path)
    manager.append_message(user_message("old question"))
    manager.append_message(assistant("old answer"))
    kept = manager.append_message(user_message("read a.py"))
    manager.append_compaction("## Goal\nread files", kept, 12_345)
    manager.append_message(assistant(calls=[("c1", "read", {"path": "a.py"})]))
    manager.append_message(
        tool_result("c1", "read", "x = 1\n" * 50, details={"truncation": {"truncated": True, "outputLines": 50, "totalLines": 900}, "fullOutputPath": "/tmp/out.log"})
    )
    manager.append_message(assistant("a.py sets x"))
    return manager


def test_parts_in_request_order_with_exact_counts(tmp_path: Path):
    messages = _compacted_session(tmp_path).build_session_context().messages
    preview = build_request_preview(system_prompt=SYSTEM, tools=TOOLS, messages=messages, model_ref="fake/fake-model", context_window=8000)
    assert [(p.kind, p.name) for p in preview.parts] == [
        ("system", "System prompt"),
        ("tools", "Tools (1): read"),
        ("summary", "compaction summary"),
        ("message", "user"),
        ("message", "assistant → read"),
        ("message", "tool result · read"),
        ("message", "assistant"),
    ]
    assert preview.parts[0].tokens == count_tokens_exact(SYSTEM)
    summary = preview.parts[2]
    assert summary.text.startswith("The conversation history before this point was compacted")
    assert summary.tokens == count_tokens_exact(summary.text)
    assert summary.note == "compaction: replaces 12,345 tokens of earlier history"
    assert preview.parts[5].note == "truncated: 50 of 900 lines sent; full output: /tmp/out.log"
    assert preview.total_tokens == sum(p.tokens for p in preview.parts)
    assert preview.prefix_reuse_tokens is None and preview.prefix_reuse_percent is None


def test_prefix_reuse_counts_the_unchanged_leading_parts(tmp_path: Path):
    manager = _compacted_session(tmp_path)
    before = manager.build_session_context().messages
    previous = request_fingerprints(CompletionRequest(model=MODEL, system_prompt=SYSTEM, messages=convert_to_llm(before), tools=TOOLS))
    manager.append_message(user_message("and b.py?"))
    preview = build_request_preview(system_prompt=SYSTEM, tools=TOOLS, messages=manager.build_session_context().messages, previous=previous)
    assert preview.prefix_reuse_tokens == sum(p.tokens for p in preview.parts[:-1])
    assert preview.previous_request_tokens == preview.prefix_reuse_tokens
    # A changed system prompt invalidates everything after it.
    changed = build_request_preview(system_prompt=SYSTEM + " Be brief.", tools=TOOLS, messages=before, previous=previous)
    assert changed.prefix_reuse_tokens == 0


def test_micro_placeholder_artifacts_and_extra_notes(tmp_path: Path):
    messages = [
        user_message("go"),
        assistant(calls=[("c1", "bash", {"command": "make"}), ("c2", "read", {"path": "big.log"})]),
        tool_result("c1", "bash", MICRO_PLACEHOLDER),
        tool_result("c2", "read", "head…tail", details={"artifact": {"path": "s.artifacts/c2.txt", "original_bytes": 84_000}}),
        {"role": "bashExecution", "command": "ls", "output": "", "exitCode": 0, "cancelled": False, "truncated": False, "timestamp": 1, "excludeFromContext": True},
    ]
    preview = build_request_preview(system_prompt="", tools=[], messages=messages, message_notes={0: "snip: 4 earlier groups dropped"})
    assert [p.name for p in preview.parts] == ["System prompt", "user", "assistant → bash, read", "tool result · bash", "tool result · read"]
    assert [p.note for p in preview.parts[1:]] == [
        "snip: 4 earlier groups dropped",
        "",
        "micro: the tool result's text was cleared from the request",
        "artifact: 84,000 bytes saved to s.artifacts/c2.txt; head/tail preview sent",
    ]


def test_converted_request_messages_are_recognised(tmp_path: Path):
    """The request's own (LLM) messages: summaries and the snip marker still get their names."""
    from pi_tui.core.context.pipeline import snip_marker

    messages = _compacted_session(tmp_path).build_session_context().messages
    llm = [*convert_to_llm(messages[:1]), snip_marker(7, 1), *convert_to_llm(messages[1:])]
    preview = build_request_preview(system_prompt=SYSTEM, tools=[], messages=llm)
    assert [(p.kind, p.name, p.note) for p in preview.parts[1:3]] == [
        ("summary", "compaction summary", "compaction: replaces earlier history"),
        ("message", "snip marker", "snip: 7 earlier message groups omitted from this request"),
    ]


def test_branch_entries_detail_what_the_compaction_replaced(tmp_path: Path):
    manager = _compacted_session(tmp_path)
    branch = manager.get_branch()
    kept = branch[2]["id"]
    assert branch[2]["message"]["content"][0]["text"] == "read a.py"
    preview = build_request_preview(
        system_prompt=SYSTEM, tools=[], messages=manager.build_session_context().messages, branch=branch
    )
    assert preview.parts[1].note == f"compaction: 2 earlier messages (12,345 tokens) summarized; kept from entry {kept}"
