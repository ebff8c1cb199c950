"""``SnapshotSeen`` answers "does this session hold a usable checkpoint" as a full walk does,
while reading only the entries appended since it last looked (it is asked before every prompt
and every tool that can change files)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pi_tui.checkpoints import binding as B


def _checkpoint(index: int, usable: bool) -> dict[str, Any]:
    data = {"entryId": None, "commit": "c" * 40 if usable else None, "tree": "t" * 40, "reason": "turn"}
    return {"type": "custom", "customType": B.CUSTOM_TYPE, "id": f"k{index}", "data": data}


def _message(index: int) -> dict[str, Any]:
    return {"type": "message", "id": f"m{index}", "message": {"role": "user", "content": "hi"}}


_steps = st.lists(st.sampled_from(["message", "usable", "unusable", "switch", "reload"]), max_size=40)


@given(_steps)
def test_it_agrees_with_a_full_walk_through_appends_switches_and_reloads(steps: list[str]) -> None:
    seen = B.SnapshotSeen()
    session, entries = "s0", list[dict[str, Any]]()
    for number, step in enumerate(steps):
        if step == "switch":
            session, entries = f"s{number}", [e for e in entries if e["type"] == "message"]
        elif step == "reload":
            entries = entries[: len(entries) // 2]
        elif step == "message":
            entries.append(_message(number))
        else:
            entries.append(_checkpoint(number, step == "usable"))
        assert seen.any_usable(session, entries) == bool(B.latest_by_node(entries)), steps[: number + 1]


def test_a_look_reads_only_what_was_appended_since_the_last(monkeypatch: pytest.MonkeyPatch) -> None:
    read: list[str] = []
    real = B.is_checkpoint

    def counting(entry: Mapping[str, Any]) -> bool:
        read.append(str(entry["id"]))
        return real(entry)

    monkeypatch.setattr(B, "is_checkpoint", counting)
    entries = [_message(i) for i in range(1000)]
    seen = B.SnapshotSeen()
    assert not seen.any_usable("s", entries)
    assert len(read) == 1000
    entries.extend([_message(1000), _message(1001)])
    assert not seen.any_usable("s", entries)
    assert read[1000:] == ["m1000", "m1001"]  # the new entries only, not the whole session again
    entries.append(_checkpoint(1002, usable=True))
    assert seen.any_usable("s", entries)
    entries.extend(_message(i) for i in range(1003, 1100))
    assert seen.any_usable("s", entries) and len(read) == 1003  # seen once: stays seen


def test_another_session_is_read_from_the_top() -> None:
    seen = B.SnapshotSeen()
    with_one: list[Mapping[str, Any]] = [_message(0), _checkpoint(1, usable=True)]
    assert seen.any_usable("a", with_one)
    assert not seen.any_usable("b", [_message(0), _checkpoint(1, usable=False)])
