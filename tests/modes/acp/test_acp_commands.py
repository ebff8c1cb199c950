"""The commands an editor lists after ``/`` (``available_commands_update``) run from the prompt
of a real ``pi-tui --mode acp``: prompt templates (directly and through ``/template``), skills,
extension commands; and an answer cut by the output limit ends the turn with ``max_tokens``."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from acp import text_block

from pi_tui.testing.fake_server import FakeServer
from tests.modes.acp.conftest import EditorClient, acp_agent, cancel_when, write_models

GREETER_EXTENSION = '''
def register(pi):
    def greet(args, ctx):
        pi.notify("greeted " + args)
        pi.send_user_message("Say hello to " + args)
    pi.register_command("greet", greet, description="greets someone")
'''


def _user_text(request: dict[str, object]) -> str:
    messages = request["messages"]
    assert isinstance(messages, list)
    return json.dumps([m["content"] for m in messages if m["role"] == "user"][-1])


async def test_templates_skills_and_extension_commands_run_from_the_prompt(project: Path, agent_dir: Path) -> None:
    (agent_dir / "prompts").mkdir()
    (agent_dir / "prompts" / "review.md").write_text("---\ndescription: Review a file\n---\nReview $1 with care.\n")
    skill = agent_dir / "skills" / "calendar" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("---\ndescription: Dates and times\n---\nUse cal for dates.\n")
    (agent_dir / "extensions").mkdir()
    (agent_dir / "extensions" / "greeter.py").write_text(GREETER_EXTENSION)
    editor = EditorClient()
    with FakeServer([{"text": "reviewed"}, {"text": "reviewed again"}, {"text": "dated"}, {"text": "hello"}]) as server:
        write_models(agent_dir, server.base_url)
        async with acp_agent(editor, agent_dir, project) as conn:
            session = await conn.new_session(cwd=str(project), mcp_servers=[])
            for text in ("/review app.py", "/template review lib.py", "/skill:calendar what day is it?",
                         "/template", "/greet Ada"):
                answer = await conn.prompt(session_id=session.session_id, prompt=[text_block(text)])
                assert answer.stop_reason == "end_turn", text
            shown_by_the_answer = editor.message_text()  # the turn /greet started belongs to its prompt
    listed = {c.name: c.description for c in editor.of_kind("available_commands_update")[0].available_commands}
    assert listed["review"] == "Review a file" and listed["skill:calendar"] == "Dates and times"
    assert listed["greet"] == "greets someone"
    assert len(server.requests) == 4  # /template alone lists, it calls no model
    assert "Review app.py with care." in _user_text(server.requests[0])
    assert "Review lib.py with care." in _user_text(server.requests[1])
    skill_text = _user_text(server.requests[2])
    assert "Use cal for dates." in skill_text and "what day is it?" in skill_text
    assert "Say hello to Ada" in _user_text(server.requests[3])
    shown = editor.message_text()
    assert "review" in shown.split("reviewed again", 1)[1].split("dated", 1)[1]  # /template's list, as a message
    assert "> greeted Ada" in shown and shown_by_the_answer.endswith("hello")


async def test_an_answer_cut_by_the_output_limit_ends_with_max_tokens(project: Path, agent_dir: Path) -> None:
    editor = EditorClient()
    with FakeServer([{"text": "The answer is cut", "finish_reason": "length"}, {"text": "Whole."}]) as server:
        write_models(agent_dir, server.base_url)
        async with acp_agent(editor, agent_dir, project) as conn:
            session = await conn.new_session(cwd=str(project), mcp_servers=[])
            cut = await conn.prompt(session_id=session.session_id, prompt=[text_block("long")])
            whole = await conn.prompt(session_id=session.session_id, prompt=[text_block("short")])
    assert cut.stop_reason == "max_tokens" and whole.stop_reason == "end_turn"
    assert editor.message_text() == "The answer is cutWhole."
    assert len(server.requests) == 2


async def test_cancel_stops_the_turn_an_extension_command_started(project: Path, agent_dir: Path) -> None:
    (agent_dir / "extensions").mkdir()
    (agent_dir / "extensions" / "greeter.py").write_text(GREETER_EXTENSION)
    slow = {"text": "hello " * 200, "chunk_size": 6, "chunk_delay_ms": 100}
    editor = EditorClient()
    with FakeServer([slow, {"text": "unused"}]) as server:
        write_models(agent_dir, server.base_url)
        async with acp_agent(editor, agent_dir, project) as conn:
            session = await conn.new_session(cwd=str(project), mcp_servers=[])
            turn = asyncio.ensure_future(conn.prompt(session_id=session.session_id, prompt=[text_block("/greet Ada")]))
            answer, elapsed = await cancel_when(conn, session.session_id, turn, lambda: "hello" in editor.message_text())
            streamed = len(editor.message_text())
            await asyncio.sleep(0.5)
            assert len(editor.message_text()) == streamed  # nothing after the answer
    assert answer.stop_reason == "cancelled" and elapsed < 1.0, elapsed
    assert len(server.requests) == 1
