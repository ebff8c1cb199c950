from __future__ import annotations

import textwrap
from pathlib import Path

from pi_tui.extensions.loader import discover_extension_paths, load_extensions


def ext(path: Path, source: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    return path


GOOD = """
    def register(pi):
        pi.on("agent_start", lambda event: None)
"""


def test_discovery_order_and_kinds(project: Path, agent_dir: Path, tmp_path: Path) -> None:
    a = ext(agent_dir / "extensions" / "a.py", GOOD)
    pkg = ext(agent_dir / "extensions" / "b_pkg" / "__init__.py", GOOD).parent
    ext(agent_dir / "extensions" / "_private.py", GOOD)
    ext(agent_dir / "extensions" / "notes.txt", "x")
    (agent_dir / "extensions" / "not_a_package").mkdir()
    p = ext(project / ".pi" / "extensions" / "p.py", GOOD)
    explicit = ext(tmp_path / "cli.py", GOOD)
    listed = ext(tmp_path / "listed.py", GOOD)
    paths = discover_extension_paths(project, agent_dir, explicit_paths=[explicit, a], settings_paths=[listed, p])
    assert paths == [explicit, a, listed, p, pkg]  # pi's order: -e, settings, project, user; first place wins
    assert discover_extension_paths(project, agent_dir, explicit_paths=[explicit], include_defaults=False) == [explicit]


def test_loads_files_and_packages_with_relative_imports(tmp_path: Path) -> None:
    single = ext(tmp_path / "single.py", GOOD)
    pkg = tmp_path / "pkg"
    ext(pkg / "helpers.py", "GREETING = 'hi from helper'\n")
    ext(pkg / "__init__.py", """
        from dataclasses import dataclass
        from .helpers import GREETING

        @dataclass
        class Box:
            value: str

        def register(pi):
            pi.register_command("greet", lambda args: pi.notify(Box(GREETING).value))
    """)
    runner = load_extensions([single, pkg])
    assert runner.errors == []
    assert [e.path for e in runner.extensions] == [single, pkg]
    assert [c.name for c in runner.commands()] == ["greet"]


def test_broken_extensions_are_reported_and_skipped(tmp_path: Path) -> None:
    syntax = ext(tmp_path / "syntax.py", "def register(pi):\n    return (\n")
    importing = ext(tmp_path / "importing.py", "import definitely_not_a_module_xyz\n")
    no_register = ext(tmp_path / "no_register.py", "x = 1\n")
    raising = ext(tmp_path / "raising.py", """
        def register(pi):
            pi.on("agent_start", lambda e: None)
            pi.register_command("half", lambda a: None)
            raise ValueError("config missing")
    """)
    async_register = ext(tmp_path / "async_register.py", "async def register(pi):\n    pass\n")
    exits = ext(tmp_path / "exits.py", "import sys\nsys.exit(3)\n")
    missing = tmp_path / "missing.py"
    good = ext(tmp_path / "good.py", GOOD)
    runner = load_extensions([syntax, importing, no_register, raising, async_register, exits, missing, good])
    assert [e.path for e in runner.extensions] == [good]
    errors = {Path(e["extensionPath"]).name: e["error"] for e in runner.errors}
    assert all(e["event"] == "load" for e in runner.errors)
    assert errors["syntax.py"].startswith("SyntaxError")
    assert errors["importing.py"].startswith("ModuleNotFoundError")
    assert errors["no_register.py"] == "ExtensionError: the module has no register(pi) function"
    assert errors["raising.py"] == "ValueError: config missing"
    assert "not async" in errors["async_register.py"]
    assert errors["exits.py"] == "SystemExit: 3"
    assert errors["missing.py"] == "ExtensionError: extension path does not exist"
    # Registrations made before the failure are discarded.
    assert runner.commands() == []
    assert [e.path for e in runner.extensions if e.handlers.get("agent_start")] == [good]


def test_reload_executes_the_module_again(tmp_path: Path) -> None:
    path = ext(tmp_path / "counter.py", """
        import builtins
        builtins.PI_TUI_TEST_LOADS = getattr(builtins, "PI_TUI_TEST_LOADS", 0) + 1
        def register(pi):
            pass
    """)
    import builtins

    load_extensions([path])
    load_extensions([path])
    assert builtins.PI_TUI_TEST_LOADS >= 2  # type: ignore[attr-defined]
    del builtins.PI_TUI_TEST_LOADS  # type: ignore[attr-defined]


def test_a_command_that_could_not_run_is_refused_at_load_naming_file_and_command(tmp_path: Path) -> None:
    """``register_command`` with pi's TypeScript ``{handler, description}`` object, or any handler
    that cannot be called as ``handler(args)`` / ``handler(args, ctx)``, used to be accepted and
    fail only when typed. Each is refused while loading; the file's other commands and the other
    extensions load."""
    mixed = ext(tmp_path / "mixed.py", """
        def register(pi):
            pi.register_command("ported", {"description": "Deploy", "handler": lambda args, ctx: None})
            pi.register_command("text", "echo hi")
            pi.register_command("none", None)
            pi.register_command("nullary", lambda: None)
            pi.register_command("three", lambda args, ctx, extra: None)
            pi.register_command("kwonly", lambda args, *, token: None)
            pi.register_command("numbered", lambda args: None, description=3)
            pi.register_command("typo", lambda args: None, desc="Typo")
            pi.register_command(42, lambda args: None)
            pi.register_command("two words", lambda args: None)
            pi.register_command("fine", lambda args, ctx: None, description="Works")
            pi.register_command("defaults", lambda args, ctx=None, extra=1: None)
    """)
    other = ext(tmp_path / "other.py", """
        def register(pi):
            pi.register_command("other", lambda args: None)
    """)
    runner = load_extensions([mixed, other])
    assert [(c.invocation_name, c.extension_path) for c in runner.commands()] == [
        ("fine", mixed), ("defaults", mixed), ("other", other)]
    assert {e["extensionPath"] for e in runner.errors} == {str(mixed)}
    assert {e["event"] for e in runner.errors} == {"load"}  # shown with the start-up diagnostics
    errors = [e["error"] for e in runner.errors]
    assert errors == [
        "register_command('ported') refused: the handler is a dict, not a function (pi's TypeScript "
        "{handler, description} object is not the Python API): pass the function itself, "
        "pi.register_command('ported', handler, description='…')",
        "register_command('text') refused: the handler is a str, not a function taking (args) or (args, ctx)",
        "register_command('none') refused: the handler is None, not a function taking (args) or (args, ctx)",
        "register_command('nullary') refused: the handler takes (); it is called as handler(args) or "
        "handler(args, ctx)",
        "register_command('three') refused: the handler takes (args, ctx, extra); it is called as "
        "handler(args) or handler(args, ctx)",
        "register_command('kwonly') refused: the handler takes (args, *, token); it is called as "
        "handler(args) or handler(args, ctx)",
        "register_command('numbered') refused: description is an int, not a string",
        "register_command('typo') refused: unknown option 'desc'; the options are description=",
        "register_command(42) refused: the name is an int, not a string",
        "register_command('two words') refused: a command name must be one word (no spaces), like 'deploy'",
    ]
