"""pi 0.73.1 reads a session file with checkpoint entries exactly as the same file without them:
its projection (the messages its model would get) and its leaf are unchanged. Runs pi's own
``SessionManager`` from pi's install (``make pi-ref``, or ``PI_REF``); skips loudly where pi is not installed."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from pi_tui.testing.pi_reference import PI_INDEX
from tests.checkpoints.conftest import bash, cp_entries, needs_git, write

pytestmark = [
    needs_git,
    pytest.mark.skipif(shutil.which("node") is None or not PI_INDEX.is_file(),
                       reason=f"LOUD SKIP: pi 0.73.1 is not installed at {PI_INDEX} (or no node): "
                              "pi's reading of checkpoint entries is not checked"),
]

SCRIPT = """
import { SessionManager } from %s;
const sm = SessionManager.open(process.argv[2]);
const context = sm.buildSessionContext();
console.log(JSON.stringify({messages: context.messages, leaf: sm.getLeafId()}));
"""


def _pi_view(path: Path, scratch: Path) -> dict[str, Any]:
    script = scratch / "read.mjs"
    script.write_text(SCRIPT % json.dumps(str(PI_INDEX)))
    done = subprocess.run(["node", str(script), str(path)], capture_output=True, text=True, timeout=60, check=True)
    return json.loads(done.stdout)


def _without_checkpoints(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The same file had checkpoints never existed: their entries dropped, children re-linked."""
    parent_of = {e["id"]: e.get("parentId") for e in lines if e.get("customType") == "pi-tui.checkpoint"}
    out = []
    for entry in lines:
        if entry.get("id") in parent_of:
            continue
        parent = entry.get("parentId")
        while parent in parent_of:
            parent = parent_of[parent]
        out.append({**entry, "parentId": parent} if "parentId" in entry else entry)
    return out


async def test_pi_projects_a_file_with_checkpoints_as_without(make_session, tmp_path: Path) -> None:
    session, _, _ = make_session([write("a.txt", "1"), {"text": "one"}, bash("echo 2 > a.txt"), {"text": "two"},
                                  {"text": "three"}])
    await session.prompt("first")
    await session.prompt("second")
    (session.cwd / "a.txt").write_text("user")  # caught before the next prompt
    await session.prompt("third")
    assert len(cp_entries(session)) >= 3
    path = session.session_manager.session_file
    assert path is not None
    lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    bare = tmp_path / "bare.jsonl"
    bare.write_text("".join(json.dumps(e) + "\n" for e in _without_checkpoints(lines)))
    ours, theirs = _pi_view(path, tmp_path), _pi_view(bare, tmp_path)
    assert ours["messages"] == theirs["messages"]
    assert [m["role"] for m in ours["messages"]].count("user") == 3
    # pi's leaf is our last checkpoint entry, which stands for the same node
    assert ours["leaf"] in {e["id"] for e in cp_entries(session)} | {theirs["leaf"]}
