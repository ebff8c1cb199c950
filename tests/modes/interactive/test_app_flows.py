"""The real app on a real session (scripted provider), driven by the Textual pilot."""

from __future__ import annotations

from pi_tui.modes.interactive.widgets.assistant_message import AssistantMessageView
from pi_tui.modes.interactive.widgets.chat_items import ErrorBlock, SummaryBlock, UserMessageView
from pi_tui.modes.interactive.widgets.completion import CompletionMenu
from pi_tui.modes.interactive.widgets.editor import PromptEditor
from pi_tui.modes.interactive.widgets.events_pane import EventEntry, EventsPane
from pi_tui.modes.interactive.widgets.first_run import FirstRunNotice
from pi_tui.modes.interactive.widgets.markdown_stream import StreamedMarkdown
from pi_tui.modes.interactive.widgets.status import QueueView, WorkingStatus
from pi_tui.modes.interactive.widgets.tool_call import ToolCallPanel
from tests.modes.interactive.conftest import GatedProvider, ready, settle, wait_for

SIZE = (120, 40)


async def _type(pilot, text: str) -> None:
    await ready(pilot)
    editor = pilot.app.screen.query_one(PromptEditor)
    editor.insert(text)
    await pilot.pause()


async def test_a_prompt_streams_into_markdown(make_app):
    text = "Hello **world**, this answer arrives in many small pieces."
    app, session = make_app([{"text": text, "chunk_size": 4}])
    async with app.run_test(size=SIZE) as pilot:
        await _type(pilot, "say hello")
        await pilot.press("enter")
        await settle(app, pilot)
        chat = app.screen
        users = chat.query(UserMessageView)
        assert [u.text for u in users] == ["say hello"]
        views = chat.query(AssistantMessageView)
        assert len(views) == 1
        md = views.first().query_one(StreamedMarkdown)
        assert md.text == text
        assert chat.query_one(PromptEditor).text == ""
        assert session.state.is_streaming is False


async def test_a_tool_call_renders_runs_and_completes(make_app, project):
    (project / "notes.txt").write_text("alpha\nbeta\n")
    app, _session = make_app([
        {"text": "Reading it.", "tool_calls": [{"id": "call-1", "name": "read", "arguments": {"path": "notes.txt"}}]},
        {"text": "It has two lines."},
    ])
    async with app.run_test(size=SIZE) as pilot:
        await _type(pilot, "read notes.txt")
        await pilot.press("enter")
        await settle(app, pilot)
        panel = app.screen.query_one(ToolCallPanel)
        assert panel.call_id == "call-1"
        assert panel.state.status == "ok"
        assert panel.has_class("-ok")
        assert panel.state.output is not None and "alpha" in panel.state.output
        assert panel.duration is not None
        assert "read[/bold]  notes.txt" in str(panel.border_title)
        answers = [v.query(StreamedMarkdown) for v in app.screen.query(AssistantMessageView)]
        assert answers[-1].first().text == "It has two lines."


async def test_bash_output_shows_live_and_finishes(make_app):
    app, _ = make_app([
        {"tool_calls": [{"id": "b1", "name": "bash", "arguments": {"command": "printf 'one\\ntwo\\n'"}}]},
        {"text": "ok"},
    ])
    async with app.run_test(size=SIZE) as pilot:
        await _type(pilot, "run it")
        await pilot.press("enter")
        await settle(app, pilot)
        panel = app.screen.query_one(ToolCallPanel)
        assert panel.state.status == "ok"
        assert panel.state.output is not None and panel.state.output.strip() == "one\ntwo"


async def test_escape_aborts_the_run_and_restores_queued_messages(make_app):
    provider = GatedProvider([{"text": "never shown"}, {"text": "after"}])
    app, session = make_app(provider=provider)
    async with app.run_test(size=SIZE) as pilot:
        await _type(pilot, "go slowly")
        await pilot.press("enter")
        await wait_for(pilot, provider.waiting.is_set)
        assert app.screen.query_one(WorkingStatus).display
        await _type(pilot, "queued steer")
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.screen.query_one(QueueView).display)
        assert "Steering: queued steer" in str(app.screen.query_one(QueueView).render())
        await pilot.press("escape")
        await settle(app, pilot)
        assert session.state.is_streaming is False
        assert app.screen.query_one(PromptEditor).text == "queued steer"
        assert any(e.message == "Operation aborted" for e in app.screen.query(ErrorBlock))
        assert not app.screen.query_one(QueueView).display
        assert not app.screen.query_one(WorkingStatus).display


async def test_steering_and_follow_up_are_delivered(make_app):
    provider = GatedProvider([
        {"text": "first answer"},
        {"when": {"last_user_contains": "steer me"}, "text": "steered answer"},
        {"when": {"last_user_contains": "and then this"}, "text": "follow-up answer"},
    ])
    app, _session = make_app(provider=provider)
    async with app.run_test(size=SIZE) as pilot:
        await _type(pilot, "start")
        await pilot.press("enter")
        await wait_for(pilot, provider.waiting.is_set)
        await _type(pilot, "steer me")
        await pilot.press("enter")
        await _type(pilot, "and then this")
        await pilot.press("alt+enter")
        await wait_for(pilot, lambda: "Follow-up: and then this" in str(app.screen.query_one(QueueView).render()))
        queue_text = str(app.screen.query_one(QueueView).render())
        assert "Steering: steer me" in queue_text and "alt+up to edit all queued messages" in queue_text
        provider.gate.set()
        await settle(app, pilot)
        users = [u.text for u in app.screen.query(UserMessageView)]
        assert users == ["start", "steer me", "and then this"]
        texts = [md.text for md in app.screen.query(StreamedMarkdown)]
        assert texts == ["first answer", "steered answer", "follow-up answer"]
        assert not app.screen.query_one(QueueView).display


async def test_alt_up_pulls_queued_messages_back(make_app):
    provider = GatedProvider([{"text": "a"}])
    app, session = make_app(provider=provider)
    async with app.run_test(size=SIZE) as pilot:
        await _type(pilot, "start")
        await pilot.press("enter")
        await wait_for(pilot, provider.waiting.is_set)
        await _type(pilot, "one")
        await pilot.press("enter")
        await _type(pilot, "two")
        await pilot.press("alt+enter")
        await wait_for(pilot, lambda: app.screen.query_one(QueueView).display)
        await pilot.press("alt+up")
        await pilot.pause()
        assert app.screen.query_one(PromptEditor).text == "one\n\ntwo"
        assert session.state.steering == [] and session.state.follow_up == []
        provider.gate.set()
        await settle(app, pilot)
        assert [u.text for u in app.screen.query(UserMessageView)] == ["start"]


async def test_compact_shows_its_block_and_events(make_app):
    turns = [{"text": f"answer {i} " + "detail " * 60} for i in range(3)]
    summary = {"when": {"last_user_contains": "<conversation>"}, "text": "## Goal\nShort summary."}
    turns += [summary, dict(summary)]  # history summary + turn-prefix summary when the cut splits a turn
    app, _session = make_app(turns, settings={"compaction": {"keepRecentTokens": 50}})
    async with app.run_test(size=SIZE) as pilot:
        for i in range(3):
            await _type(pilot, f"question {i} " + "context " * 30)
            await pilot.press("enter")
            await settle(app, pilot)
        await _type(pilot, "/compact")
        await pilot.press("enter")
        await settle(app, pilot)
        blocks = app.screen.query(SummaryBlock)
        assert len(blocks) == 1 and blocks.first().kind == "compaction"
        assert "Short summary." in blocks.first().summary
        titles = [e.line.title for e in app.screen.query_one(EventsPane).query(EventEntry)]
        assert titles == ["compaction ▶", "compaction ✓"]
        assert app.screen.renderer.context_unknown
        footer = str(app.screen.query_one("#footer").render())
        assert "unknown/" in footer


async def test_a_failed_compact_shows_its_failure_once(make_app):
    """The worker that ran /compact and the compaction_end event both reported the failure; which
    one came first depended on the event batch, and both were shown."""
    turns = [{"text": f"answer {i} " + "detail " * 60} for i in range(2)]
    turns += [{"when": {"last_user_contains": "<conversation>"}, "error": {"status": 400, "message": "summarizer broke"}}
              for _ in range(2)]
    app, session = make_app(turns, settings={"compaction": {"keepRecentTokens": 50}})
    async with app.run_test(size=SIZE) as pilot:
        for i in range(2):
            await _type(pilot, f"question {i} " + "context " * 30)
            await pilot.press("enter")
            await settle(app, pilot)
        await _type(pilot, "/compact")
        await pilot.press("enter")
        await settle(app, pilot)
        await wait_for(pilot, lambda: bool(app.screen.query(ErrorBlock)))
        for _ in range(5):  # let every pending batch and callback land
            await pilot.pause(0.05)
        errors = [b.message for b in app.screen.query(ErrorBlock)]
        assert errors == ["Compaction failed: Summarization failed: 400 summarizer broke"]
        titles = [e.line.title for e in app.screen.query_one(EventsPane).query(EventEntry)]
        assert titles == ["compaction ▶", "compaction failed"]
        assert not session.is_compacting


async def test_compact_with_nothing_to_compact_warns(make_app):
    app, _ = make_app([])
    async with app.run_test(size=SIZE) as pilot:
        await _type(pilot, "/compact")
        await pilot.press("enter")
        await pilot.pause()
        assert "Nothing to compact (no messages yet)" in str(app.screen.query_one("#conversation").children[-1].render())


async def test_completion_offers_templates_and_skills(make_app, project):
    prompts = project / ".pi" / "prompts"
    prompts.mkdir(parents=True)
    (prompts / "review.md").write_text("---\ndescription: Review a file\nargument-hint: <file>\n---\nReview $1\n")
    skill = project / ".pi" / "skills" / "pdf-tools"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: pdf-tools\ndescription: Work with PDF files\n---\nUse pdftotext.\n")
    app, _ = make_app([], settings=None)
    async with app.run_test(size=SIZE) as pilot:
        await _type(pilot, "/re")
        menu = app.screen.query_one(CompletionMenu)
        assert menu.display
        labels = {i.label: i for i in menu.items}
        assert "/review" in labels and labels["/review"].hint == "<file>"
        assert labels["/review"].description == "Review a file"
        await pilot.press("backspace", "backspace")
        await _type(pilot, "skill:")
        assert "/skill:pdf-tools" in [i.label for i in menu.items]
        await _type(pilot, "pdf")
        await pilot.press("tab")
        assert app.screen.query_one(PromptEditor).text == "/skill:pdf-tools "
        assert not menu.display


async def test_file_completion_after_at(make_app, project):
    (project / "src").mkdir()
    (project / "src" / "server.py").write_text("")
    app, _ = make_app([])
    async with app.run_test(size=SIZE) as pilot:
        await _type(pilot, "look at @serv")
        menu = app.screen.query_one(CompletionMenu)
        assert menu.display and menu.items[0].label == "src/server.py"
        await pilot.press("tab")
        assert app.screen.query_one(PromptEditor).text == "look at @src/server.py"


async def test_first_run_screen_without_a_model(project, agent_dir):
    from pi_tui.modes.interactive.app import PiApp
    from pi_tui.sdk import create_agent_session

    session = create_agent_session(cwd=project, agent_dir=agent_dir, settings={}, load_extensions=False)
    assert session.state.model is None
    app = PiApp(session, cwd=project, agent_dir=agent_dir)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        notices = app.screen.query(FirstRunNotice)
        assert len(notices) == 1
        text = str(notices.first().render())
        for expected in ("ANTHROPIC_API_KEY", "--model", "models.json", str(agent_dir)):
            assert expected in text
        await _type(pilot, "hello?")
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen.query_one(PromptEditor).text == "hello?"  # nothing is lost
        assert len(app.screen.query(FirstRunNotice)) == 2


async def test_ctrl_o_and_ctrl_t_toggle_tools_and_thinking(make_app):
    app, _ = make_app([{"thinking": "pondering deeply", "text": "answer",
                        "tool_calls": [{"name": "bash", "arguments": {"command": "echo hi"}}]}, {"text": "end"}])
    async with app.run_test(size=SIZE) as pilot:
        await _type(pilot, "go")
        await pilot.press("enter")
        await settle(app, pilot)
        panel = app.screen.query_one(ToolCallPanel)
        assert panel.expanded is False
        await pilot.press("ctrl+o")
        assert panel.expanded is True
        from pi_tui.modes.interactive.widgets.chat_items import ThinkingBlock

        block = app.screen.query_one(ThinkingBlock)
        assert "Thinking…" in str(block.render()) and "pondering" not in str(block.render())
        await pilot.press("ctrl+t")
        assert "pondering deeply" in str(block.render())


async def test_user_bash_runs_and_double_bang_is_not_sent(make_app):
    from pi_tui.modes.interactive.widgets.chat_items import BashOutputBlock

    app, session = make_app([])
    async with app.run_test(size=SIZE) as pilot:
        await _type(pilot, "!!echo private")
        await pilot.press("enter")
        await settle(app, pilot)
        block = app.screen.query_one(BashOutputBlock)
        assert block.excluded and "private" in block.output
        assert session.messages[-1]["role"] == "bashExecution"


async def test_ctrl_c_clears_then_quits_on_double_press(make_app):
    app, _ = make_app([])
    async with app.run_test(size=SIZE) as pilot:
        await _type(pilot, "draft")
        await pilot.press("ctrl+c")
        assert app.screen.query_one(PromptEditor).text == ""
        await pilot.press("ctrl+c")
        await pilot.press("ctrl+c")
        await pilot.pause()
    assert app.return_code == 0 or app.return_code is None
    assert not app.is_running


async def test_history_recalls_sent_messages(make_app):
    app, _ = make_app([{"text": "a"}, {"text": "b"}])
    async with app.run_test(size=SIZE) as pilot:
        for text in ("first", "second"):
            await _type(pilot, text)
            await pilot.press("enter")
            await settle(app, pilot)
        await pilot.press("up")
        assert app.screen.query_one(PromptEditor).text == "second"
        await pilot.press("up")
        assert app.screen.query_one(PromptEditor).text == "first"
        await pilot.press("down", "down")
        assert app.screen.query_one(PromptEditor).text == ""


async def test_tree_navigates_back_without_a_summary(make_app):
    app, session = make_app([{"text": "first answer"}, {"text": "second answer"}])
    async with app.run_test(size=SIZE) as pilot:
        for text in ("first question", "second question"):
            await _type(pilot, text)
            await pilot.press("enter")
            await settle(app, pilot)
        await pilot.press("escape", "escape")  # Esc twice on an empty editor opens /tree
        await wait_for(pilot, lambda: type(app.screen).__name__ == "TreeScreen")
        await pilot.press("up")  # from the leaf (second answer) to "second question"
        await pilot.press("enter")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "SummarizeChoiceScreen")
        await pilot.press("enter")  # "No summary" is first
        await settle(app, pilot)
        assert type(app.screen).__name__ == "ChatScreen"
        assert app.screen.query_one(PromptEditor).text == "second question"
        assert [u.text for u in app.screen.query(UserMessageView)] == ["first question"]
        assert [m["role"] for m in session.messages] == ["user", "assistant"]


async def test_tree_navigation_with_a_summary_shows_the_branch_block(make_app):
    app, _session = make_app([
        {"text": "first answer"}, {"text": "second answer"},
        {"when": {"last_user_contains": "<conversation>"}, "text": "## Goal\nWhat the branch did."},
    ])
    async with app.run_test(size=SIZE) as pilot:
        for text in ("first question", "second question"):
            await _type(pilot, text)
            await pilot.press("enter")
            await settle(app, pilot)
        await _type(pilot, "/tree")
        await pilot.press("enter")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "TreeScreen")
        await pilot.press("up", "enter")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "SummarizeChoiceScreen")
        await pilot.press("down", "enter")  # "Summarize"
        await wait_for(pilot, lambda: bool(app.screen.query(SummaryBlock)) if type(app.screen).__name__ == "ChatScreen"
                       else False)
        await settle(app, pilot)
        block = app.screen.query_one(SummaryBlock)
        assert block.kind == "branch" and "What the branch did." in block.summary
        assert app.screen.query_one(PromptEditor).text == "second question"


async def test_resume_opens_another_session(make_app, project, agent_dir):
    from pi_tui.sdk import create_agent_session
    from pi_tui.testing.scripted import ScriptedProvider

    earlier = create_agent_session(cwd=project, agent_dir=agent_dir, settings={}, load_extensions=False,
                                   provider=ScriptedProvider([{"text": "old answer"}]))
    await earlier.prompt("an old question")
    old_file = earlier.state.session_file
    assert old_file is not None and old_file.exists()
    earlier.session_manager.close()  # release the file lock, as the other process would on exit
    app, session = make_app([])
    async with app.run_test(size=SIZE) as pilot:
        await _type(pilot, "/resume")
        await pilot.press("enter")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "SessionPickerScreen")
        await pilot.press("enter")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "ChatScreen" and bool(app.screen.query(UserMessageView)))
        await settle(app, pilot)
        assert session.state.session_file == old_file
        assert [u.text for u in app.screen.query(UserMessageView)] == ["an old question"]
        assert app.screen.query_one(StreamedMarkdown).text == "old answer"


async def test_context_shows_the_parts_of_the_next_request(make_app):
    app, _ = make_app([{"text": "an answer"}])
    async with app.run_test(size=SIZE) as pilot:
        await _type(pilot, "a question")
        await pilot.press("enter")
        await settle(app, pilot)
        await _type(pilot, "/context")
        await pilot.press("enter")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "ContextScreen")
        preview = app.screen.preview
        names = [p.name for p in preview.parts]
        assert names[0] == "System prompt" and any(n.startswith("Tools") for n in names)
        assert [p.kind for p in preview.parts].count("message") == 2
        await pilot.press("escape")
        assert type(app.screen).__name__ == "ChatScreen"


async def test_a_rate_limit_is_retried_and_shown_in_the_events_pane(make_app):
    app, _ = make_app([{"error": {"status": 429, "message": "slow down"}}, {"text": "made it"}],
                      settings={"retry": {"enabled": True, "maxRetries": 2, "baseDelayMs": 20}})
    async with app.run_test(size=SIZE) as pilot:
        await _type(pilot, "hello")
        await pilot.press("enter")
        await settle(app, pilot)
        titles = [e.line.title for e in app.screen.query_one(EventsPane).query(EventEntry)]
        assert titles[0].startswith("retry 1/2 in")
        assert titles[1] == "retry ✓ on attempt 1"
        assert app.screen.query(StreamedMarkdown).last().text == "made it"


async def test_context_leaves_out_a_failed_reply_as_every_request_does(make_app):
    """The failed reply stays in the conversation and the file, but /context lists only what
    the next request carries, with a note saying what was left out."""
    app, _ = make_app([{"error": {"status": 400, "message": "bad request"}}, {"text": "fine"}])
    async with app.run_test(size=SIZE) as pilot:
        await _type(pilot, "first")
        await pilot.press("enter")
        await settle(app, pilot)
        await _type(pilot, "second")
        await pilot.press("enter")
        await settle(app, pilot)
        roles = [m["role"] for m in app.screen.session.messages]
        assert roles == ["user", "assistant", "user", "assistant"]  # the failed one is kept
        await _type(pilot, "/context")
        await pilot.press("enter")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "ContextScreen")
        preview = app.screen.preview
        assert [p.kind for p in preview.parts].count("message") == 3
        assert "not sent: 1 failed or aborted reply (kept in the session, dropped from every request)" in preview.notes
