"""Entry builders write pi's exact key order and omit undefined fields (spec §1.2)."""

from __future__ import annotations

import json

from pi_tui.core.session import entries as E


def keys(entry: dict) -> list[str]:
    return list(entry)


def test_header_key_order_and_optional_parent():
    header = E.make_header("sid", "2026-01-01T00:00:00.000Z", "/p")
    assert keys(header) == ["type", "version", "id", "timestamp", "cwd"]
    assert header["version"] == 3
    forked = E.make_header("sid", "t", "/p", "/old.jsonl")
    assert keys(forked) == ["type", "version", "id", "timestamp", "cwd", "parentSession"]


def test_every_entry_type_in_pi_key_order():
    base = ["type", "id", "parentId", "timestamp"]
    msg = E.make_message_entry("a", None, "t", {"role": "user", "content": "x", "timestamp": 1})
    assert keys(msg) == [*base, "message"]
    assert keys(E.make_thinking_level_entry("a", "p", "t", "high")) == [*base, "thinkingLevel"]
    assert keys(E.make_model_change_entry("a", "p", "t", "prov", "mid")) == [*base, "provider", "modelId"]
    comp = E.make_compaction_entry(
        "a", "p", "t", summary="s", first_kept_entry_id="k", tokens_before=5,
        details={"readFiles": [], "modifiedFiles": []}, from_hook=False,
    )
    assert keys(comp) == [*base, "summary", "firstKeptEntryId", "tokensBefore", "details", "fromHook"]
    branch = E.make_branch_summary_entry("a", "p", "t", from_id="root", summary="s", from_hook=True)
    assert keys(branch) == [*base, "fromId", "summary", "fromHook"]
    custom = E.make_custom_entry("a", "p", "t", "my-ext", {"k": 1})
    assert keys(custom) == ["type", "customType", "data", "id", "parentId", "timestamp"]
    cmsg = E.make_custom_message_entry("a", "p", "t", custom_type="ext", content="hi", display=True, details={"x": 1})
    assert keys(cmsg) == ["type", "customType", "content", "display", "details", "id", "parentId", "timestamp"]
    assert keys(E.make_label_entry("a", "p", "t", "target", "bookmark")) == [*base, "targetId", "label"]
    assert keys(E.make_session_info_entry("a", "p", "t", "name")) == [*base, "name"]


def test_undefined_fields_are_omitted_like_json_stringify():
    assert "label" not in E.make_label_entry("a", "p", "t", "target", None)
    assert "data" not in E.make_custom_entry("a", "p", "t", "ext")
    comp = E.make_compaction_entry("a", "p", "t", summary="s", first_kept_entry_id="k", tokens_before=1)
    assert "details" not in comp and "fromHook" not in comp
    cmsg = E.make_custom_message_entry("a", "p", "t", custom_type="x", content=[], display=False)
    assert "details" not in cmsg


def test_serialized_bytes_match_a_line_pi_wrote():
    line = '{"type":"model_change","id":"9e04837b","parentId":null,"timestamp":"2026-11-30T03:34:03.518Z","provider":"fake","modelId":"fake-model"}'
    built = E.make_model_change_entry("9e04837b", None, "2026-11-30T03:34:03.518Z", "fake", "fake-model")
    assert json.dumps(built, separators=(",", ":")) == line


def test_iso_timestamps_round_trip_with_milliseconds():
    assert E.iso_from_ms(1796009643510) == "2026-11-30T03:34:03.510Z"
    assert E.ms_from_iso("2026-11-30T03:34:03.510Z") == 1796009643510
    now = E.iso_now()
    assert now.endswith("Z") and len(now) == len("2026-11-30T03:34:03.510Z")
