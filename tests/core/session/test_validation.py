"""Session files that are valid JSON but wrong in type or structure (issue 13).

Each case is a real file read by the real loaders: it must load, name the file, line, entry and
field in a warning, keep every well-formed entry, and never change the file.
"""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import pytest

from pi_tui.cli import main
from pi_tui.core.context.convert import convert_to_llm
from pi_tui.core.session.listing import find_most_recent_session, session_info
from pi_tui.core.session.loading import load_session_readonly
from pi_tui.core.session.manager import SessionManager
from pi_tui.core.session.projection import build_session_context
from pi_tui.core.session.tree import build_tree, replay_labels
from pi_tui.core.session.validation import INVALID_ENTRY
from pi_tui.core.tokens import estimate_context_tokens

from .builders import assistant, user

HEADER: dict[str, Any] = {"type": "session", "version": 3, "id": "s-1", "timestamp": "2026-01-01T00:00:00.000Z",
                          "cwd": "/work"}


def entry(entry_id: str, parent: Any, **payload: Any) -> dict[str, Any]:
    return {"type": "message", "id": entry_id, "parentId": parent, "timestamp": "2026-01-01T00:00:01.000Z",
            **payload}


def write(path: Path, lines: list[Any], header: dict[str, Any] | None = None) -> Path:
    text = [json.dumps(header or HEADER)] + [line if isinstance(line, str) else json.dumps(line) for line in lines]
    path.write_text("\n".join(text) + "\n", encoding="utf-8")
    return path


def good_session(bad: Any) -> list[Any]:
    """u1 -> BAD (id 'x') -> a2 -> u3: a damaged entry in the middle of a good session."""
    return [
        entry("u1", None, message=user("first")),
        bad,
        entry("a2", "x", message=assistant("answer")),
        entry("u3", "a2", message=user("next")),
    ]


def texts(messages: list[Any]) -> list[str]:
    out = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, str):
            out.append(content)
        elif isinstance(content, list):
            out.append("".join(b.get("text", "") for b in content if b.get("type") == "text"))
    return out


WRONG_MESSAGES: dict[str, tuple[dict[str, Any], str]] = {
    "user content is a number": ({"role": "user", "content": 42, "timestamp": 1}, "message.content is a number"),
    "assistant content is text": (
        {**assistant("x"), "content": "hello"}, "message.content is text, expected a list of blocks"),
    "text block text is a number": (
        {"role": "user", "content": [{"type": "text", "text": 5}], "timestamp": 1}, "message.content[0].text is a number"),
    "image without data": (
        {"role": "user", "content": [{"type": "image", "mimeType": "image/png"}], "timestamp": 1},
        "message.content[0].data is missing"),
    "tool call arguments are a list": (
        {**assistant("x"), "content": [{"type": "toolCall", "id": "c", "name": "bash", "arguments": [1, 2]}]},
        "message.content[0].arguments is a list, expected an object; read as {}"),
    "usage is text": ({**assistant("x"), "usage": "lots"}, "message.usage is text"),
    "timestamp far past year 9999": ({"role": "user", "content": "x", "timestamp": 1e300},
                                     "message.timestamp is a number out of range"),
    "message is a string": ("hello", "message is text, expected an object"),
    "role is a list": ({"role": ["user"], "content": "x", "timestamp": 1}, "message.role is a list"),
    "tool result name is a number": (
        {"role": "toolResult", "toolCallId": "c", "toolName": 7, "content": [], "isError": False, "timestamp": 1},
        "message.toolName is a number"),
    "bash command is null": (
        {"role": "bashExecution", "command": None, "output": "", "exitCode": 0, "cancelled": False,
         "truncated": False, "timestamp": 1}, "message.command is null"),
    "nested garbage in blocks": (
        {"role": "user", "content": [[{"type": "text"}], {"type": {"nested": [1]}}], "timestamp": 1},
        "message.content[0] is a list, expected a content block"),
}


@pytest.mark.parametrize("case", sorted(WRONG_MESSAGES))
def test_a_wrong_typed_message_is_a_warning_with_file_line_and_field(tmp_path: Path, case: str) -> None:
    bad_message, expected = WRONG_MESSAGES[case]
    path = write(tmp_path / "s.jsonl", good_session(entry("x", "u1", message=bad_message)))
    before = path.read_bytes()
    loaded = load_session_readonly(path)
    assert any(w.startswith(f"{path}:3: message entry x: {expected}") for w in loaded.warnings), loaded.warnings
    # every entry keeps its place, so the path from the leaf still reaches the root
    assert [e["id"] for e in loaded.entries] == ["u1", "x", "a2", "u3"]
    context = build_session_context(loaded.entries)
    llm = convert_to_llm(context.messages)
    estimate_context_tokens(context.messages)
    assert texts(llm)[0] == "first" and texts(llm)[-2:] == ["answer", "next"]
    assert path.read_bytes() == before


def test_an_unusable_message_keeps_its_children_attached_and_stays_out_of_the_context(tmp_path: Path) -> None:
    path = write(tmp_path / "s.jsonl", good_session(entry("x", "u1", message={"role": "user", "content": 42,
                                                                                  "timestamp": 1})))
    loaded = load_session_readonly(path)
    placeholder = loaded.entries[1]
    assert placeholder["type"] == INVALID_ENTRY and placeholder["invalidType"] == "message"
    assert placeholder["parentId"] == "u1" and "content is a number" in placeholder["problem"]
    (root,) = build_tree(loaded.entries, replay_labels(loaded.entries))
    assert root.children[0].entry is placeholder and root.children[0].children[0].entry["id"] == "a2"
    roles = [m["role"] for m in build_session_context(loaded.entries).messages]
    assert roles == ["user", "assistant", "user"]


def test_nan_and_infinity_usage_is_read_as_zero_and_named(tmp_path: Path) -> None:
    bad = json.dumps(entry("x", "u1", message=assistant("hi"))).replace('"input": 0', '"input": NaN').replace(
        '"totalTokens": 0', '"totalTokens": Infinity')
    path = write(tmp_path / "s.jsonl", good_session(bad))
    loaded = load_session_readonly(path)
    assert f"{path}:3: message entry x: message.usage.input is NaN, expected a token count; read as 0" in loaded.warnings
    assert any("message.usage.totalTokens is Infinity" in w for w in loaded.warnings)
    usage = loaded.entries[1]["message"]["usage"]
    assert usage["input"] == 0 and usage["totalTokens"] == 0
    out = json.dumps(build_session_context(loaded.entries).messages, allow_nan=False)  # valid JSON again
    assert "NaN" not in out


def test_nan_inside_tool_call_arguments_becomes_null(tmp_path: Path) -> None:
    call = {**assistant("x"), "content": [{"type": "toolCall", "id": "c", "name": "bash",
                                            "arguments": {"command": "ls", "deep": [1, {"n": 0.5}]}}]}
    bad = json.dumps(entry("x", "u1", message=call)).replace("0.5", "-Infinity")
    path = write(tmp_path / "s.jsonl", good_session(bad))
    loaded = load_session_readonly(path)
    assert any("NaN/Infinity (not JSON) at message.content[0].arguments.deep[1].n" in w for w in loaded.warnings)
    assert loaded.entries[1]["message"]["content"][0]["arguments"] == {"command": "ls", "deep": [1, {"n": None}]}


@pytest.mark.parametrize("parent", [["u1"], {"id": "u1"}, 3, True])
def test_a_parent_id_of_the_wrong_type_makes_a_root(tmp_path: Path, parent: Any) -> None:
    path = write(tmp_path / "s.jsonl", [entry("u1", None, message=user("a")), entry("u2", parent, message=user("b"))])
    loaded = load_session_readonly(path)
    assert any(w.startswith(f"{path}:3: message entry u2: parentId is ") and w.endswith("shown as a root")
               for w in loaded.warnings)
    assert len(build_tree(loaded.entries, replay_labels(loaded.entries))) == 2


def test_an_entry_without_a_usable_id_is_skipped_and_named(tmp_path: Path) -> None:
    path = write(tmp_path / "s.jsonl", [entry("u1", None, message=user("a")), entry(5, "u1", message=user("b")),
                                        entry("u3", "u1", message=user("c"))])
    loaded = load_session_readonly(path)
    assert f"{path}:3: message entry without an id: id is a number, expected text; entry skipped (nothing can refer to it)" in loaded.warnings
    assert [e["id"] for e in loaded.entries] == ["u1", "u3"]


@pytest.mark.parametrize(("payload", "expected"), [
    ({"type": "model_change", "provider": 1, "modelId": "m"}, "model_change entry x: provider is a number"),
    ({"type": "thinking_level_change", "thinkingLevel": "ludicrous"}, "thinkingLevel 'ludicrous' is not a thinking level"),
    ({"type": "label", "targetId": ["u1"], "label": "x"}, "label entry x: targetId is a list"),
    ({"type": "session_info", "name": {"first": "a"}}, "session_info entry x: name is an object"),
    ({"type": "custom_message", "customType": "note", "content": 3, "display": True}, "content is a number"),
    ({"type": "branch_summary", "fromId": "u1", "summary": None}, "summary is null"),
    ({"type": "compaction", "summary": 12, "firstKeptEntryId": "u1", "tokensBefore": 5}, "summary is a number"),
    ({"type": 7}, "entry x: type is a number"),
])
def test_other_entry_types_with_wrong_fields_become_placeholders(tmp_path: Path, payload: dict[str, Any],
                                                                   expected: str) -> None:
    bad = {"type": "message", "id": "x", "parentId": "u1", "timestamp": "2026-01-01T00:00:01.000Z"} | payload
    bad.pop("message", None)
    path = write(tmp_path / "s.jsonl", good_session(bad))
    loaded = load_session_readonly(path)
    assert any(w.startswith(f"{path}:3: ") and expected in w for w in loaded.warnings), loaded.warnings
    assert loaded.entries[1]["type"] == INVALID_ENTRY
    manager = SessionManager.open(path, cwd=tmp_path)
    try:
        assert manager.session_name is None and manager.labels() == {}
        context = manager.build_session_context()
        assert context.thinking_level == "off" and texts(context.messages) == ["first", "answer", "next"]
    finally:
        manager.close()


def test_compaction_fields_are_repaired_in_memory_only(tmp_path: Path) -> None:
    compaction = {"type": "compaction", "id": "x", "parentId": "u1", "timestamp": "2026-01-01T00:00:01.000Z",
                  "summary": "S", "firstKeptEntryId": ["u1"], "tokensBefore": "many", "fromHook": "yes"}
    path = write(tmp_path / "s.jsonl", good_session(compaction))
    before = path.read_bytes()
    loaded = load_session_readonly(path)
    warnings = "\n".join(loaded.warnings)
    assert "firstKeptEntryId is a list, expected an entry id; nothing before the compaction is kept" in warnings
    assert "tokensBefore is text, expected a token count; read as 0" in warnings
    assert "fromHook is text, expected true/false; ignored" in warnings
    messages = build_session_context(loaded.entries).messages
    assert [m["role"] for m in messages] == ["compactionSummary", "assistant", "user"]
    assert messages[0]["tokensBefore"] == 0
    assert path.read_bytes() == before


def test_open_and_append_never_rewrite_the_damaged_lines(tmp_path: Path) -> None:
    path = write(tmp_path / "s.jsonl", good_session(entry("x", "u1", message={"role": "user", "content": 42,
                                                                                  "timestamp": 1})))
    before = path.read_bytes()
    manager = SessionManager.open(path, cwd=tmp_path)
    manager.append_message(user("after"))
    manager.close()
    after = path.read_bytes()
    assert after.startswith(before)
    assert [json.loads(line)["message"]["content"][0]["text"] for line in after[len(before):].splitlines()] == ["after"]
    reopened = SessionManager.open(path, cwd=tmp_path)
    try:
        assert len(reopened.get_entries()) == 5
        assert texts(reopened.build_session_context().messages)[-1] == "after"
    finally:
        reopened.close()


def test_listing_reads_a_damaged_session(tmp_path: Path) -> None:
    path = write(tmp_path / "s.jsonl", [entry("u1", None, message={"role": "user", "content": [{"type": "text", "text": 9}],
                                                                  "timestamp": float("1e300")}),
                                        entry("a2", "u1", message={**assistant("hi"), "timestamp": -1e300})])
    info = session_info(path)
    assert info is not None and info.message_count == 2 and info.first_message == "(no messages)"


# --------------------------------------------------------------------------- structure


def test_a_parent_cycle_is_cut_at_its_oldest_entry_so_the_tree_shows_it(tmp_path: Path) -> None:
    path = write(tmp_path / "s.jsonl", [entry("r", None, message=user("root")),
                                        entry("a", "c", message=user("a")),
                                        entry("b", "a", message=user("b")),
                                        entry("c", "b", message=user("c"))])
    loaded = load_session_readonly(path)
    assert f"{path}:3: message entry a: is part of a parentId cycle (a -> c -> b -> a); cut here, shown as a root" in loaded.warnings
    roots = build_tree(loaded.entries, replay_labels(loaded.entries))
    assert [r.entry["id"] for r in roots] == ["r", "a"]
    shown: list[str] = []
    stack = list(roots)
    while stack:
        node = stack.pop()
        shown.append(node.entry["id"])
        stack.extend(node.children)
    assert sorted(shown) == ["a", "b", "c", "r"]
    assert texts(build_session_context(loaded.entries).messages) == ["a", "b", "c"]


def test_a_self_parent_and_a_missing_parent_are_named(tmp_path: Path) -> None:
    path = write(tmp_path / "s.jsonl", [entry("a", "a", message=user("a")), entry("b", "gone", message=user("b"))])
    warnings = load_session_readonly(path).warnings
    assert f"{path}:2: message entry a: is its own parent; shown as a root" in warnings
    assert f"{path}:3: message entry b: parent gone is not in the file (or was skipped); shown as a root" in warnings


def test_a_duplicate_id_keeps_the_first_and_names_both_lines(tmp_path: Path) -> None:
    path = write(tmp_path / "s.jsonl", [entry("a", None, message=user("first")), entry("a", None, message=user("again")),
                                        entry("b", "a", message=user("b"))])
    loaded = load_session_readonly(path)
    assert f"{path}:3: message entry a: id a is already used by line 2; entry skipped" in loaded.warnings
    assert texts(build_session_context(loaded.entries).messages) == ["first", "b"]


def test_a_future_version_is_read_as_v3_with_a_warning_and_not_rewritten(tmp_path: Path) -> None:
    path = write(tmp_path / "s.jsonl", [entry("a", None, message=user("a"))], header={**HEADER, "version": 4})
    before = path.read_bytes()
    manager = SessionManager.open(path, cwd=tmp_path)
    try:
        assert manager.migrated_from is None and manager.backup_file is None
        assert any(w.startswith(f"{path}:1: session header: version 4 is newer") for w in manager.load_warnings)
    finally:
        manager.close()
    assert path.read_bytes() == before


@pytest.mark.parametrize("version", ["3", None, [3], -1, True])
def test_a_version_of_the_wrong_type_is_not_taken_for_v1(tmp_path: Path, version: Any) -> None:
    """Reading it as v1 would migrate: re-chain every entry linearly and rewrite the file."""
    path = write(tmp_path / "s.jsonl", [entry("a", None, message=user("a")), entry("b", None, message=user("b"))],
                 header={**HEADER, "version": version})
    before = path.read_bytes()
    manager = SessionManager.open(path, cwd=tmp_path)
    try:
        assert manager.migrated_from is None
        assert [e["parentId"] for e in manager.get_entries()] == [None, None]
        assert any(w.startswith(f"{path}:1: session header: version is ") and w.endswith("read as 3")
                   for w in manager.load_warnings)
    finally:
        manager.close()
    assert path.read_bytes() == before


def test_a_byte_order_mark_is_ignored_with_a_warning(tmp_path: Path) -> None:
    path = write(tmp_path / "s.jsonl", [entry("a", None, message=user("a")), entry("b", "a", message=assistant("b"))])
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    before = path.read_bytes()
    loaded = load_session_readonly(path)
    assert f"{path}:1: the file starts with a UTF-8 byte order mark; ignored" in loaded.warnings
    assert [e["id"] for e in loaded.entries] == ["a", "b"]
    manager = SessionManager.open(path, cwd=tmp_path)
    try:
        assert manager.backup_file is None and [e["id"] for e in manager.get_entries()] == ["a", "b"]
    finally:
        manager.close()
    assert path.read_bytes() == before
    assert find_most_recent_session(tmp_path) == path
    assert session_info(path) is not None


def test_header_fields_of_the_wrong_type_are_named(tmp_path: Path) -> None:
    path = write(tmp_path / "s.jsonl", [entry("a", None, message=user("a"))],
                 header={**HEADER, "cwd": 5, "timestamp": None, "parentSession": ["x"]})
    loaded = load_session_readonly(path)
    assert loaded.header["cwd"] == "" and "parentSession" not in loaded.header
    assert f"{path}:1: session header: cwd is a number, expected text; read as ''" in loaded.warnings
    assert session_info(path) is not None


def test_many_problems_are_listed_up_to_a_limit_then_counted(tmp_path: Path) -> None:
    lines = [entry(f"e{i}", None, message={"role": "user", "content": i, "timestamp": 1}) for i in range(30)]
    path = write(tmp_path / "s.jsonl", lines)
    warnings = load_session_readonly(path).warnings
    assert len(warnings) == 21 and warnings[-1] == f"{path}: 10 more problems in entries (30 in total)"


def test_a_v1_header_on_entries_with_ids_is_read_as_v2_so_the_tree_is_not_flattened(tmp_path: Path) -> None:
    """A v1 migration gives every entry a new id chained in file order (pi does that): on a file
    whose entries already have ids and branches, that would flatten the tree."""
    path = write(tmp_path / "s.jsonl", [entry("a", None, message=user("a")), entry("b", "a", message=user("b")),
                                        entry("c", "a", message=user("c"))], header={**HEADER, "version": 1})
    manager = SessionManager.open(path, cwd=tmp_path)
    try:
        assert [(e["id"], e["parentId"]) for e in manager.get_entries()] == [("a", None), ("b", "a"), ("c", "a")]
        assert manager.migrated_from == 2 and manager.backup_file is not None
        assert f"{path}:1: session header: version is 1, but the entries have ids (version 2 or later); read as 2" \
            in manager.load_warnings
    finally:
        manager.close()


def test_the_damaged_file_example_in_docs_sessions_md_matches_real_output(tmp_path: Path, monkeypatch) -> None:
    doc = (Path(__file__).resolve().parents[3] / "docs" / "sessions.md").read_text()
    section = doc.split("## Damaged files", 1)[1]
    content = section.split("```jsonl\n", 1)[1].split("```", 1)[0]
    shown = section.split("$ pi-tui tree demo.jsonl\n", 1)[1].split("```", 1)[0].splitlines()
    (tmp_path / "demo.jsonl").write_text(content)
    monkeypatch.chdir(tmp_path)
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        assert main(["tree", "demo.jsonl"]) == 0
    assert shown == err.getvalue().splitlines() + out.getvalue().splitlines()


def test_a_duplicated_compaction_line_is_skipped_like_any_duplicate(tmp_path: Path) -> None:
    compaction = {"type": "compaction", "id": "c", "parentId": "a", "timestamp": "2026-01-01T00:00:01.000Z",
                  "summary": "S", "firstKeptEntryId": "a", "tokensBefore": 5}
    path = write(tmp_path / "s.jsonl", [entry("a", None, message=user("a")), compaction, compaction,
                                        entry("b", "c", message=user("b"))])
    loaded = load_session_readonly(path)
    assert [e["id"] for e in loaded.entries] == ["a", "c", "b"]
    assert f"{path}:4: compaction entry c: id c is already used by line 3; entry skipped" in loaded.warnings
