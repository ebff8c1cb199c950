"""Startup, /reload, the events pane layout and the session commands, on the real app."""

from __future__ import annotations

import json
from pathlib import Path

from pi_tui.modes.interactive.widgets.chat_items import Notice
from pi_tui.modes.interactive.widgets.editor import PromptEditor
from pi_tui.modes.interactive.widgets.events_pane import EventEntry, EventsPane
from tests.modes.interactive.conftest import ready, settle

SIZE = (120, 40)

RECORDER = '''
import json, pathlib

LOG = pathlib.Path(__file__).with_name("events.jsonl")

def recorder(name):
    def record(event, *context):
        with LOG.open("a") as f:
            f.write(json.dumps({"type": name, "reason": event.get("reason")}) + "\\n")
    return record

def register(pi):
    for name in ("session_start", "resources_discover", "session_shutdown"):
        pi.on(name)(recorder(name))
'''


def _bad_skill(project: Path, name: str) -> Path:
    folder = project / ".pi" / "skills" / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text("no front matter, so no description\n")
    return folder / "SKILL.md"


async def _submit(pilot, text: str) -> None:
    await ready(pilot)
    editor = pilot.app.screen.query_one(PromptEditor)
    editor.insert(text)
    await pilot.pause()
    await pilot.press("enter")
    await settle(pilot.app, pilot)


def _warnings(app) -> list[str]:
    return [n.text for n in app.screen.query(Notice) if n.has_class("-warning")]


def _event_titles(app) -> list[str]:
    return [e.line.title for e in app.screen.query_one(EventsPane).query(EventEntry)]


async def test_startup_starts_the_session_and_shows_every_diagnostic(make_app, project, agent_dir):
    extensions = project / ".pi" / "extensions"
    extensions.mkdir(parents=True)
    (extensions / "recorder.py").write_text(RECORDER)
    skill = _bad_skill(project, "broken")
    (agent_dir / "models.json").write_text("{not json")
    app, _session = make_app([], load_extensions=True)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await settle(app, pilot)
        log = [json.loads(line) for line in (extensions / "events.jsonl").read_text().splitlines()]
        assert log == [{"type": "session_start", "reason": "startup"},
                       {"type": "resources_discover", "reason": "startup"}]
        warnings = _warnings(app)
        assert any(str(skill) in w and "description" in w for w in warnings), warnings
        assert any("models.json" in w for w in warnings), warnings
        details = [e.line.detail for e in app.screen.query_one(EventsPane).query(EventEntry)]
        assert any(str(skill) in d for d in details)

        second = _bad_skill(project, "broken-later")
        await _submit(pilot, "/reload")
        log = [json.loads(line) for line in (extensions / "events.jsonl").read_text().splitlines()]
        assert [e["reason"] for e in log[2:]] == ["reload", "reload", "reload"]
        after = _warnings(app)[len(warnings):]
        assert any(str(second) in w for w in after) and any(str(skill) in w for w in after), after


async def test_a_long_events_line_wraps_under_its_text(make_app):
    app, _ = make_app([])
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        app.screen.renderer.note("Moved back in the tree; the abandoned branch was summarized")
        await pilot.pause()
        await pilot.pause()
        entry = app.screen.query_one(EventsPane).query(EventEntry).last()
        stamp = entry.query_one(".event-stamp")
        title = entry.query_one(".event-title")
        assert title.region.height >= 2  # it did wrap
        assert title.region.x > stamp.region.x  # every line of it starts right of the time
        assert title.region.x >= stamp.region.x + len("12:00:00")


async def test_a_cancelled_branch_summary_reopens_the_tree_on_the_same_entry(make_app):
    from tests.modes.interactive.conftest import GatedProvider, wait_for

    provider = GatedProvider([
        {"text": "first answer"}, {"text": "second answer"},
        {"when": {"last_user_contains": "<conversation>"}, "text": "## Goal\nnever used"},
    ])
    provider.gate.set()
    app, session = make_app(provider=provider)
    async with app.run_test(size=SIZE) as pilot:
        for text in ("first question", "second question"):
            await _submit(pilot, text)
        leaf_before = session.session_manager.leaf_id
        provider.gate.clear()
        provider.waiting.clear()
        await _submit(pilot, "/tree")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "TreeScreen")
        await pilot.press("up")
        target = app.screen.selected.entry_id
        await pilot.press("enter")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "SummarizeChoiceScreen")
        await pilot.press("down", "enter")  # "Summarize"
        await wait_for(pilot, provider.waiting.is_set)
        await wait_for(pilot, lambda: type(app.screen).__name__ == "SummarizingScreen")
        await pilot.press("escape")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "TreeScreen")
        assert app.screen.selected.entry_id == target
        assert session.session_manager.leaf_id == leaf_before
        provider.gate.set()


async def test_resume_renames_the_open_session_through_the_session(make_app):
    from tests.modes.interactive.conftest import wait_for

    app, session = make_app([{"text": "an answer"}])
    async with app.run_test(size=SIZE) as pilot:
        await _submit(pilot, "a question")
        assert session.state.session_file is not None
        await _submit(pilot, "/resume")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "SessionPickerScreen"
                       and any(info.path == session.state.session_file for info in app.screen.shown))
        index = [info.path for info in app.screen.shown].index(session.state.session_file)
        await pilot.press(*["down"] * index, "ctrl+r")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "TextInputScreen")
        await pilot.press(*"renamed here", "enter")
        await wait_for(pilot, lambda: session.state.session_name == "renamed here")
        await pilot.press("escape")
        await settle(app, pilot)
        assert "renamed here" in str(app.screen.query_one("#footer").render())


async def test_context_details_the_compaction_it_shows(make_app):
    from tests.modes.interactive.conftest import wait_for

    turns = [{"text": f"answer {i} " + "detail " * 60} for i in range(3)]
    summary = {"when": {"last_user_contains": "<conversation>"}, "text": "## Goal\nShort summary."}
    turns += [summary, dict(summary)]
    app, _ = make_app(turns, settings={"compaction": {"keepRecentTokens": 50}})
    async with app.run_test(size=SIZE) as pilot:
        for i in range(3):
            await _submit(pilot, f"question {i} " + "context " * 30)
        await _submit(pilot, "/compact")
        await _submit(pilot, "/context")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "ContextScreen")
        summary_part = next(p for p in app.screen.preview.parts if p.role == "compactionSummary")
        assert "earlier messages" in summary_part.note and "summarized" in summary_part.note


async def test_context_under_the_pipeline_shows_snip_and_micro(make_app, project):
    from tests.modes.interactive.conftest import wait_for

    (project / "notes.txt").write_text("line\n" * 40)
    turns: list[dict] = []
    for i in range(5):
        turns.append({"tool_calls": [{"id": f"c{i}", "name": "read", "arguments": {"path": "notes.txt"}}]})
        turns.append({"text": f"answer {i}"})
    pipeline = {"snipMaxGroups": 8, "snipKeepFirst": 1, "snipKeepLast": 6, "microKeepRecent": 1}
    app, session = make_app(turns, settings={"context": {"strategy": "pipeline", "pipeline": pipeline}})
    async with app.run_test(size=SIZE) as pilot:
        for i in range(5):
            await _submit(pilot, f"read it, take {i}")
        await _submit(pilot, "/context")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "ContextScreen")
        notes = [p.note for p in app.screen.preview.parts]
        assert any(n.startswith("snip:") for n in notes), notes
        assert any(n.startswith("micro:") for n in notes), notes
        assert any("pipeline" in n for n in app.screen.preview.notes)
        assert len(session.messages) == 20  # the session's own history is untouched


async def test_export_writes_the_html_and_says_where(make_app, project):
    app, session = make_app([{"text": "an <answer>"}])
    async with app.run_test(size=SIZE) as pilot:
        await _submit(pilot, "a question")
        await _submit(pilot, "/export")
        default = project / f"{session.state.session_file.stem}.html"
        assert default.is_file() and "an &lt;answer&gt;" in default.read_text(encoding="utf-8")
        await _submit(pilot, "/export out/chat.html")
        named = project / "out" / "chat.html"
        assert named.is_file()
        notices = [n.text for n in app.screen.query(Notice) if n.has_class("-success")]
        assert f"Exported to {default}" in notices and f"Exported to {named}" in notices


async def test_a_skipped_compaction_is_not_shown_as_done(make_app):
    from pi_tui.modes.interactive.messages import AgentEventReceived
    from pi_tui.modes.interactive.widgets.chat_items import SummaryBlock

    app, _ = make_app([])
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        for event in ({"type": "compaction_start", "reason": "manual"},
                      {"type": "compaction_end", "reason": "manual", "aborted": False, "willRetry": False,
                       "result": None}):
            app.chat.post_message(AgentEventReceived(event))
        await settle(app, pilot)
        assert _event_titles(app) == ["compaction ▶", "compaction skipped: nothing to compact"]
        assert not app.screen.query(SummaryBlock) and not app.screen.renderer.context_unknown
        assert "Compaction skipped: nothing to compact" in _warnings(app)
