"""The events pane's lines for file snapshots and restores (docs/checkpoints.md)."""

from __future__ import annotations

from pi_tui.modes.interactive.event_lines import EventLine, describe_event


def test_snapshot_restore_skip_and_failure_lines() -> None:
    assert describe_event({"type": "checkpoint", "action": "snapshot", "ms": 23, "files": 2, "skipped": []}) == \
        EventLine("files snapshot", "2 files changed · 23 ms", "info")
    assert describe_event({"type": "checkpoint", "action": "snapshot", "ms": 5, "files": 1,
                           "skipped": ["big.bin (20000000 bytes, more than 10485760)"]}) == \
        EventLine("files snapshot", "1 file changed · 5 ms · skipped: big.bin (20000000 bytes, more than 10485760)")
    assert describe_event({"type": "checkpoint", "action": "restore", "ms": 9,
                           "counts": {"changed": 1, "created": 2, "deleted": 3}}) == \
        EventLine("files restored", "1 changed, 2 created, 3 deleted · 9 ms", "success")
    skipped = describe_event({"type": "checkpoint", "action": "skipped", "message": "took longer than …"})
    assert skipped == EventLine("files snapshot skipped", "took longer than …", "warning")
    failed = describe_event({"type": "checkpoint", "action": "failed", "message": "git add failed: x"})
    assert failed == EventLine("files snapshot failed", "git add failed: x", "error")


def test_a_first_snapshot_finished_in_the_background_is_a_success_line() -> None:
    line = describe_event({"type": "checkpoint", "action": "filled", "ms": 4100, "files": 90000,
                           "message": "the project's first snapshot was finished in the background"})
    assert line == EventLine("files snapshot ready",
                             "the project's first snapshot was finished in the background · 4100 ms", "success")
