"""The layering rules of ARCHITECTURE.md, checked on the real import graph."""

from __future__ import annotations

import ast
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


def _imports_of(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def test_only_interactive_imports_textual_and_only_litellm_adapters_import_litellm():
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE.parent).as_posix()
        for name in _imports_of(path):
            root = name.split(".")[0]
            if root == "textual" and not rel.startswith("pi_tui/modes/interactive/"):
                offenders.append(f"{rel} imports {name}")
            if root == "litellm" and not rel.startswith("pi_tui/providers/litellm_"):
                offenders.append(f"{rel} imports {name}")
    assert offenders == []


LAYERS = ["core", "agent|providers|tools|resources", "extensions", "session", "sdk", "modes", "cli"]


def _layer_of(module: str) -> tuple[int, str] | None:
    parts = module.split(".")
    if parts[0] != "pi_tui" or len(parts) < 2:
        return None
    top = parts[1]
    for rank, layer in enumerate(LAYERS):
        if top in layer.split("|"):
            return rank, top
    return None


def test_imports_point_down_and_siblings_stay_apart():
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        module = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        own = _layer_of(module)
        if own is None:
            continue
        for name in _imports_of(path):
            other = _layer_of(name)
            if other is None or other[1] == own[1]:
                continue
            if other[0] > own[0] or other[0] == own[0]:
                offenders.append(f"{module} imports {name}")
    assert offenders == []


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


def test_modules_stay_small():
    big = [
        f"{p.relative_to(PACKAGE.parent)}: {n} lines"
        for p in PACKAGE.rglob("*.py")
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > 500
    ]
    assert big == []
