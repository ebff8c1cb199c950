"""The history's own message objects reach the request pipeline uncopied (issue 12: the
preparation cache recognises them in O(1)). Whatever outside pi-tui gets them must get a copy:
code of ours never changes them (tests/providers/test_encoders_leave_history_alone.py), but an
SDK hook may."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from pi_tui.core.context.convert import convert_to_llm

TURNS = [
    {"tool_calls": [{"id": "c1", "name": "ls", "arguments": {"path": "."}}]},
    {"text": "Listed."},
    {"text": "Again."},
]


def scribbling_convert(messages: list[Any]) -> list[Any]:
    """An SDK ``convert_to_llm`` that edits what it gets before projecting it."""
    for message in messages:
        message["scribbled"] = True
        for block in message.get("content") if isinstance(message.get("content"), list) else []:
            block["text"] = "SCRIBBLED" if "text" in block else block.get("text")
            if isinstance(block.get("arguments"), dict):
                block["arguments"]["path"] = "SCRIBBLED"
    return convert_to_llm(messages)


@pytest.mark.parametrize("strategy", ["pi", "pipeline"])
async def test_an_sdk_convert_to_llm_that_edits_its_input_leaves_the_history_alone(make_session: Any, strategy: str) -> None:
    from pi_tui.resources.settings import SettingsManager

    session, provider, _ = make_session(TURNS, settings=SettingsManager.in_memory({"context": {"strategy": strategy}}))
    session.convert_to_llm = scribbling_convert
    await session.prompt("list the files")
    kept = copy.deepcopy(session.messages)
    await session.prompt("once more")
    assert session.messages[: len(kept)] == kept
    assert not any("scribbled" in m for m in session.messages)
    call = next(b for m in session.messages if m["role"] == "assistant" for b in m["content"] if b["type"] == "toolCall")
    assert call["arguments"] == {"path": "."}
    assert "SCRIBBLED" in str(provider.requests[-1].messages)  # the hook did run on what was sent
