"""What the snapshots capture beyond the built-in tools, and where it shows: a file changed by an
extension's tool, edits made between sessions (the resume's ``start`` snapshot), and the /tree
screen's ``✎ N files`` mark on the nodes that changed files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pi_tui.session.checkpoint_hooks import preview_restore
from tests.checkpoints.conftest import bash, cp_entries, needs_git, write

pytestmark = needs_git

STAMP_EXTENSION = '''
from pathlib import Path


def register(pi):
    def stamp(call_id, args, ctx):
        Path(args["path"]).write_text("stamped by an extension\\n")
        return "stamped " + args["path"]

    pi.register_tool(name="stamp", description="Stamp a file", parameters={
        "type": "object", "required": ["path"], "properties": {"path": {"type": "string"}}}, execute=stamp)
'''


def _user_ids(session: Any) -> list[str]:
    return [e["id"] for e in session.session_manager.get_branch()
            if e.get("type") == "message" and e["message"]["role"] == "user"]


def _leaf(session: Any) -> str:
    return [e["id"] for e in session.session_manager.get_entries() if e.get("customType") != "pi-tui.checkpoint"][-1]


async def test_a_file_changed_by_an_extension_tool_is_snapshotted_and_restored(make_session, project: Path,
                                                                               agent_dir: Path) -> None:
    folder = agent_dir / "extensions"  # the agent dir's, outside the project: not itself snapshotted
    folder.mkdir(parents=True)
    (folder / "stamp.py").write_text(STAMP_EXTENSION)
    (project / "stamp.txt").write_text("the user's\n")
    session, _, _ = make_session([{"tool_calls": [{"name": "stamp", "arguments": {"path": "stamp.txt"}}]},
                                  {"text": "done"}], load_extensions=True)
    assert "stamp" in session.get_active_tools()
    await session.prompt("stamp it")
    assert (project / "stamp.txt").read_text() == "stamped by an extension\n"
    snaps = [e["data"] for e in cp_entries(session)]
    assert [d["reason"] for d in snaps] == ["base", "turn"]  # the base was taken before the tool ran
    assert snaps[-1]["files"] == {"changed": ["stamp.txt"], "created": [], "deleted": []}
    await session.navigate_tree(_user_ids(session)[0], restore_files=True)
    assert (project / "stamp.txt").read_text() == "the user's\n"


async def test_a_resume_snapshots_the_edits_made_between_sessions(make_session, project: Path) -> None:
    first, _, _ = make_session([write("f.txt", "the agent's\n"), {"text": "1"}])
    await first.prompt("one")
    path = first.session_manager.session_file
    first.session_manager.close()
    (project / "f.txt").write_text("the user's, between sessions\n")
    (project / "g.txt").write_text("new, between sessions\n")
    resumed, _, _ = make_session([], session=str(path))
    await resumed.start()
    start = cp_entries(resumed)[-1]["data"]
    assert [e["data"]["reason"] for e in cp_entries(resumed)] == ["base", "turn", "start"]
    assert start["files"] == {"changed": ["f.txt"], "created": ["g.txt"], "deleted": []}
    assert start["entryId"] == _leaf(resumed)
    preview = await preview_restore(resumed, _user_ids(resumed)[0])
    assert preview["editedSinceSnapshot"] == {"changed": [], "created": [], "deleted": []}  # recorded at start
    await resumed.navigate_tree(_user_ids(resumed)[0], restore_files=True)
    assert not (project / "f.txt").exists() and not (project / "g.txt").exists()
    await resumed.navigate_tree(start["entryId"], restore_files=True)
    assert (project / "f.txt").read_text() == "the user's, between sessions\n"
    assert (project / "g.txt").read_text() == "new, between sessions\n"


async def test_the_tree_screen_marks_the_nodes_that_changed_files(make_session, project: Path) -> None:
    from pi_tui.modes.interactive.screens.tree import TreeScreen
    from tests.modes.interactive.screens.builders import ScreenHost

    session, _, _ = make_session([write("f.txt", "A\n"), {"text": "wrote one"},
                                  bash("echo x > g.txt; echo y > h.txt"), {"text": "wrote two"},
                                  {"text": "changed nothing"}])
    for text in ("one", "two", "three"):
        await session.prompt(text)
    screen = TreeScreen(session.session_manager)
    app = ScreenHost(screen)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        rows = screen.query_one("#tree-rows")
        shown = [rows.render_line(y).text.rstrip() for y in range(rows.size.height)]
    marked = [line.strip() for line in shown if "✎" in line]
    assert marked == ["• [write: f.txt]  ✎ 1 file", "• [bash: echo x > g.txt; echo y > h.txt]  ✎ 2 files"], shown
    assert any("changed nothing" in line for line in shown)
