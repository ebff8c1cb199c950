"""The ``ctx.ui`` example of docs/extensions.md, taken from the page and run on a real session."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pi_tui.sdk import create_agent_session
from pi_tui.testing.scripted import ScriptedProvider
from tests.extensions.test_ui import FakeUI

DOC = Path(__file__).resolve().parents[2] / "docs" / "extensions.md"
WRITES = [
    {"tool_calls": [{"id": "w1", "name": "write", "arguments": {"path": "a.txt", "content": "A"}}]},
    {"tool_calls": [{"id": "w2", "name": "write", "arguments": {"path": "b.txt", "content": "B"}}]},
    {"text": "written"},
]


def doc_example(tmp: Path) -> Path:
    text = DOC.read_text()
    start = text.index("# ask_before_write.py")
    path = tmp / "ask_before_write.py"
    path.write_text(text[start:text.index("```", start)])
    return path


def session_with(project: Path, agent_dir: Path, example: Path) -> Any:
    return create_agent_session(cwd=project, agent_dir=agent_dir, provider=ScriptedProvider(list(WRITES)),
                                no_session=True, settings={}, extension_paths=[str(example)])


async def test_allow_all_is_asked_once_and_rename_asks_for_a_name(project: Path, agent_dir: Path) -> None:
    session = session_with(project, agent_dir, doc_example(project.parent))
    ui = FakeUI("Allow all", "docs demo")
    session.set_extension_ui(ui)
    await session.prompt("write two files")
    assert (project / "a.txt").read_text() == "A" and (project / "b.txt").read_text() == "B"
    assert [c[0] for c in ui.calls] == ["select"]
    assert ui.statuses == {"ask": "all writes allowed"}
    await session.prompt("/rename")
    assert session.get_session_name() == "docs demo"


async def test_without_a_ui_the_writes_are_blocked(project: Path, agent_dir: Path) -> None:
    session = session_with(project, agent_dir, doc_example(project.parent))
    await session.prompt("write two files")
    assert not (project / "a.txt").exists()
    results = [m for m in session.messages if m["role"] == "toolResult"]
    assert results[0]["isError"] is True
    assert results[0]["content"][0]["text"] == "no one to ask about changing a.txt"
