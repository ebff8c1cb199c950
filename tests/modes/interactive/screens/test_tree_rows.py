"""The /tree rows: layout, markers, filters and search on a real session."""

from __future__ import annotations

from pathlib import Path

import pytest

from pi_tui.core.messages import user_message
from pi_tui.core.session.manager import SessionManager
from pi_tui.modes.interactive.screens.tree_rows import (
    TreeView,
    build_rows,
)
from pi_tui.modes.interactive.screens.tree_text import format_tool_call
from tests.modes.interactive.screens.builders import (
    BranchedSession,
    assistant,
    build_branched_session,
    tool_result,
)


@pytest.fixture
def branched(tmp_path: Path) -> BranchedSession:
    return build_branched_session(tmp_path, tmp_path / "sessions")


def _lines(session: BranchedSession, view: TreeView) -> list[str]:
    rows = build_rows(list(session.manager.get_tree()), leaf_id=session.manager.leaf_id, view=view)
    return [
        f"{row.prefix}{'• ' if row.on_active_path else ''}{f'[{row.label}] ' if row.label else ''}{row.text}"
        + (" ←" if row.is_position else "")
        for row in rows
    ]


def test_default_view_draws_the_branches_with_the_active_one_first(branched: BranchedSession):
    assert _lines(branched, TreeView()) == [
        "• user: say hi and run echo hello",
        "• [bash: echo hello]",
        "• assistant: done",
        "├─⊟ • [branch summary]: The user explored a different conversation branch before returning here. "
        "Summary of that exploration: A compaction happened.",
        "│   • user: second prompt: show markdown",
        "│   • assistant: answer on new branch ←",
        "└─⊟ user: second prompt: show markdown",
        "    assistant: Second answer: **markdown** works. - item 1 - item 2",
        "    [compaction: 1k tokens]",
        "    user: third prompt after compaction",
        "    assistant: third answer after compaction",
    ]


def test_all_filter_shows_settings_entries_and_tool_call_only_assistants(branched: BranchedSession):
    lines = _lines(branched, TreeView(filter="all"))
    assert lines[:4] == [
        "• [model: fake/fake-model]",
        "• [thinking: off]",
        "• user: say hi and run echo hello",
        "• assistant: [bash: echo hello]",
    ]
    assert len(lines) == 14


@pytest.mark.parametrize(
    ("tree_filter", "expected"),
    [
        ("no-tools", 10),
        ("user-only", 4),
        ("labeled-only", 0),
    ],
)
def test_filters_count_rows(branched: BranchedSession, tree_filter, expected):
    assert len(_lines(branched, TreeView(filter=tree_filter))) == expected


def test_user_only_keeps_the_tree_shape_through_hidden_entries(branched: BranchedSession):
    assert _lines(branched, TreeView(filter="user-only")) == [
        "• user: say hi and run echo hello",
        "├── • user: second prompt: show markdown ←",
        "└─⊟ user: second prompt: show markdown",
        "    user: third prompt after compaction",
    ]


def test_labels_show_and_the_labeled_filter_keeps_only_them(branched: BranchedSession):
    branched.manager.append_label_change(branched.old_user, "milestone")
    lines = _lines(branched, TreeView())
    assert "└─⊟ [milestone] user: second prompt: show markdown" in lines
    # The label entry is now the leaf; it is hidden, so its parent stands for the position.
    assert "│   • assistant: answer on new branch ←" in lines
    assert _lines(branched, TreeView(filter="labeled-only")) == ["[milestone] user: second prompt: show markdown"]


@pytest.mark.parametrize(
    ("search", "expected"),
    [
        (
            "second",
            [
                "├── • user: second prompt: show markdown ←",
                "└─⊟ user: second prompt: show markdown",
                "    assistant: Second answer: **markdown** works. - item 1 - item 2",
            ],
        ),
        ("SECOND markdown answer", ["assistant: Second answer: **markdown** works. - item 1 - item 2"]),
        ("echo", ["• user: say hi and run echo hello", "• [bash: echo hello] ←"]),
        ("nothing-like-this", []),
    ],
)
def test_search_needs_every_token(branched: BranchedSession, search, expected):
    assert _lines(branched, TreeView(search=search)) == expected


def test_folding_hides_a_branch_and_marks_it(branched: BranchedSession):
    lines = _lines(branched, TreeView(folded=frozenset({branched.old_user})))
    assert lines[-1] == "└─⊞ user: second prompt: show markdown"
    assert len(lines) == 7


def test_assistant_rows_for_aborted_error_and_empty(tmp_path: Path):
    manager = SessionManager.in_memory(tmp_path)
    manager.append_message(user_message("go"))
    manager.append_message(assistant(stop="aborted"))
    manager.append_message(assistant(stop="error", error="429 rate limited: " + "x" * 200))
    manager.append_message(assistant(calls=[("c1", "read", {"path": "a.py"})]))
    manager.append_message(tool_result("c1", "read", "boom", is_error=True))
    manager.append_message(assistant())
    rows = build_rows(list(manager.get_tree()), leaf_id=manager.leaf_id, view=TreeView())
    assert [(row.text, row.kind) for row in rows] == [
        ("user: go", "user"),
        ("assistant: (aborted)", "error"),
        ("assistant: 429 rate limited: " + "x" * 62, "error"),
        ("[read: a.py] (error)", "error"),
        ("assistant: (no content)", "assistant"),
    ]


def test_a_deep_linear_session_builds_without_recursion(tmp_path: Path):
    manager = SessionManager.in_memory(tmp_path)
    for index in range(3000):
        manager.append_message(user_message(f"prompt {index}"))
        manager.append_message(assistant(f"answer {index}"))
    rows = build_rows(list(manager.get_tree()), leaf_id=manager.leaf_id, view=TreeView())
    assert len(rows) == 6000
    assert rows[-1].is_position and rows[-1].text == "assistant: answer 2999"


@pytest.mark.parametrize(
    ("name", "arguments", "expected"),
    [
        ("bash", {"command": "ls -la\n| wc"}, "[bash: ls -la | wc]"),
        ("edit", {"path": "a.py", "oldText": "x", "newText": "y"}, "[edit: a.py]"),
        ("lookup", {"q": 1}, '[lookup: {"q":1}]'),
        ("bash", None, "[bash]"),
    ],
)
def test_format_tool_call(name, arguments, expected):
    assert format_tool_call(name, arguments) == expected


def test_tool_results_name_their_own_call_when_ids_repeat_across_turns(tmp_path: Path):
    manager = SessionManager.in_memory(tmp_path)
    for command in ("ls", "make test"):
        manager.append_message(user_message(f"run {command}"))
        manager.append_message(assistant(calls=[("call-1", "bash", {"command": command})]))
        manager.append_message(tool_result("call-1", "bash", "ok"))
    rows = build_rows(list(manager.get_tree()), leaf_id=manager.leaf_id, view=TreeView())
    assert [row.text for row in rows] == ["user: run ls", "[bash: ls]", "user: run make test", "[bash: make test]"]
