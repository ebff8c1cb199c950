"""Turns an extension asks for (``send_user_message``, ``send_message(trigger_turn=True)``) run in
the background, after the command or handler that asked returns. An abort that lands in
between — ACP's session/cancel right after an extension command returned, Escape, a signal —
cancels them: such a turn used to start anyway, after the client had been told "cancelled"."""

from __future__ import annotations

from typing import Any

import pytest


def _ask_for_a_turn(session: Any, how: str) -> None:
    if how == "user message":
        session.send_user_message("run the tests")
    else:
        session.send_message({"customType": "ci", "content": "the build failed"}, trigger_turn=True)


@pytest.mark.parametrize("how", ["user message", "triggering message"])
async def test_an_abort_before_the_turn_starts_means_it_never_starts(make_session: Any, how: str) -> None:
    session, provider, _ = make_session([{"text": "This turn should not have run."}])
    _ask_for_a_turn(session, how)
    session.request_abort()
    await session.settle_background()
    assert provider.requests == []
    assert [m for m in session.messages if m["role"] in ("user", "assistant")] == []


@pytest.mark.parametrize("how", ["user message", "triggering message"])
async def test_without_an_abort_the_turn_runs(make_session: Any, how: str) -> None:
    session, provider, _ = make_session([{"text": "Ran."}])
    _ask_for_a_turn(session, how)
    await session.settle_background()
    assert len(provider.requests) == 1
    assert session.messages[-1]["role"] == "assistant"


async def test_an_abort_before_an_earlier_request_does_not_cancel_a_later_one(make_session: Any) -> None:
    session, provider, _ = make_session([{"text": "Ran."}])
    session.request_abort()
    session.send_user_message("run the tests")
    await session.settle_background()
    assert len(provider.requests) == 1
