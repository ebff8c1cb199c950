from __future__ import annotations

import re
import uuid
from pathlib import Path

from pi_tui.core.session.ids import artifact_dir_for, new_entry_id, session_file_name, uuid7


def test_entry_ids_are_8_hex_and_avoid_collisions():
    ids: set[str] = set()
    for _ in range(2000):
        new = new_entry_id(ids)
        assert re.fullmatch(r"[0-9a-f]{8}", new)
        assert new not in ids
        ids.add(new)


def test_entry_id_falls_back_to_a_full_uuid_when_every_draw_collides():
    class Everything:
        def __contains__(self, item: object) -> bool:
            return True

    assert uuid.UUID(new_entry_id(Everything())).version == 4


def test_session_ids_are_uuid7_and_time_ordered():
    first, second = uuid7(1_796_009_643_510), uuid7(1_796_009_643_511)
    parsed = uuid.UUID(first)
    assert parsed.version == 7
    assert parsed.variant == uuid.RFC_4122
    assert int(first.replace("-", "")[:12], 16) == 1_796_009_643_510
    assert first < second
    assert len({uuid7() for _ in range(100)}) == 100


def test_file_name_and_artifact_dir():
    name = session_file_name("2025-12-09T00:53:29.825Z", "abc")
    assert name == "2025-12-09T00-53-29-825Z_abc.jsonl"
    assert artifact_dir_for(Path("/s") / name) == Path("/s/2025-12-09T00-53-29-825Z_abc.artifacts")
