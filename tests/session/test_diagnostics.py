"""``AgentSession.diagnostics()``: every start-up problem in one list, each naming its file."""

from __future__ import annotations

from pathlib import Path

from pi_tui.core.session.manager import SessionManager


def test_problems_of_every_part_are_collected_with_their_files(make_session, project: Path, agent_dir: Path,
                                                                tmp_path: Path) -> None:
    (project / ".pi").mkdir(exist_ok=True)
    (project / ".pi" / "settings.json").write_text("{ not json")
    (agent_dir / "models.json").write_text("[1, 2]")
    broken_ext = tmp_path / "broken.py"
    broken_ext.write_text("raise RuntimeError('boom at import')\n")
    manager = SessionManager.create(project, tmp_path / "sessions")
    manager.append_message({"role": "user", "content": "hi", "timestamp": 1})
    manager.append_message({"role": "assistant", "content": [], "api": "a", "provider": "p", "model": "m",
                            "usage": {}, "stopReason": "stop", "timestamp": 2})
    path = manager.session_file
    assert path is not None
    manager.close()
    with path.open("a") as f:
        f.write("this is not json\n")
    session, _, _ = make_session([], session=str(path), extension_paths=[str(broken_ext)],
                                 load_extensions=False)
    found = session.diagnostics()
    by_source = dict(found)
    assert set(by_source) >= {"settings", "models", "session", "extensions"}
    assert str(project / ".pi" / "settings.json") in by_source["settings"]
    assert str(agent_dir / "models.json") in by_source["models"]
    assert str(path) in by_source["session"] and "malformed" in by_source["session"]
    assert str(broken_ext) in by_source["extensions"] and "boom at import" in by_source["extensions"]
    assert len({m for _, m in found}) == len(found)
    session.session_manager.close()


def test_a_clean_setup_has_no_diagnostics_and_notes_can_be_added(make_session) -> None:
    session, _, _ = make_session([])
    assert session.diagnostics() == []
    session.add_diagnostic("model", "The session's model x/y is not available; using fake/fake-model.")
    assert session.diagnostics() == [("model", "The session's model x/y is not available; using fake/fake-model.")]


def test_a_tool_two_extensions_register_is_a_startup_diagnostic(make_session, tmp_path: Path) -> None:
    """The second registration is dropped at load; it was reported only to error listeners,
    which nobody had attached yet, so the person never learnt why their tool did nothing."""
    first, second = tmp_path / "first.py", tmp_path / "second.py"
    for path, answer in ((first, "one"), (second, "two")):
        path.write_text("def register(pi):\n"
                        f"    pi.register_tool(name='deploy', description='Deploy', execute=lambda c, a, ctx: {answer!r})\n")
    session, _, _ = make_session([], extension_paths=[str(first), str(second)], load_extensions=False)
    assert ("extensions", f"{second}: tool 'deploy' is already registered by {first}") in session.diagnostics()
