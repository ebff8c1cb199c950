"""Session titles in the real app: asked for once, in the background (the answer is not held up),
stored as pi's session_info name (footer, /resume), never over a /name, failures only logged."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from typing import Any

from pi_tui.core.session.listing import list_sessions
from pi_tui.modes.interactive.widgets.assistant_message import AssistantMessageView
from pi_tui.modes.interactive.widgets.editor import PromptEditor
from pi_tui.modes.interactive.widgets.footer import StatusFooter
from pi_tui.modes.interactive.widgets.markdown_stream import StreamedMarkdown
from pi_tui.session.titles import TITLE_SYSTEM_PROMPT, clean_title, first_exchange
from pi_tui.testing.scripted import ScriptedProvider
from tests.modes.interactive.conftest import ready, settle, wait_for

SIZE = (110, 30)
ON = {"sessionTitles": {"enabled": True}}


class TitleProvider:
    """The scripted provider for the runs; title requests (recognised by their system prompt)
    are counted and held until ``release`` is set, then answered with ``title_turn``."""

    def __init__(self, turns: list[dict[str, Any]], title_turn: dict[str, Any]) -> None:
        self.runs = ScriptedProvider(turns)
        self.titles = ScriptedProvider([title_turn])
        self.release = asyncio.Event()

    @property
    def title_requests(self) -> list[Any]:
        return self.titles.requests

    async def stream(self, request: Any) -> AsyncIterator[Any]:
        if request.system_prompt == TITLE_SYSTEM_PROMPT:
            self.titles.requests.append(request)
            await self.release.wait()
            self.titles.requests.pop()  # the inner provider records it again
            async for event in self.titles.stream(request):
                yield event
            return
        async for event in self.runs.stream(request):
            yield event


async def send(pilot: Any, text: str) -> None:
    pilot.app.screen.query_one(PromptEditor).insert(text)
    await pilot.press("enter")


def stored_names(session: Any) -> list[str]:
    path = session.session_manager.session_file
    lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [e.get("name") for e in lines if e.get("type") == "session_info"]


def test_the_reply_becomes_a_short_title():
    assert clean_title('"Fix the **parser** crash."\nmore') == "Fix the **parser** crash"
    assert clean_title("Title: Parser crash on empty input") == "Parser crash on empty input"
    assert clean_title("\x1b]0;evil\x07Rename\x1b[2J module") == "Rename module"
    long = clean_title("word " * 40)
    assert len(long) <= 61 and long.endswith("…")


def test_the_first_real_answer_is_used():
    messages = [
        {"role": "user", "content": "why does it crash"},
        {"role": "assistant", "stopReason": "error", "content": [], "errorMessage": "503"},
    ]
    assert first_exchange(messages) is None
    messages.append({"role": "assistant", "stopReason": "stop", "content": [{"type": "text", "text": "Because."}]})
    assert first_exchange(messages) == ("why does it crash", "Because.")


async def test_a_title_is_asked_once_in_the_background_and_shown(make_app):
    provider = TitleProvider([{"text": "The parser fails on empty input; fixed."}, {"text": "Second answer."},
                              {"text": "Third answer."}],
                             {"text": "Parser empty-input fix."})
    app, session = make_app(provider=provider, settings=ON)
    async with app.run_test(size=(220, 30)) as pilot:  # wide: the footer's tmp cwd is long
        await ready(pilot)
        await send(pilot, "fix the parser crash on empty input")
        await settle(app, pilot)  # the run is over although the title request still waits
        await wait_for(pilot, lambda: len(provider.title_requests) == 1)
        assert session.is_idle() and session.get_session_name() is None
        answer = app.screen.query(AssistantMessageView).last().query_one(StreamedMarkdown)
        assert answer.text == "The parser fails on empty input; fixed."  # shown while the title waits
        request = provider.title_requests[0]
        assert request.tools == [] and request.session_id is None and request.max_tokens == 64
        assert "fix the parser crash on empty input" in request.messages[0]["content"][0]["text"]
        await send(pilot, "and another thing")  # the next prompt does not wait for the title either
        await settle(app, pilot)
        assert len(provider.runs.requests) == 2
        provider.release.set()
        await wait_for(pilot, lambda: session.get_session_name() == "Parser empty-input fix")
        await pilot.pause()
        footer = app.screen.query_one(StatusFooter)
        assert footer.data.session_name == "Parser empty-input fix"
        assert "• Parser empty-input fix" in str(footer.render())
        assert stored_names(session) == ["Parser empty-input fix"]
        listed = list_sessions(session.session_manager.session_file.parent)  # what /resume lists
        assert [i.name for i in listed] == ["Parser empty-input fix"]
        await send(pilot, "third")
        await settle(app, pilot)
        await pilot.pause(0.2)
        assert len(provider.titles.requests) == 1  # never twice


async def test_name_wins_over_a_title_arriving_later(make_app, caplog):
    caplog.set_level(logging.INFO, logger="pi_tui.session.titles")
    provider = TitleProvider([{"text": "Answer."}], {"text": "Generated title"})
    app, session = make_app(provider=provider, settings=ON)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "question")
        await settle(app, pilot)
        await wait_for(pilot, lambda: len(provider.title_requests) == 1)
        await send(pilot, "/name My own name")
        await wait_for(pilot, lambda: session.get_session_name() == "My own name")
        provider.release.set()
        await wait_for(pilot, lambda: "not used" in caplog.text)
        assert session.get_session_name() == "My own name"
        assert stored_names(session) == ["My own name"]


async def test_a_named_session_is_never_titled(make_app):
    provider = TitleProvider([{"text": "Answer."}], {"text": "Generated title"})
    provider.release.set()
    app, session = make_app(provider=provider, settings=ON)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "/name Chosen")
        await wait_for(pilot, lambda: session.get_session_name() == "Chosen")
        await send(pilot, "question")
        await settle(app, pilot)
        await pilot.pause(0.2)
        assert provider.title_requests == [] and provider.titles.requests == []


async def test_a_failed_title_is_logged_not_shown(make_app, caplog):
    caplog.set_level(logging.WARNING, logger="pi_tui.session.titles")
    provider = TitleProvider([{"text": "Answer."}], {"error": {"status": 400, "message": "model not allowed"}})
    provider.release.set()
    app, session = make_app(provider=provider, settings=ON)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "question")
        await settle(app, pilot)
        await wait_for(pilot, lambda: "session title request failed" in caplog.text)
        await pilot.pause()
        assert session.get_session_name() is None
        from pi_tui.modes.interactive.widgets.chat_items import ErrorBlock, Notice

        shown = [str(n.text) for n in app.screen.query(Notice)] + [str(e) for e in app.screen.query(ErrorBlock)]
        assert not any("title" in s.lower() or "not allowed" in s for s in shown)
        assert "model not allowed" in caplog.text


async def test_an_unknown_title_model_skips_quietly(make_app, caplog):
    caplog.set_level(logging.WARNING, logger="pi_tui.session.titles")
    provider = TitleProvider([{"text": "Answer."}], {"text": "never"})
    provider.release.set()
    app, session = make_app(provider=provider, settings={"sessionTitles": {"enabled": True, "model": "nope/nothing"}})
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "question")
        await settle(app, pilot)
        await wait_for(pilot, lambda: "not a known model" in caplog.text)
        assert provider.title_requests == [] and session.get_session_name() is None


async def test_titles_are_off_by_default(make_app):
    provider = TitleProvider([{"text": "Answer."}], {"text": "Generated"})
    provider.release.set()
    app, session = make_app(provider=provider)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "question")
        await settle(app, pilot)
        await pilot.pause(0.2)
        assert provider.title_requests == [] and session.get_session_name() is None


async def test_each_new_session_gets_its_own_title(make_app):
    provider = TitleProvider([{"text": "First answer."}, {"text": "Other answer."}], {"text": "Unused"})
    provider.titles = ScriptedProvider([{"text": "First topic"}, {"text": "Second topic"}])
    provider.release.set()
    app, session = make_app(provider=provider, settings=ON)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "one")
        await settle(app, pilot)
        await wait_for(pilot, lambda: session.get_session_name() == "First topic")
        first_file = session.session_manager.session_file
        await send(pilot, "/new")
        await wait_for(pilot, lambda: session.session_manager.session_file != first_file)
        await settle(app, pilot)
        assert session.get_session_name() is None
        await send(pilot, "two")
        await settle(app, pilot)
        await wait_for(pilot, lambda: session.get_session_name() == "Second topic")
        assert len(provider.titles.requests) == 2
