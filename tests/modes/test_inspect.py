"""``pi-tui sessions | tree | context`` on pi's own files and on generated ones."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pi_tui.cli import main
from pi_tui.core.session.manager import SessionManager
from pi_tui.core.tokens import estimate_tokens
from pi_tui.resources.locations import default_session_dir

WRAPPER = "The conversation history before this point was compacted into the following summary:\n\n<summary>\n"

# What pi sends after the latest compaction of each file: the summary, then the kept entries
# (from firstKeptEntryId, which in the manual file lies before the first compaction), then the rest.
KEPT = {
    "v3-compact-manual.jsonl": ("e0978ebb", ["49cf868a", "b6845fcf", "7f73ed6c", "d856995f", "473c2e6b",
                                             "69f3e69e", "fa9f10a7", "98014f97", "e948c599", "fd9ceca3"]),
    "v3-compact-threshold.jsonl": ("ce30c867", ["ec9c86d4", "6e4ea2ad", "46a6079e", "d9e7ff07", "36246a66"]),
    # ca1d18a3, the overflow error, is stored but never sent (pi drops error/aborted replies).
    "v3-compact-overflow.jsonl": ("52c2773b", ["4fb410cd", "2a0f6de9", "7f7b67bd", "8613ea51",
                                               "c333dd1c", "ff2412f3", "e269049d", "471d5b5d"]),
}
DROPPED = {"v3-compact-overflow.jsonl": ["ca1d18a3"]}


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def file_entries(path: Path) -> dict[str, dict]:
    objects = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return {o["id"]: o for o in objects[1:]}


@pytest.mark.parametrize("name", sorted(KEPT))
def test_context_json_is_the_summary_wrapper_then_the_kept_messages(pi_fixtures: Path, capsys, name: str):
    path = pi_fixtures / name
    compaction_id, kept = KEPT[name]
    entries = file_entries(path)
    code, out, err = run(capsys, "context", str(path), "--json")
    assert code == 0 and err == ""
    data = json.loads(out)
    first, *rest = data["messages"]
    compaction = entries[compaction_id]
    assert first["role"] == "user"
    assert first["content"] == [{"type": "text", "text": WRAPPER + compaction["summary"] + "\n</summary>"}]
    assert rest == [entries[entry_id]["message"] for entry_id in kept]
    assert data["tokens"] == sum(estimate_tokens(m) for m in data["messages"])
    assert data["dropped"] == [entries[entry_id]["message"] for entry_id in DROPPED.get(name, [])]


@pytest.mark.parametrize("name", sorted(KEPT))
def test_context_text_prints_every_message_with_tokens(pi_fixtures: Path, capsys, name: str):
    path = pi_fixtures / name
    compaction_id, kept = KEPT[name]
    code, out, _ = run(capsys, "context", str(path))
    assert code == 0
    assert "=== [1] user (~" in out
    assert WRAPPER + file_entries(path)[compaction_id]["summary"] + "\n</summary>" in out
    assert f"=== [{len(kept) + 1}] " in out and f"=== [{len(kept) + 2}] " not in out
    assert out.rstrip().endswith("tokens (estimate: chars/4 per message)")
    assert f"{len(kept) + 1} messages, ~" in out
    if name in DROPPED:  # listed apart, after the messages sent
        assert "Not sent: 1 failed or aborted reply (kept in the file, dropped from every request):\n" \
               "  assistant (error): 400 This model's maximum context length is 8000 tokens." in out
        assert "stopReason error" not in out


def test_context_shows_tool_calls_and_results(pi_fixtures: Path, capsys):
    path = pi_fixtures / "v3-compact-manual.jsonl"
    code, out, _ = run(capsys, "context", str(path), "--leaf", "5eb711df")
    assert code == 0
    assert '[tool call bash id=call_1_0_d1fe0b46] {"command": "echo hello"}' in out
    assert "=== [3] toolResult bash id=call_1_0_d1fe0b46 (~2 tokens) ===\nhello\n" in out
    assert "leaf 5eb711df" in out and "compacted" not in out


def test_the_v1_file_migrates_in_memory_only(pi_fixtures: Path, capsys):
    path = pi_fixtures / "v1-before-compaction.jsonl"
    before = path.stat().st_mtime
    code, out, _ = run(capsys, "context", str(path), "--json")
    assert code == 0
    messages = json.loads(out)["messages"]
    assert messages[0]["content"][0]["text"].startswith(WRAPPER)
    assert len(messages) > 100 and path.stat().st_mtime == before


def test_tree_marks_leaf_labels_and_branch_points(tmp_path: Path, capsys):
    with SessionManager.create(tmp_path, tmp_path) as manager:
        from tests.core.session.builders import assistant, user

        u1 = manager.append_message(user("first question"))
        a1 = manager.append_message(assistant("first answer"))
        manager.append_message(user("left"))
        manager.branch(a1)
        manager.append_message(user("right"))
        manager.append_label_change(u1, "start here")
        leaf = manager.append_message(assistant("done"))
        path = manager.session_file
    code, out, _ = run(capsys, "tree", str(path))
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("session ")
    assert len(lines) == 1 + len(manager.get_entries())
    assert any(u1 in line and "[start here]" in line and line.startswith("*") for line in lines)
    assert any(a1 in line and "(2 branches)" in line for line in lines)
    assert any(line.lstrip("* ").startswith("|-- ") and "user: left" in line for line in lines)
    right = next(line for line in lines if "user: right" in line)
    assert right.startswith("* ") and "|--" not in right  # the newest branch carries on unindented
    leaf_line = next(line for line in lines if leaf in line)
    assert leaf_line.endswith("<- leaf") and leaf_line.startswith("*")
    left_line = next(line for line in lines if "user: left" in line)
    assert not left_line.startswith("*")  # off the active path


def test_tree_on_a_fixture_has_one_line_per_entry(pi_fixtures: Path, capsys):
    path = pi_fixtures / "v3-compact-threshold.jsonl"
    code, out, _ = run(capsys, "tree", str(path))
    lines = out.splitlines()
    assert code == 0 and len(lines) == 1 + len(file_entries(path))
    assert "compaction (7050 tokens before, keeps from ec9c86d4)" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("context", "{tmp}/missing.jsonl"), "session file not found: {tmp}/missing.jsonl"),
        (("tree", "{tmp}/notes.txt"), "{tmp}/notes.txt is not a pi session file (no valid session header)"),
        (("tree", "{tmp}"), "{tmp} is a directory, not a session file"),
        (("context", "{fixture}", "--leaf", "nope"), "no entry with id 'nope' in {fixture}"),
    ],
)
def test_errors_are_one_line_with_exit_code_2(tmp_path: Path, pi_fixtures: Path, capsys, args, message):
    (tmp_path / "notes.txt").write_text("hello\n")
    fixture = pi_fixtures / "v3-compact-manual.jsonl"
    values = {"tmp": tmp_path, "fixture": fixture}
    code, out, err = run(capsys, *(a.format(**values) for a in args))
    assert code == 2 and out == ""
    assert err == f"pi-tui {args[0]}: {message.format(**values)}\n"


def test_errors_never_print_a_traceback_in_a_real_process(tmp_path: Path):
    result = subprocess.run([sys.executable, "-m", "pi_tui", "context", str(tmp_path / "nope.jsonl")],
                            capture_output=True, text=True)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr


def test_load_warnings_go_to_stderr(tmp_path: Path, pi_fixtures: Path, capsys):
    path = tmp_path / "s.jsonl"
    path.write_text((pi_fixtures / "v3-compact-overflow.jsonl").read_text() + '{"type":"mess')
    code, out, err = run(capsys, "context", str(path), "--json")
    assert code == 0 and json.loads(out)["messages"]
    assert err == f"warning: {path}:18: incomplete last line skipped (a write was cut off)\n"


def _session(cwd: Path, folder: Path, text: str) -> Path:
    from tests.core.session.builders import assistant, user

    with SessionManager.create(cwd, folder) as manager:
        manager.append_message(user(text))
        manager.append_message(assistant())
        assert manager.session_file is not None
        return manager.session_file


def test_sessions_lists_this_directory_or_all(project: Path, agent_dir: Path, capsys):
    here = _session(project, default_session_dir(project), "question here")
    elsewhere = _session(project / "other", default_session_dir(project / "other"), "question there")
    code, out, _ = run(capsys, "sessions")
    assert code == 0 and "question here" in out and str(here) in out and "question there" not in out
    code, out, _ = run(capsys, "sessions", "--all", "--json")
    data = json.loads(out)
    assert {d["path"] for d in data} == {str(here), str(elsewhere)}
    assert {"id", "cwd", "name", "created", "modified", "messageCount", "firstMessage"} <= set(data[0])
    code, out, _ = run(capsys, "sessions", "--session-dir", str(project / "none"))
    assert code == 0 and out == "(no sessions)\n"


def test_the_examples_in_docs_sessions_md_match_real_output(pi_fixtures: Path, capsys):
    doc = (Path(__file__).resolve().parents[2] / "docs" / "sessions.md").read_text()
    path = pi_fixtures / "v3-compact-threshold.jsonl"
    _, tree_out, _ = run(capsys, "tree", str(path))
    _, context_out, _ = run(capsys, "context", str(path))
    block = doc.split("$ pi-tui tree ../shared/fixtures/pi-sessions/v3-compact-threshold.jsonl\n", 1)[1]
    tree_lines = [line for line in block.split("```", 1)[0].splitlines() if line.startswith(("*", "session"))]
    assert tree_lines and all(line in tree_out.splitlines() for line in tree_lines)
    block = doc.split("$ pi-tui context ../shared/fixtures/pi-sessions/v3-compact-threshold.jsonl\n", 1)[1]
    shown = [line for line in block.split("```", 1)[0].splitlines() if line.startswith(("===", "session", "6 messages"))]
    assert len(shown) == 4 and all(line in context_out.splitlines() for line in shown)


def test_context_and_sessions_follow_the_settings(project: Path, agent_dir: Path, capsys):
    from tests.core.session.builders import assistant

    custom_dir = project / "my-sessions"
    (agent_dir / "settings.json").write_text(json.dumps({"images": {"blockImages": True}, "sessionDir": str(custom_dir)}))
    image = {"type": "image", "data": "AAAA", "mimeType": "image/png"}
    with SessionManager.create(project, custom_dir) as manager:
        manager.append_message({"role": "user", "content": [{"type": "text", "text": "see"}, image], "timestamp": 1})
        manager.append_message(assistant())
        path = manager.session_file
    code, out, _ = run(capsys, "context", str(path), "--json")
    assert code == 0
    assert json.loads(out)["messages"][0]["content"] == [
        {"type": "text", "text": "see"}, {"type": "text", "text": "Image reading is disabled."},
    ]
    code, out, _ = run(capsys, "sessions")
    assert code == 0 and str(path) in out


def test_context_shows_what_is_sent_not_what_is_stored(tmp_path: Path, capsys):
    """An aborted reply is stored but never sent again; a tool call whose result never came is
    answered ``No result provided`` (the replay repair every request gets, §14.6)."""
    from tests.core.session.builders import assistant

    aborted = {**assistant("half an ans"), "stopReason": "aborted", "errorMessage": "Request was aborted"}
    calling = {**assistant(), "content": [{"type": "toolCall", "id": "c9", "name": "bash",
                                            "arguments": {"command": "ls"}}], "stopReason": "toolUse"}
    with SessionManager.create(tmp_path, tmp_path) as manager:
        manager.append_message({"role": "user", "content": [{"type": "text", "text": "go"}], "timestamp": 1})
        manager.append_message(aborted)
        manager.append_message({"role": "user", "content": [{"type": "text", "text": "again"}], "timestamp": 3})
        manager.append_message(calling)
        path = manager.session_file
    _, out, _ = run(capsys, "context", str(path), "--json")
    data = json.loads(out)
    assert [m["role"] for m in data["messages"]] == ["user", "user", "assistant", "toolResult"]
    assert data["messages"][-1]["content"] == [{"type": "text", "text": "No result provided"}]
    assert data["messages"][-1]["isError"] is True and data["messages"][-1]["toolCallId"] == "c9"
    assert data["dropped"] == [aborted]
    _, text, _ = run(capsys, "context", str(path))
    assert "half an ans" not in text.split("Not sent:")[0]
    assert "Not sent: 1 failed or aborted reply" in text and "assistant (aborted): Request was aborted" in text
    assert text.rstrip().endswith("4 messages, ~" + str(data["tokens"]) + " tokens (estimate: chars/4 per message)")
