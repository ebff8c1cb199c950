"""docs/internals.md describes the rooms tests/architecture enforces: every room of
``rules.PI_TUI_ROOMS`` has a row in its "Rooms" table, and the hook lists of ``SessionHooks``
are in its "Extension points" table (a room or a hook added without its doc fails here)."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from pi_tui.session.hooks import SessionHooks
from tests.architecture.rules import PI_TUI_ROOMS

DOC = (Path(__file__).resolve().parents[2] / "docs" / "internals.md").read_text(encoding="utf-8")


def _section(title: str) -> str:
    return DOC.split(title, 1)[1].split("\n## ", 1)[0].split("\n### ", 1)[0]


def test_every_room_has_a_row() -> None:
    rows = _section("## Rooms and what each may import")
    named = set(re.findall(r"^\| (.+?) \|", rows, flags=re.MULTILINE))
    cells = " ".join(named)
    missing = [room for room in PI_TUI_ROOMS.may_import
               if f"`{room}/`" not in cells and f"`{room}.py`" not in cells]
    assert missing == []


def test_every_hook_list_is_documented() -> None:
    table = _section("### Extension points")
    lists = [f.name for f in dataclasses.fields(SessionHooks) if str(f.type).startswith("list[")]
    assert lists and [name for name in lists if f"| `{name}:" not in table] == []
