"""Start-up hygiene: --version/--help load neither litellm nor textual; no litellm .pth file.

The import-graph rules (cycles, rooms, fakes, module size) are test_import_graph.py."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "pi_tui"


def _loaded_modules(code: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", code + "\nimport sys, json; print(json.dumps(sorted(sys.modules)))"],
        capture_output=True,
        text=True,
        check=True,
    )
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


def _heavy(mods: set[str]) -> set[str]:
    return {m for m in mods if m.split(".")[0] in ("litellm", "textual", "openai")}


def test_version_and_help_load_neither_litellm_nor_textual():
    for flag in ("--version", "--help"):
        code = (
            "import sys, io, contextlib\n"
            "from pi_tui.cli import main\n"
            "buf = io.StringIO()\n"
            "with contextlib.redirect_stdout(buf):\n"
            "    try:\n"
            f"        main([{flag!r}])\n"
            "    except SystemExit as e:\n"
            "        assert e.code == 0, e.code\n"
            "assert 'pi-tui' in buf.getvalue()\n"
        )
        assert _heavy(_loaded_modules(code)) == set()


def test_version_and_help_print_to_stdout_and_exit_zero():
    for flag in ("--version", "--help"):
        result = subprocess.run([sys.executable, "-m", "pi_tui", flag], capture_output=True, text=True)
        assert result.returncode == 0
        assert "pi-tui" in result.stdout
        assert result.stderr == ""


def test_no_litellm_pth_file_in_the_environment():
    """litellm 1.82.8 shipped a .pth credential stealer; nothing of litellm may run at startup."""
    import site

    dirs = [Path(d) for d in site.getsitepackages()]
    project = str(Path(__file__).resolve().parents[2])
    # our own editable install's .pth holds the checkout path, which may contain "litellm"
    # (a worktree of that name); that line runs nothing
    bad = [p for d in dirs if d.is_dir() for p in d.glob("*.pth")
           if any("litellm" in line and line.strip() != project for line in p.read_text(errors="ignore").splitlines())]
    assert bad == []
