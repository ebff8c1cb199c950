"""Moving a session file to the trash: the ``trash`` command first (as pi), else the freedesktop
home trash when it exists, else nothing (the picker then deletes)."""

from __future__ import annotations

import sys
from pathlib import Path
from urllib.parse import unquote

import pytest

from pi_tui.core.session.trash import home_trash, move_to_trash

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the freedesktop trash is a Linux desktop's")


def _session(tmp_path: Path, name: str = "2026-01-01_a b.jsonl") -> Path:
    folder = tmp_path / "sessions" / "--proj--"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(f'{{"type":"session","id":"s-{name[:4]}","cwd":"{tmp_path}"}}\n', encoding="utf-8")
    return path


def test_home_trash_follows_xdg_data_home(tmp_path: Path):
    assert home_trash({"XDG_DATA_HOME": str(tmp_path)}) == tmp_path / "Trash"
    assert home_trash({}) == Path.home() / ".local" / "share" / "Trash"


def test_freedesktop_trash_keeps_the_file_and_where_it_came_from(tmp_path: Path):
    trash = tmp_path / "Trash"
    trash.mkdir()
    first, second = _session(tmp_path), _session(tmp_path / "other")
    assert move_to_trash(first, trash_dir=trash, use_cli=False) == "freedesktop"
    assert move_to_trash(second, trash_dir=trash, use_cli=False) == "freedesktop"  # same name: a new one
    assert not first.exists() and not second.exists()
    names = sorted(p.name for p in (trash / "files").iterdir())
    assert names == ["2026-01-01_a b.1.jsonl", "2026-01-01_a b.jsonl"]
    assert (trash / "files" / "2026-01-01_a b.jsonl").read_text().startswith('{"type":"session"')
    info = (trash / "info" / "2026-01-01_a b.jsonl.trashinfo").read_text()
    lines = info.splitlines()
    assert lines[0] == "[Trash Info]"
    assert lines[1] == "Path=" + str(first).replace(" ", "%20") and unquote(lines[1][5:]) == str(first)
    assert lines[2].startswith("DeletionDate=2") and "T" in lines[2]


def test_no_trash_folder_means_no_trash(tmp_path: Path):
    path = _session(tmp_path)
    assert move_to_trash(path, trash_dir=tmp_path / "Trash", use_cli=False) is None
    assert path.exists() and not (tmp_path / "Trash").exists()  # none is created


def test_the_trash_command_comes_first(tmp_path: Path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    received = tmp_path / "received.txt"
    cli = bin_dir / "trash"
    cli.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > "{received}"\nrm -f -- "$1"\n')
    cli.chmod(0o755)
    trash = tmp_path / "Trash"
    trash.mkdir()
    path = _session(tmp_path)
    assert move_to_trash(path, trash_cli=str(cli), trash_dir=trash) == "trash-cli"
    assert received.read_text().splitlines() == [str(path)] and not path.exists()
    assert not (trash / "files").exists()


def test_a_failing_trash_command_falls_back_to_the_home_trash(tmp_path: Path):
    cli = tmp_path / "trash"
    cli.write_text("#!/bin/sh\necho 'trash: cannot' >&2\nexit 1\n")
    cli.chmod(0o755)
    trash = tmp_path / "Trash"
    trash.mkdir()
    path = _session(tmp_path)
    assert move_to_trash(path, trash_cli=str(cli), trash_dir=trash) == "freedesktop"
    assert not path.exists() and (trash / "files" / path.name).exists()


def test_the_pickers_delete_uses_the_home_trash_and_keeps_snapshots(tmp_path: Path, agent_dir: Path, monkeypatch):
    from pi_tui.checkpoints.git_store import store_dir_for
    from pi_tui.modes.interactive.screens import session_picker

    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))  # no `trash` command

    def with_snapshots(name: str) -> tuple[Path, Path]:
        """A session file and its snapshot refs in the project's checkpoint store."""
        path = _session(tmp_path, name)
        refs = store_dir_for(agent_dir, tmp_path) / "refs" / "pi-tui" / "sessions" / f"s-{name[:4]}"
        refs.mkdir(parents=True)
        return path, refs

    path, refs = with_snapshots("gone.jsonl")
    assert session_picker.delete_session_file(path) == "deleted"  # no trash folder: deleted
    assert not path.exists() and not refs.exists()  # and its snapshots forgotten
    trash = home_trash()
    trash.mkdir(parents=True)
    path, refs = with_snapshots("kept.jsonl")
    assert session_picker.delete_session_file(path) == "trash"
    assert not path.exists() and (trash / "files" / path.name).exists()
    assert refs.is_dir()  # a trashed session keeps its snapshots: it may come back
