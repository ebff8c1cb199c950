"""``pi-tui checkpoints SESSION``: which node changed which files, from the session file alone."""

from __future__ import annotations

import json
from pathlib import Path

from pi_tui.cli import main
from tests.checkpoints.conftest import bash, needs_git, write

pytestmark = needs_git


async def test_lists_nodes_with_their_changes(make_session, capsys) -> None:
    session, _, _ = make_session([write("a b.txt", "1"), {"text": "one"}, bash("rm 'a b.txt'; echo x > c.txt"),
                                  {"text": "two"}])
    await session.prompt("first")
    await session.prompt("second")
    path = session.session_manager.session_file
    assert path is not None
    session.session_manager.close()
    assert main(["checkpoints", str(path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].endswith("3 file snapshot(s)")
    assert any("base" in line and "snapshot" in line for line in out)
    assert "          A a b.txt" in out and "          D a b.txt" in out and "          A c.txt" in out
    assert main(["checkpoints", "--json", str(path)]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["reason"] for r in rows] == ["base", "turn", "turn"]
    assert rows[2]["counts"] == {"changed": 0, "created": 1, "deleted": 1}


def test_a_missing_file_is_one_line_and_exit_2(tmp_path: Path, capsys) -> None:
    assert main(["checkpoints", str(tmp_path / "nope.jsonl")]) == 2
    assert "pi-tui checkpoints:" in capsys.readouterr().err


async def test_deleting_a_session_forgets_its_snapshots(make_session, agent_dir: Path, project: Path) -> None:
    from pi_tui.checkpoints.git_store import store_dir_for
    from pi_tui.modes.interactive.screens.session_picker import delete_session_file

    session, _, _ = make_session([write("a.txt", "1"), {"text": "one"}, write("a.txt", "2"), {"text": "two"}])
    await session.prompt("first")
    await session.prompt("second")
    path = session.session_manager.session_file
    assert path is not None
    session.session_manager.close()
    refs = store_dir_for(agent_dir, project) / "refs" / "pi-tui" / "sessions"
    assert [p.name for p in refs.iterdir()] == [session.session_manager.session_id]
    delete_session_file(path)  # no `trash` CLI in the test environment: a real delete
    assert not path.exists() and list(refs.iterdir()) == []
