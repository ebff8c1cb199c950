"""v1 → v2 → v3 migrations (spec §1.3): ids, parent chain, compaction index → id, hookMessage,
idempotence, and the backup kept before the file is rewritten."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from pi_tui.core.session.jsonl import read_session_file
from pi_tui.core.session.manager import SessionManager
from pi_tui.core.session.migrations import migrate_entries, migrate_v1_to_v2, migrate_v2_to_v3

from .builders import read_objects, write_objects


def v1_entries() -> list[dict]:
    return [
        {"type": "session", "id": "s", "timestamp": "2025-01-01T00:00:00.000Z", "cwd": "/p", "provider": "a"},
        {"type": "message", "timestamp": "t1", "message": {"role": "user", "content": "hi", "timestamp": 1}},
        {"type": "model_change", "timestamp": "t2", "provider": "x", "modelId": "y"},
        {"type": "message", "timestamp": "t3", "message": {"role": "user", "content": "again", "timestamp": 2}},
        {"type": "compaction", "timestamp": "t4", "summary": "s", "firstKeptEntryIndex": 3, "tokensBefore": 9},
        {"type": "compaction", "timestamp": "t5", "summary": "s", "firstKeptEntryIndex": 0, "tokensBefore": 9},
    ]


def test_v1_to_v2_chains_fresh_ids_and_maps_the_kept_index():
    entries = v1_entries()
    migrate_v1_to_v2(entries)
    header, *rest = entries
    assert header["version"] == 2 and header["provider"] == "a"  # legacy fields kept
    assert all(re.fullmatch(r"[0-9a-f]{8}", e["id"]) for e in rest)
    assert [e["parentId"] for e in rest] == [None, *[e["id"] for e in rest[:-1]]]
    assert list(rest[1]) == ["type", "timestamp", "provider", "modelId", "id", "parentId"]
    assert rest[3]["firstKeptEntryId"] == rest[2]["id"]  # index 3 counts the header
    assert "firstKeptEntryIndex" not in rest[3]
    assert "firstKeptEntryId" not in rest[4] and "firstKeptEntryIndex" not in rest[4]  # index 0 = header


def test_v2_to_v3_renames_hook_messages():
    entries = [
        {"type": "session", "version": 2, "id": "s"},
        {"type": "message", "id": "a", "parentId": None, "message": {"role": "hookMessage", "content": "x"}},
        {"type": "message", "id": "b", "parentId": "a", "message": {"role": "user", "content": "y"}},
    ]
    migrate_v2_to_v3(entries)
    assert entries[0]["version"] == 3
    assert [e["message"]["role"] for e in entries[1:]] == ["custom", "user"]


def test_migrate_entries_reports_the_original_version_and_is_idempotent():
    entries = v1_entries()
    assert migrate_entries(entries) == 1
    assert entries[0]["version"] == 3
    snapshot = json.dumps(entries)
    assert migrate_entries(entries) is None
    assert json.dumps(entries) == snapshot
    v2 = [{"type": "session", "version": 2, "id": "s"}]
    assert migrate_entries(v2) == 2 and v2[0]["version"] == 3
    assert migrate_entries([]) is None


def test_the_v1_fixture_migrates_with_backup_and_stays_v3(pi_fixtures: Path, tmp_path: Path):
    source = pi_fixtures / "v1-before-compaction.jsonl"
    path = shutil.copy(source, tmp_path / source.name)
    raw = [json.loads(line) for line in source.read_text().splitlines() if line.strip()]
    with SessionManager.open(Path(path), cwd=tmp_path) as manager:
        assert manager.migrated_from == 1
        assert manager.backup_file == tmp_path / "v1-before-compaction.jsonl.v1.bak"
        entries = manager.get_entries()
        assert len(entries) == len(raw) - 1 == 1002
        assert all(re.fullmatch(r"[0-9a-f]{8}", e["id"]) for e in entries)
        compactions = [e for e in entries if e["type"] == "compaction"]
        # firstKeptEntryIndex 293 and 551 count the header: entries[292] and entries[550]
        assert [c["firstKeptEntryId"] for c in compactions] == [entries[292]["id"], entries[550]["id"]]
        context = manager.build_session_context()
        assert len(context.messages) > 100 and context.model is not None
    assert manager.backup_file.read_bytes() == source.read_bytes()
    rewritten = read_objects(Path(path))
    assert rewritten[0]["version"] == 3 and rewritten[0]["cwd"] == raw[0]["cwd"]
    assert rewritten[1:] == entries
    # Opening again migrates nothing and keeps no second backup.
    with SessionManager.open(Path(path), cwd=tmp_path) as again:
        assert again.migrated_from is None and again.backup_file is None
        assert again.get_entries() == entries
    assert sorted(p.name for p in tmp_path.iterdir()) == [source.name, source.name + ".v1.bak"]


def test_a_v2_file_is_backed_up_as_v2(tmp_path: Path):
    path = write_objects(tmp_path / "s.jsonl", [
        {"type": "session", "version": 2, "id": "s", "timestamp": "2025-01-01T00:00:00.000Z", "cwd": "/p"},
        {"type": "message", "id": "aaaaaaaa", "parentId": None, "timestamp": "t",
         "message": {"role": "hookMessage", "customType": "x", "content": "c", "display": True, "timestamp": 1}},
    ])
    original = path.read_bytes()
    with SessionManager.open(path, cwd=tmp_path) as manager:
        assert manager.migrated_from == 2
        assert manager.get_entries()[0]["message"]["role"] == "custom"
    assert (tmp_path / "s.jsonl.v2.bak").read_bytes() == original
    assert read_session_file(path).entries[0]["version"] == 3
