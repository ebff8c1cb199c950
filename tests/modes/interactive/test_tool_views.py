from __future__ import annotations

from pi_tui.modes.interactive.tool_views import ToolCallState, render_tool
from pi_tui.modes.interactive.tool_views.edit import preview_diff


def _spans_with(content, style: str) -> list[str]:
    return [content.plain[s.start:s.end] for s in content.spans if style in str(s.style)]


def test_bash_shows_the_command_and_only_the_last_five_lines_when_collapsed():
    output = "\n".join(f"line {i}" for i in range(1, 13))
    view = render_tool(ToolCallState(name="bash", args={"command": "make test"}, output=output, status="ok"))
    assert view.title.plain == "$ make test"
    assert view.body is not None
    body = view.body.plain
    assert body.startswith("... (7 earlier lines, ctrl+o to expand)")
    assert "line 8" in body and "line 12" in body and "line 7" not in body


def test_bash_expanded_shows_everything():
    output = "\n".join(f"line {i}" for i in range(1, 13))
    view = render_tool(ToolCallState(name="bash", args={"command": "x"}, output=output, status="ok"), expanded=True)
    assert view.body is not None and "line 1\n" in view.body.plain


def test_truncation_and_full_output_path_become_a_note():
    details = {"truncation": {"truncated": True, "outputLines": 2000, "totalLines": 5231, "truncatedBy": "lines"},
               "fullOutputPath": "/tmp/pi-bash-abc.log"}
    view = render_tool(ToolCallState(name="bash", args={"command": "x"}, output="a", details=details, status="ok"))
    assert view.notes == ["[Truncated: showing 2000 of 5231 lines. Full output: /tmp/pi-bash-abc.log]"]


def test_artifact_path_is_shown():
    details = {"artifactPath": "s.artifacts/read-1.txt", "originalBytes": 84000}
    view = render_tool(ToolCallState(name="read", args={"path": "big.log"}, output="preview", details=details))
    assert view.notes == ["[Saved as artifact (84,000 bytes): s.artifacts/read-1.txt]"]


def test_edit_colours_the_diff_from_details():
    diff = "  7 def load():\n- 8     return a\n+ 8     return b\n  9"
    view = render_tool(ToolCallState(name="edit", args={"path": "app.py"}, output="ok",
                                     details={"diff": diff, "firstChangedLine": 8}, status="ok"))
    assert view.title.plain == "edit  app.py:8"
    assert view.body is not None
    assert _spans_with(view.body, "$error") == ["- 8     return a"]
    assert _spans_with(view.body, "$success") == ["+ 8     return b"]


def test_edit_before_it_runs_previews_the_arguments():
    args = {"path": "a.py", "edits": [{"oldText": "x = 1", "newText": "x = 2\ny = 3"}]}
    assert preview_diff(args) == "-  x = 1\n+  x = 2\n+  y = 3"
    view = render_tool(ToolCallState(name="edit", args=args, status="pending"))
    assert view.body is not None and "+  y = 3" in view.body.plain


def test_read_shows_the_range_and_the_first_ten_lines():
    output = "\n".join(str(i) for i in range(30))
    view = render_tool(ToolCallState(name="read", args={"path": "a.py", "offset": 5, "limit": 30}, output=output))
    assert view.title.plain == "read  a.py:5-34"
    assert view.body is not None and "(20 more lines, ctrl+o to expand)" in view.body.plain


def test_write_shows_what_was_written():
    view = render_tool(ToolCallState(name="write", args={"path": "n.txt", "content": "hello\nworld"},
                                     output="Successfully wrote 11 bytes to n.txt", status="ok"))
    assert view.body is not None and view.body.plain == "hello\nworld"
    assert view.notes == ["Successfully wrote 11 bytes to n.txt"]


def test_unknown_tools_fall_back_to_json_arguments_and_text():
    view = render_tool(ToolCallState(name="deploy", args={"env": "prod", "n": 2}, output="deployed", status="ok"))
    assert view.title.plain == 'deploy  {"env": "prod", "n": 2}'
    assert view.body is not None and view.body.plain == "deployed"


def test_errors_render_in_the_error_colour():
    view = render_tool(ToolCallState(name="read", args={"path": "x"}, output="ENOENT", is_error=True, status="error"))
    assert view.body is not None and _spans_with(view.body, "$error") == ["ENOENT"]
