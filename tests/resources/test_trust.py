"""Project trust decisions (resources/trust.py) and what an untrusted project's settings may do."""

from __future__ import annotations

import json
from pathlib import Path

from pi_tui.resources.settings import load_settings
from pi_tui.resources.trust import TRUST_FILE, TrustStore, find_project_code, resolve_project_trust


def _project_with_code(root: Path) -> Path:
    (root / ".pi" / "extensions" / "pkg").mkdir(parents=True)
    (root / ".pi" / "extensions" / "pkg" / "__init__.py").write_text("")
    (root / ".pi" / "extensions" / "a.py").write_text("")
    (root / ".pi" / "extensions" / "_private.py").write_text("")
    (root / ".pi" / "extensions" / "notes.txt").write_text("")
    (root / ".pi" / "settings.json").write_text(json.dumps(
        {"extensions": ["x.py"], "shellPath": "/bin/evil", "shellCommandPrefix": "source .env", "theme": "light"}))
    return root


def _resolve(cwd: Path, agent: Path, flag: bool | None = None):
    settings = load_settings(cwd, agent)
    return resolve_project_trust(cwd, agent, project_settings=settings.file_settings("project"),
                                 global_settings=settings.file_settings("global"), flag=flag)


def test_the_code_of_a_project_is_listed_in_load_order(project: Path) -> None:
    _project_with_code(project)
    code = find_project_code(project, load_settings(project).file_settings("project"))
    assert [(c.kind, c.where, c.value) for c in code] == [
        ("extension", ".pi/extensions/a.py", str(project / ".pi/extensions/a.py")),
        ("extension", ".pi/extensions/pkg", str(project / ".pi/extensions/pkg")),
        ("settings extension", ".pi/settings.json", "x.py"),
        ("shellPath", ".pi/settings.json", "/bin/evil"),
        ("shellCommandPrefix", ".pi/settings.json", "source .env"),
    ]


def test_a_project_without_code_needs_no_answer(project: Path, agent_dir: Path) -> None:
    (project / ".pi").mkdir()
    (project / ".pi" / "settings.json").write_text('{"theme": "light"}')
    (project / "AGENTS.md").write_text("text is not code")
    trust = _resolve(project, agent_dir)
    assert trust.decided and trust.code == [] and trust.report() == []


def test_undecided_then_remembered_answers(project: Path, agent_dir: Path) -> None:
    _project_with_code(project)
    first = _resolve(project, agent_dir)
    assert (first.trusted, first.decided) == (False, False)
    TrustStore(agent_dir).remember(first.project, False, first.code)
    declined = _resolve(project, agent_dir)
    assert (declined.trusted, declined.decided) == (False, True)
    assert "not now" in declined.reason
    TrustStore(agent_dir).remember(first.project, True, first.code)
    trusted = _resolve(project, agent_dir)
    assert (trusted.trusted, trusted.decided) == (True, True)
    assert (agent_dir / TRUST_FILE).stat().st_mode & 0o077 == 0


def test_trust_covers_the_code_that_was_shown_only(project: Path, agent_dir: Path) -> None:
    _project_with_code(project)
    shown = _resolve(project, agent_dir)
    TrustStore(agent_dir).remember(shown.project, True, shown.code)
    settings = json.loads((project / ".pi" / "settings.json").read_text())
    (project / ".pi" / "settings.json").write_text(json.dumps({**settings, "shellPath": "/tmp/other"}))
    changed = _resolve(project, agent_dir)
    assert (changed.trusted, changed.decided) == (False, False)
    assert [c.value for c in changed.new_code] == ["/tmp/other"]


def test_a_damaged_trust_file_counts_as_no_answer(project: Path, agent_dir: Path) -> None:
    _project_with_code(project)
    (agent_dir / TRUST_FILE).write_text("{broken")
    trust = _resolve(project, agent_dir)
    assert (trust.trusted, trust.decided) == (False, False)
    TrustStore(agent_dir).remember(trust.project, True, trust.code)  # the next answer replaces it
    assert _resolve(project, agent_dir).trusted


def test_a_trust_entry_with_wrong_types_trusts_no_code(project: Path, agent_dir: Path) -> None:
    """Valid JSON with wrong types ("code": 5) ended pi-tui in a TypeError traceback at startup."""
    import os

    _project_with_code(project)
    for entry in ({"trusted": True, "code": 5, "decidedAt": [1]}, {"trusted": True, "code": {"a": 1}}):
        (agent_dir / TRUST_FILE).write_text(json.dumps({"projects": {os.path.realpath(project): entry}}))
        trust = _resolve(project, agent_dir)
        assert (trust.trusted, trust.decided) == (False, False)  # the TUI asks again
        assert "unknown date" in trust.reason or "{" not in trust.reason


def test_the_global_setting_trusts_folders_below_a_listed_one_but_not_look_alikes(
        tmp_path: Path, agent_dir: Path, isolated_home: Path) -> None:
    inside = _project_with_code(isolated_home / "code" / "mine")
    look_alike = _project_with_code(isolated_home / "code-other")
    (agent_dir / "settings.json").write_text(json.dumps({"trustedProjects": ["~/code"]}))
    assert _resolve(inside, agent_dir).trusted
    assert not _resolve(look_alike, agent_dir).trusted


def test_the_flag_wins_over_a_remembered_answer(project: Path, agent_dir: Path) -> None:
    _project_with_code(project)
    trust = _resolve(project, agent_dir)
    TrustStore(agent_dir).remember(trust.project, False, trust.code)
    assert _resolve(project, agent_dir, flag=True).trusted


def test_untrusted_project_settings_keep_everything_but_their_code_keys(project: Path, agent_dir: Path) -> None:
    _project_with_code(project)
    (agent_dir / "settings.json").write_text(json.dumps({"shellPath": "/bin/bash", "extensions": ["g.py"]}))
    settings = load_settings(project, agent_dir)
    assert settings.get("theme") == "light"  # text settings apply
    assert settings.get("shellPath") == "/bin/bash"  # the global value, not the project's
    assert settings.as_dict().get("shellCommandPrefix") is None
    assert settings.resource_paths("extensions") == [agent_dir / "g.py"]
    settings.set_project_trusted(True)
    assert settings.get("shellPath") == "/bin/evil"
    assert settings.as_dict()["shellCommandPrefix"] == "source .env"
    assert settings.resource_paths("extensions") == [project / ".pi" / "x.py", agent_dir / "g.py"]
    settings.set_project_trusted(False)
    settings.reload()  # /reload keeps the decision
    assert settings.get("shellPath") == "/bin/bash"


# --------------------------------------------------------------------------- settings that reach outside


def _project_reaching_out(root: Path, outside: Path) -> Path:
    (root / ".pi" / "skills" / "mine").mkdir(parents=True)
    (outside / "prompts").mkdir(parents=True)
    (root / ".pi" / "settings.json").write_text(json.dumps({
        "sessionDir": "sessions-in-the-repo",
        "skills": ["skills/mine", "../../outside/skills"],
        "prompts": [str(outside / "prompts"), "../docs/prompts"],
        "theme": "light",
    }))
    return root


def test_session_dir_and_paths_outside_the_project_are_listed_for_trust(tmp_path: Path, project: Path) -> None:
    _project_reaching_out(project, tmp_path / "outside")
    code = find_project_code(project, load_settings(project).file_settings("project"))
    assert [(c.kind, c.value) for c in code] == [
        ("sessionDir", "sessions-in-the-repo"),
        ("outside path", "skills: ../../outside/skills"),
        ("outside path", f"prompts: {tmp_path / 'outside' / 'prompts'}"),
    ]
    assert "session files" in code[0].describe() and "outside this project" in code[1].describe()


def test_an_untrusted_project_cannot_move_session_files_nor_read_outside_paths(
        tmp_path: Path, project: Path, agent_dir: Path) -> None:
    _project_reaching_out(project, tmp_path / "outside")
    (agent_dir / "settings.json").write_text(json.dumps({"sessionDir": "~/all-sessions"}))
    settings = load_settings(project, agent_dir)
    assert settings.session_dir == "~/all-sessions"  # the global value, not the project's
    assert settings.resource_paths("skills") == [project / ".pi" / "skills" / "mine"]
    assert settings.resource_paths("prompts") == [project / "docs" / "prompts"]  # normalized as pi's
    assert settings.get("theme") == "light"
    settings.set_project_trusted(True)
    assert settings.session_dir == "sessions-in-the-repo"
    assert settings.resource_paths("skills") == [project / ".pi" / "skills" / "mine",
                                                 tmp_path / "outside" / "skills"]
    assert len(settings.resource_paths("prompts")) == 2


def test_a_symlink_inside_the_project_that_leads_outside_counts_as_outside(tmp_path: Path, project: Path) -> None:
    (tmp_path / "secrets").mkdir()
    (project / ".pi").mkdir()
    (project / ".pi" / "innocent").symlink_to(tmp_path / "secrets")
    (project / ".pi" / "settings.json").write_text(json.dumps({"skills": ["innocent"]}))
    settings = load_settings(project)
    assert settings.resource_paths("skills") == []
    assert [c.kind for c in find_project_code(project, settings.file_settings("project"))] == ["outside path"]


def test_trust_follows_the_items_not_their_content(project: Path, agent_dir: Path) -> None:
    # Decided (README "Project trust"): like Claude Code, Codex and Gemini CLI, trusting a project
    # trusts its authors' later edits; only a new item (path, program, prefix) asks again.
    _project_with_code(project)
    shown = _resolve(project, agent_dir)
    TrustStore(agent_dir).remember(shown.project, True, shown.code)
    (project / ".pi" / "extensions" / "a.py").write_text("import os  # changed after git pull\n")
    again = _resolve(project, agent_dir)
    assert (again.trusted, again.decided, again.new_code) == (True, True, [])
