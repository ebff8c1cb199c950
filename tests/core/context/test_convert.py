"""convert_to_llm (spec §1.5): pass-through roles, wrapper texts, bash rendering, blockImages."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from pi_tui.core.context.convert import (
    BRANCH_SUMMARY_PREFIX,
    COMPACTION_SUMMARY_PREFIX,
    bash_execution_to_text,
    convert_to_llm,
)


def bash(**overrides: Any) -> dict[str, Any]:
    message = {"role": "bashExecution", "command": "ls", "output": "a\nb", "exitCode": 0,
               "cancelled": False, "truncated": False, "timestamp": 5}
    message.update(overrides)
    return message


def text_of(message: dict) -> str:
    return message["content"][0]["text"]


def test_user_assistant_and_tool_results_pass_through_as_the_same_objects():
    messages = [
        {"role": "user", "content": "hi", "timestamp": 1},
        {"role": "assistant", "content": [], "api": "x", "provider": "p", "model": "m", "usage": {},
         "stopReason": "stop", "timestamp": 2},
        {"role": "toolResult", "toolCallId": "c", "toolName": "t", "content": [], "isError": False, "timestamp": 3},
    ]
    converted = convert_to_llm(messages)
    assert all(a is b for a, b in zip(converted, messages, strict=True))


def test_compaction_and_branch_summary_wrappers_are_exact():
    converted = convert_to_llm([
        {"role": "compactionSummary", "summary": "S1", "tokensBefore": 9, "timestamp": 7},
        {"role": "branchSummary", "summary": "S2", "fromId": "x", "timestamp": 8},
    ])
    assert converted[0] == {
        "role": "user",
        "content": [{"type": "text", "text": "The conversation history before this point was compacted into the "
                     "following summary:\n\n<summary>\nS1\n</summary>"}],
        "timestamp": 7,
    }
    assert text_of(converted[1]) == (
        "The following is a summary of a branch that this conversation came back from:\n\n<summary>\nS2</summary>"
    )
    assert COMPACTION_SUMMARY_PREFIX.endswith("<summary>\n") and BRANCH_SUMMARY_PREFIX.endswith("<summary>\n")


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        ({}, "Ran `ls`\n```\na\nb\n```"),
        ({"output": ""}, "Ran `ls`\n(no output)"),
        ({"exitCode": 2}, "Ran `ls`\n```\na\nb\n```\n\nCommand exited with code 2"),
        ({"exitCode": None}, "Ran `ls`\n```\na\nb\n```"),
        ({"cancelled": True, "exitCode": 130}, "Ran `ls`\n```\na\nb\n```\n\n(command cancelled)"),
        ({"truncated": True, "fullOutputPath": "/tmp/o.log"},
         "Ran `ls`\n```\na\nb\n```\n\n[Output truncated. Full output: /tmp/o.log]"),
        ({"truncated": True}, "Ran `ls`\n```\na\nb\n```"),
    ],
)
def test_bash_execution_rendering(overrides: dict, expected: str):
    message = bash(**overrides)
    assert bash_execution_to_text(message) == expected
    assert convert_to_llm([message]) == [{"role": "user", "content": [{"type": "text", "text": expected}], "timestamp": 5}]


def test_excluded_bash_and_unknown_roles_are_dropped():
    assert convert_to_llm([bash(excludeFromContext=True), {"role": "mystery", "timestamp": 1}]) == []


def test_custom_messages_become_user_messages():
    image = {"type": "image", "data": "AAA", "mimeType": "image/png"}
    converted = convert_to_llm([
        {"role": "custom", "customType": "x", "content": "note", "display": True, "timestamp": 3},
        {"role": "custom", "customType": "x", "content": [{"type": "text", "text": "t"}, image], "display": False,
         "details": {"a": 1}, "timestamp": 4},
    ])
    assert converted == [
        {"role": "user", "content": [{"type": "text", "text": "note"}], "timestamp": 3},
        {"role": "user", "content": [{"type": "text", "text": "t"}, image], "timestamp": 4},
    ]


def test_block_images_replaces_and_collapses_without_mutating():
    image = {"type": "image", "data": "AAA", "mimeType": "image/png"}
    user = {"role": "user", "content": [{"type": "text", "text": "look"}, image, image, {"type": "text", "text": "x"}, image],
            "timestamp": 1}
    result = {"role": "toolResult", "toolCallId": "c", "toolName": "read", "content": [image], "isError": False,
              "timestamp": 2}
    plain = {"role": "user", "content": "no images", "timestamp": 3}
    before = copy.deepcopy([user, result, plain])
    converted = convert_to_llm([user, result, plain], block_images=True)
    notice = {"type": "text", "text": "Image reading is disabled."}
    assert converted[0]["content"] == [{"type": "text", "text": "look"}, notice, {"type": "text", "text": "x"}, notice]
    assert converted[1]["content"] == [notice]
    assert converted[2] is plain
    assert [user, result, plain] == before
    assert convert_to_llm([user])[0] is user  # off by default
