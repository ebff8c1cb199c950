from __future__ import annotations

import stat

import pytest

from pi_tui.modes.interactive.external_editor import ExternalEditorError, edit_text, editor_command


def test_visual_wins_over_editor_and_is_split_like_a_shell():
    assert editor_command({"VISUAL": "code --wait", "EDITOR": "vi"}) == ["code", "--wait"]
    assert editor_command({"VISUAL": " ", "EDITOR": "nano"}) == ["nano"]
    with pytest.raises(ExternalEditorError, match=r"set \$VISUAL or \$EDITOR"):
        editor_command({})
    with pytest.raises(ExternalEditorError, match=r"\$EDITOR"):
        editor_command({"EDITOR": "vi 'unclosed"})


def _script(tmp_path, body: str) -> list[str]:
    path = tmp_path / "editor.sh"
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return [str(path)]


def test_the_saved_text_comes_back_without_the_final_newline(tmp_path):
    command = _script(tmp_path, 'cat "$1" > "$1.seen"; printf "rewritten\\n" > "$1"\ncp "$1.seen" ' + f'{tmp_path}/seen\n')
    assert edit_text("original", command) == "rewritten"
    assert (tmp_path / "seen").read_text() == "original"


def test_a_failing_editor_or_a_missing_program_is_an_error(tmp_path):
    with pytest.raises(ExternalEditorError, match="exited with status 3"):
        edit_text("x", _script(tmp_path, "exit 3\n"))
    with pytest.raises(ExternalEditorError, match="Could not start"):
        edit_text("x", [str(tmp_path / "no-such-editor")])
