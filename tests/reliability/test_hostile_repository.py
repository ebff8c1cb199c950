"""A hostile repository: a clone the user merely opens runs none of its code until trusted.

The repository (``hostile_repo.py``) holds a ``.pi/extensions`` module, an extension listed in
its settings, a ``shellPath`` program and a ``shellCommandPrefix``, each leaving a marker when it
runs, plus an AGENTS.md and SYSTEM.md written to manipulate the model. Driven through print mode,
JSON, RPC and the TUI: untrusted, nothing runs and each mode says what it skipped; trusted (flag,
global setting, the TUI's remembered answer), it all runs and each mode lists it.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from pi_tui.cli import build_parser
from pi_tui.resources.trust import TRUST_FILE
from pi_tui.testing.fake_server import FakeServer
from tests.reliability.hostile_repo import MARKERS, fake_agent_dir, make_hostile_repo, run_cli

FAULT_CLASS = "hostile repository"

BASH_THEN_DONE = [
    {"tool_calls": [{"id": "call_1", "name": "bash", "arguments": {"command": "echo from-bash"}}]},
    {"text": "done"},
]


def _trust_file(agent: Path) -> dict[str, Any]:
    return json.loads((agent / TRUST_FILE).read_text())["projects"]


# --------------------------------------------------------------------------- print, JSON, RPC


def test_print_mode_runs_none_of_an_untrusted_repositorys_code_and_says_so(tmp_path: Path) -> None:
    repo = make_hostile_repo(tmp_path)
    with FakeServer(BASH_THEN_DONE) as server:
        agent = fake_agent_dir(tmp_path, server.base_url)
        result = run_cli(["-p", "run echo"], agent, repo.root)
        requests = server.requests
    assert result.returncode == 0, result.stderr
    assert result.stdout == "done\n"
    assert repo.ran() == set(), f"hostile code ran: {repo.ran()}"
    assert requests[1]["messages"][-1]["content"] == "from-bash\n"  # bash ran, with the user's shell
    assert "Project code NOT loaded" in result.stderr
    for shown in (".pi/extensions/helper.py", "../tools/lint_ext.py", '"shellPath"', '"shellCommandPrefix"',
                  "--trust-project"):
        assert shown in result.stderr
    # Text is not code: the project's SYSTEM.md and AGENTS.md still shape the prompt.
    system = requests[0]["messages"][0]["content"]
    assert "helpful agent of the repository owner" in system and "IGNORE PREVIOUS INSTRUCTIONS" in system
    assert "system prompt is replaced by this project's" in result.stderr


def test_trust_project_flag_runs_all_of_it_and_lists_it(tmp_path: Path) -> None:
    repo = make_hostile_repo(tmp_path)
    with FakeServer(BASH_THEN_DONE) as server:
        agent = fake_agent_dir(tmp_path, server.base_url)
        result = run_cli(["-p", "run echo", "--trust-project"], agent, repo.root)
    assert result.returncode == 0, result.stderr
    assert repo.ran() == set(MARKERS)
    assert "Project code loaded" in result.stderr and "--trust-project" in result.stderr
    assert not (agent / TRUST_FILE).exists()  # the flag is for this run only


def test_the_global_trusted_projects_setting_trusts_a_folder_and_its_subfolders(tmp_path: Path) -> None:
    repo = make_hostile_repo(tmp_path)
    with FakeServer(BASH_THEN_DONE) as server:
        agent = fake_agent_dir(tmp_path, server.base_url, settings={"trustedProjects": [str(tmp_path)]})
        result = run_cli(["-p", "run echo"], agent, repo.root)
    assert result.returncode == 0, result.stderr
    assert repo.ran() == set(MARKERS)
    assert "listed in the trustedProjects setting" in result.stderr


def test_a_project_cannot_trust_itself_in_its_own_settings(tmp_path: Path) -> None:
    repo = make_hostile_repo(tmp_path)
    settings = json.loads((repo.root / ".pi" / "settings.json").read_text())
    (repo.root / ".pi" / "settings.json").write_text(json.dumps({**settings, "trustedProjects": [str(repo.root)]}))
    with FakeServer(BASH_THEN_DONE) as server:
        agent = fake_agent_dir(tmp_path, server.base_url)
        result = run_cli(["-p", "run echo"], agent, repo.root)
    assert result.returncode == 0, result.stderr
    assert repo.ran() == set()


def test_json_mode_reports_the_skipped_code_as_a_warning_event(tmp_path: Path) -> None:
    repo = make_hostile_repo(tmp_path)
    with FakeServer(BASH_THEN_DONE) as server:
        agent = fake_agent_dir(tmp_path, server.base_url)
        result = run_cli(["--mode", "json", "-p", "run echo"], agent, repo.root)
    assert result.returncode == 0, result.stderr
    assert repo.ran() == set()
    events = [json.loads(line) for line in result.stdout.splitlines()]
    warnings = [e["message"] for e in events if e["type"] == "notify" and e["level"] == "warning"]
    assert any("Project code NOT loaded" in w and "helper.py" in w for w in warnings)


def test_rpc_mode_runs_none_of_it_untrusted_and_all_of_it_with_the_flag(tmp_path: Path) -> None:
    repo = make_hostile_repo(tmp_path)
    command = json.dumps({"id": "1", "type": "prompt", "message": "run echo"}) + "\n"
    with FakeServer(BASH_THEN_DONE + BASH_THEN_DONE) as server:
        agent = fake_agent_dir(tmp_path, server.base_url)
        untrusted = run_cli(["--mode", "rpc"], agent, repo.root, stdin=command)
        assert repo.ran() == set()
        trusted = run_cli(["--mode", "rpc", "--trust-project"], agent, repo.root, stdin=command)
    assert "Project code NOT loaded" in untrusted.stderr
    assert any(json.loads(line).get("type") == "agent_end" for line in untrusted.stdout.splitlines())
    assert repo.ran() == set(MARKERS), trusted.stderr


def test_a_model_that_writes_a_shell_path_into_an_untrusted_project_gains_nothing(tmp_path: Path) -> None:
    # Prompt injection's next step: the model edits .pi/settings.json, then runs bash.
    repo = make_hostile_repo(tmp_path)
    (repo.root / ".pi" / "settings.json").write_text("{}")
    settings_edit = {"path": ".pi/settings.json", "content": json.dumps(
        {"shellPath": str(repo.root / "tools" / "sh"), "shellCommandPrefix": f"touch {repo.canary / 'prefix'}"})}
    turns = [
        {"tool_calls": [{"id": "w", "name": "write", "arguments": settings_edit}]},
        {"tool_calls": [{"id": "b", "name": "bash", "arguments": {"command": "echo after"}}]},
        {"text": "done"},
    ]
    with FakeServer(turns) as server:
        agent = fake_agent_dir(tmp_path, server.base_url)
        result = run_cli(["-p", "go"], agent, repo.root)
    assert result.returncode == 0, result.stderr
    assert repo.ran() == set()


# --------------------------------------------------------------------------- the TUI


def _tui_app(repo_root: Path, agent: Path, *args: str) -> Any:
    from pi_tui.modes.interactive import load_session
    from pi_tui.modes.interactive.app import PiApp

    parsed = build_parser().parse_args(list(args))
    app: Any = None

    def loader() -> Any:
        return load_session(parsed, repo_root, agent, ask_trust=app.ask_project_trust)

    app = PiApp(None, cwd=repo_root, agent_dir=agent, session_loader=loader)
    return app


async def _until(pilot: Any, condition: Any, seconds: float = 10.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while not condition():
        assert loop.time() < deadline, "condition not met in time"
        await pilot.pause(0.05)


async def _answer(pilot: Any, key: str) -> None:
    """Wait for the trust dialog, answer it with ``key``, wait for the chat to be loaded."""
    app = pilot.app
    await _until(pilot, lambda: _dialog_up(app))
    await pilot.press(key)
    await _chat_ready(pilot)


async def _chat_ready(pilot: Any) -> None:
    await _until(pilot, lambda: pilot.app.chat is not None and pilot.app.chat.history_loaded.is_set())


def _dialog_up(app: Any) -> bool:
    """The trust dialog is on screen with its text (pushed and composed)."""
    from pi_tui.modes.interactive.screens.trust import ProjectTrustScreen

    return isinstance(app.screen, ProjectTrustScreen) and bool(app.screen.query("#trust-body"))


def _dialog_text(app: Any) -> str:
    from textual.widgets import Static

    return "\n".join(str(w.render()) for w in app.screen.query(Static))


def _notices(app: Any) -> str:
    from pi_tui.modes.interactive.widgets.chat_items import Notice

    return "\n".join(str(n.render()) for n in app.chat.query(Notice))


@pytest.mark.parametrize("answer", ["n", "escape"])
async def test_tui_asks_once_naming_what_would_run_and_not_now_runs_nothing(tmp_path: Path, answer: str) -> None:
    from pi_tui.modes.interactive.screens.trust import ProjectTrustScreen

    repo = make_hostile_repo(tmp_path)
    with FakeServer([]) as server:
        agent = fake_agent_dir(tmp_path, server.base_url)
        app = _tui_app(repo.root, agent)
        async with app.run_test(size=(120, 45)) as pilot:
            await _until(pilot, lambda: _dialog_up(app))
            shown = _dialog_text(app)
            for item in (str(repo.root), ".pi/extensions/helper.py", "../tools/lint_ext.py",
                         str(repo.root / "tools" / "sh"), f"touch {repo.canary / 'prefix'}"):
                assert item in shown, f"the dialog does not name {item}"
            await pilot.press("enter")  # typed ahead: must not trust
            await pilot.pause(0.1)
            assert isinstance(app.screen, ProjectTrustScreen)
            await pilot.press(answer)
            await _chat_ready(pilot)
            await _until(pilot, lambda: "Project code NOT loaded" in _notices(app))
            assert "system prompt is replaced by this project's" in _notices(app)
            assert app.session.project_trust.trusted is False
            assert app.session.settings.as_dict().get("shellPath") is None
        assert repo.ran() == set()
        assert _trust_file(agent)[str(repo.root)]["trusted"] is False
        # Once per project: the next start does not ask again.
        app = _tui_app(repo.root, agent)
        async with app.run_test(size=(120, 45)) as pilot:
            await _chat_ready(pilot)
            assert not isinstance(app.screen, ProjectTrustScreen)
        assert repo.ran() == set()


async def test_tui_trust_runs_the_code_remembers_it_and_asks_again_for_new_code(tmp_path: Path) -> None:
    repo = make_hostile_repo(tmp_path)
    with FakeServer([]) as server:
        agent = fake_agent_dir(tmp_path, server.base_url)
        app = _tui_app(repo.root, agent)
        async with app.run_test(size=(120, 45)) as pilot:
            await _answer(pilot, "t")
            await _until(pilot, lambda: "Project code loaded" in _notices(app))
            assert app.session.settings.as_dict()["shellPath"] == str(repo.root / "tools" / "sh")
        assert repo.ran() == {"extension", "settings-extension"}  # the shell ones run with bash
        assert _trust_file(agent)[str(repo.root)]["trusted"] is True
        # A pull brings a new extension: trust covered what was shown, so pi-tui asks again.
        (repo.root / ".pi" / "extensions" / "new_one.py").write_text("def register(pi):\n    pass\n")
        app = _tui_app(repo.root, agent)
        async with app.run_test(size=(120, 45)) as pilot:
            await _until(pilot, lambda: _dialog_up(app))
            assert "(new) .pi/extensions/new_one.py" in _dialog_text(app)
            await _answer(pilot, "n")
        # Print mode does not run the uncovered code either.
        with FakeServer([{"text": "ok"}]) as again:
            agent_json = json.loads((agent / "models.json").read_text())
            agent_json["providers"]["fake"]["baseUrl"] = again.base_url
            (agent / "models.json").write_text(json.dumps(agent_json))
            for marker in list(repo.canary.iterdir()):
                marker.unlink()
            result = run_cli(["-p", "hi"], agent, repo.root)
        assert repo.ran() == set(), result.stderr


async def test_tui_trust_is_keyed_by_the_real_path(tmp_path: Path) -> None:
    repo = make_hostile_repo(tmp_path)
    link = tmp_path / "link-to-repo"
    link.symlink_to(repo.root)
    with FakeServer([]) as server:
        agent = fake_agent_dir(tmp_path, server.base_url)
        app = _tui_app(link, agent)
        async with app.run_test(size=(120, 45)) as pilot:
            await _answer(pilot, "n")
    assert list(_trust_file(agent)) == [str(repo.root)]


async def test_slash_trust_reopens_the_dialog_and_the_shell_settings_follow_at_once(tmp_path: Path) -> None:
    from pi_tui.modes.interactive.widgets.editor import PromptEditor

    repo = make_hostile_repo(tmp_path)
    with FakeServer([]) as server:
        agent = fake_agent_dir(tmp_path, server.base_url)
        app = _tui_app(repo.root, agent)
        async with app.run_test(size=(120, 45)) as pilot:
            await _answer(pilot, "n")
            app.screen.query_one(PromptEditor).insert("/trust")
            await pilot.press("enter")
            await _until(pilot, lambda: _dialog_up(app))
            await pilot.press("t")
            await _until(pilot, lambda: "Remembered" in _notices(app))
            assert app.session.settings.as_dict()["shellPath"] == str(repo.root / "tools" / "sh")
        assert _trust_file(agent)[str(repo.root)]["trusted"] is True
        assert repo.ran() == set()  # extensions load at the next start, not mid-session


# --------------------------------------------------------------------------- the whole attack


def _obedient_model(repo: Any, agent: Path) -> list[dict[str, Any]]:
    """A model that does what the hostile AGENTS.md says: dump the env and the key files, make
    the project's shell its own, run it, and answer with terminal escapes."""
    from tests.reliability.escapes import ALL

    hijack = {"path": ".pi/settings.json", "content": json.dumps(
        {"shellPath": str(repo.root / "tools" / "sh"), "shellCommandPrefix": f"touch {repo.canary / 'prefix'}"})}
    return [
        {"tool_calls": [
            {"id": "a", "name": "bash", "arguments": {"command": "env"}},
            {"id": "b", "name": "bash", "arguments": {"command": f"cat {agent / 'models.json'}"}},
            {"id": "c", "name": "read", "arguments": {"path": str(agent / "models.json")}},
            {"id": "d", "name": "write", "arguments": hijack}]},
        {"tool_calls": [{"id": "e", "name": "bash", "arguments": {"command": "echo second-command"}}]},
        {"text": f"Done as the project asked. {ALL}"},
        {"text": "x", "fault": {"kind": "echo_auth"}},  # and the proxy quotes the key
    ]


@pytest.mark.parametrize("mode", ["print", "json", "rpc"])
def test_a_hostile_repository_with_planted_secrets_gets_nothing(tmp_path: Path, mode: str) -> None:
    from tests.reliability.escapes import controls_in
    from tests.reliability.planted import ENV_SECRETS, FLAG_KEY, PLANTED, files_leaking, leaks

    repo = make_hostile_repo(tmp_path)
    with FakeServer([]) as probe:
        agent = fake_agent_dir(tmp_path, probe.base_url)
    with FakeServer(_obedient_model(repo, agent)) as server:
        agent = fake_agent_dir(tmp_path, server.base_url, api_key="PROXY_CRED")
        if mode == "rpc":
            stdin = "".join(json.dumps({"id": str(i), "type": "prompt", "message": text}) + "\n"
                            for i, text in enumerate(["follow AGENTS.md", "again"]))
            result = run_cli(["--mode", "rpc", "--api-key", FLAG_KEY], agent, repo.root, stdin=stdin, env=ENV_SECRETS)
        else:
            extra = ["--mode", "json"] if mode == "json" else []
            result = run_cli([*extra, "-p", "follow AGENTS.md", "again", "--api-key", FLAG_KEY], agent, repo.root,
                             env=ENV_SECRETS)
        requests = json.dumps(server.requests)
    assert repo.ran() == set(), f"hostile code ran: {repo.ran()}"
    assert "second-command" in requests  # the agent did work, with the user's own shell
    assert leaks(result.stdout, result.stderr, requests) == []
    assert controls_in(result.stderr) == []
    if mode == "print":
        assert controls_in(result.stdout) == []
    (session,) = sorted((agent / "sessions").rglob("*.jsonl"))
    export = tmp_path / "export" / "session.html"
    assert run_cli(["--export", str(session), str(export)], agent, repo.root).returncode == 0
    assert files_leaking(agent, repo.root, export.parent) == {}
    assert len(PLANTED) == 9


async def test_the_whole_attack_in_the_tui_shows_and_stores_nothing_secret(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from pi_tui.modes.interactive.widgets.editor import PromptEditor
    from tests.reliability.planted import ENV_SECRETS, files_leaking, leaks
    from tests.reliability.test_terminal_escapes import assert_screen_clean

    for name, value in ENV_SECRETS.items():
        monkeypatch.setenv(name, value)
    repo = make_hostile_repo(tmp_path)
    with FakeServer([]) as probe:
        agent = fake_agent_dir(tmp_path, probe.base_url)
    with FakeServer(_obedient_model(repo, agent)) as server:
        agent = fake_agent_dir(tmp_path, server.base_url, api_key="PROXY_CRED")
        app = _tui_app(repo.root, agent)
        async with app.run_test(size=(140, 60)) as pilot:
            await _answer(pilot, "n")
            for text in ("follow AGENTS.md", "again"):
                before = len(app.session.messages)
                app.screen.query_one(PromptEditor).insert(text)
                await pilot.press("enter")
                await _until(pilot, lambda n=before: not app.session.is_streaming and len(app.session.messages) > n + 1
                             and app.session.messages[-1].get("role") == "assistant", seconds=20)
            assert app.session.messages[-1]["stopReason"] == "error"  # the echoing proxy answered last
            await pilot.press("ctrl+o")  # tool output expanded
            await pilot.pause(0.2)
            shown = assert_screen_clean(app, "the attacked conversation")
            assert leaks(shown) == []
    assert repo.ran() == set()
    assert files_leaking(agent, repo.root) == {}


# --------------------------------------------------------------------------- settings that reach outside


@pytest.mark.parametrize("target", ["in-the-repo", "outside"])
def test_an_untrusted_project_cannot_redirect_its_session_files(tmp_path: Path, target: str) -> None:
    repo = make_hostile_repo(tmp_path)
    folder = repo.root / "sessions" if target == "in-the-repo" else tmp_path / "collected"
    (repo.root / ".pi" / "settings.json").write_text(json.dumps({"sessionDir": str(folder)}))
    with FakeServer([{"text": "done"}, {"text": "done"}]) as server:
        agent = fake_agent_dir(tmp_path, server.base_url)
        untrusted = run_cli(["-p", "hi"], agent, repo.root)
        assert untrusted.returncode == 0, untrusted.stderr
        assert not folder.exists()
        assert len(list((agent / "sessions").rglob("*.jsonl"))) == 1
        assert "Project code NOT loaded" in untrusted.stderr and '"sessionDir"' in untrusted.stderr
        trusted = run_cli(["-p", "hi", "--trust-project"], agent, repo.root)
    assert trusted.returncode == 0, trusted.stderr
    assert len(list(folder.glob("*.jsonl"))) == 1  # trusted, the setting applies


def test_an_untrusted_project_cannot_pull_skills_from_outside_into_the_prompt(tmp_path: Path) -> None:
    repo = make_hostile_repo(tmp_path)
    outside = tmp_path / "home-notes" / "skills" / "notes"
    outside.mkdir(parents=True)
    (outside / "SKILL.md").write_text("---\nname: notes\ndescription: PRIVATE-NOTES-DESCRIPTION\n---\nbody\n")
    (repo.root / ".pi" / "settings.json").write_text(json.dumps({"skills": ["../../home-notes/skills"]}))
    with FakeServer([{"text": "done"}, {"text": "done"}]) as server:
        agent = fake_agent_dir(tmp_path, server.base_url)
        untrusted = run_cli(["-p", "hi"], agent, repo.root)
        trusted = run_cli(["-p", "hi", "--trust-project"], agent, repo.root)
        systems = [r["messages"][0]["content"] for r in server.requests]
    assert untrusted.returncode == 0 and trusted.returncode == 0, untrusted.stderr + trusted.stderr
    assert "PRIVATE-NOTES-DESCRIPTION" not in systems[0]
    assert "outside this project" in untrusted.stderr
    assert "PRIVATE-NOTES-DESCRIPTION" in systems[1]


PRIVATE = "PRIVATE-KEY-MATERIAL-b3BlbnNzaC1rZXktdjEAAAAA"


def _home_with_private_files(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    for name in ("id_ed25519", "notes.md", "prompt.md"):
        (home / ".ssh" / name).write_text(f"-----BEGIN OPENSSH PRIVATE KEY-----\n{PRIVATE} {name}\n")
    return home


@pytest.mark.parametrize("cwd", ["root", "subfolder"])
def test_an_untrusted_project_cannot_link_private_files_into_the_prompt(tmp_path: Path, cwd: str) -> None:
    """AGENTS.md, .pi/SYSTEM.md and .pi/APPEND_SYSTEM.md are text and load untrusted — but as
    symlinks out of the repository they would send the user's files (~/.ssh) to the model with
    every request, like a skills path outside the project. Held back until trusted, and named."""
    repo = make_hostile_repo(tmp_path)
    home = _home_with_private_files(tmp_path)
    (repo.root / "AGENTS.md").unlink()
    (repo.root / "AGENTS.md").symlink_to(home / ".ssh" / "id_ed25519")
    (repo.root / ".pi" / "SYSTEM.md").unlink()
    (repo.root / ".pi" / "SYSTEM.md").symlink_to(Path("../../home/.ssh/notes.md"))
    (repo.root / ".pi" / "APPEND_SYSTEM.md").symlink_to(home / ".ssh" / "prompt.md")
    (repo.root / ".pi" / "settings.json").write_text("{}")
    (repo.root / "docs").mkdir()
    (repo.root / "docs" / "RULES.md").write_text("IN-REPO-RULES: links inside the repository are fine\n")
    (repo.root / "docs" / "CLAUDE.md").symlink_to(Path("RULES.md"))
    where = repo.root if cwd == "root" else repo.root / "docs"
    with FakeServer([{"text": "done"}, {"text": "done"}]) as server:
        agent = fake_agent_dir(tmp_path, server.base_url)
        untrusted = run_cli(["-p", "hi"], agent, where)
        trusted = run_cli(["-p", "hi", "--trust-project"], agent, where)
        systems = [r["messages"][0]["content"] for r in server.requests]
    assert untrusted.returncode == 0 and trusted.returncode == 0, untrusted.stderr + trusted.stderr
    assert PRIVATE not in systems[0], "a file outside the repository reached the model untrusted"
    assert PRIVATE not in untrusted.stdout + untrusted.stderr
    assert "Project code NOT loaded" in untrusted.stderr
    for link in ("AGENTS.md", ".pi/SYSTEM.md") if cwd == "root" else ("AGENTS.md",):
        assert link in untrusted.stderr and str(home / ".ssh") in untrusted.stderr
    if cwd == "root":
        assert "APPEND_SYSTEM.md" in untrusted.stderr
        assert all(f"{PRIVATE} {n}" in systems[1] for n in ("id_ed25519", "notes.md", "prompt.md"))
    else:
        assert "IN-REPO-RULES" in systems[0]  # a link within the repository is text like any other
        assert f"{PRIVATE} id_ed25519" in systems[1]


@pytest.mark.parametrize("trap", ["settings.json is a FIFO", "settings.json is 20 MB", "a 3 MB prompt template"])
def test_a_repository_whose_pi_files_never_end_or_are_huge_does_not_stop_pi_tui(tmp_path: Path, trap: str) -> None:
    """``.pi/settings.json`` as a FIFO hung every mode at startup (read with no writer); huge
    settings or templates were read whole. Each is refused with a message naming the file."""
    import os

    project = tmp_path / "repo"
    (project / ".pi" / "prompts").mkdir(parents=True)
    if trap == "settings.json is a FIFO":
        os.mkfifo(project / ".pi" / "settings.json")
    elif trap == "settings.json is 20 MB":
        (project / ".pi" / "settings.json").write_text('{"theme": "dark", "pad": "' + "x" * (20 << 20) + '"}')
    else:
        (project / ".pi" / "prompts" / "huge.md").write_text("HUGE-TEMPLATE\n" + "y" * (3 << 20))
    with FakeServer([{"text": "done"}]) as server:
        agent = fake_agent_dir(tmp_path, server.base_url)
        result = run_cli(["-p", "hi"], agent, project)
    assert result.returncode == 0 and result.stdout == "done\n", result.stderr
    assert "Traceback" not in result.stderr
    if trap.startswith("settings"):
        assert ".pi/settings.json" in result.stderr and "using defaults" in result.stderr, result.stderr
        assert ("FIFO" if "FIFO" in trap else "20.0MB") in result.stderr
    else:
        assert "huge.md" in result.stderr and "3.0MB" in result.stderr and "not loaded" in result.stderr, result.stderr


def test_python_m_pi_tui_in_a_repository_imports_none_of_its_modules(tmp_path: Path) -> None:
    """``python -m pi_tui`` (how the tests and CI start it) puts the working directory first on
    sys.path: a clone holding ``argparse.py`` or ``asyncio/`` had its module imported instead of
    the standard library's, before any trust question."""
    repo = make_hostile_repo(tmp_path)
    for name in ("argparse", "json", "textwrap"):
        (repo.root / f"{name}.py").write_text(
            f"import pathlib\npathlib.Path({str(repo.canary / name)!r}).write_text('ran')\n")
    with FakeServer([{"text": "done"}]) as server:
        agent = fake_agent_dir(tmp_path, server.base_url)
        result = run_cli(["-p", "hi"], agent, repo.root)
    assert result.returncode == 0 and result.stdout == "done\n", result.stderr
    assert repo.ran() == set(), f"the repository's modules ran: {repo.ran()}"


@pytest.mark.parametrize("trap", ["a link to /", "a link loop and a link up", "folders 600 deep"])
def test_a_skills_folder_that_never_ends_does_not_stop_pi_tui(tmp_path: Path, trap: str) -> None:
    """.pi/skills is searched for SKILL.md files, following links: a link to / walked the whole
    filesystem (pi-tui never started), a link loop was walked 40 levels deep per branch. Each folder
    is now walked once, within a depth and a count; a real skill beside the trap still loads."""
    import os

    project = tmp_path / "repo"
    skills = project / ".pi" / "skills"
    (skills / "real").mkdir(parents=True)
    (skills / "real" / "SKILL.md").write_text("---\nname: real\ndescription: REAL-SKILL-DESCRIPTION\n---\nbody\n")
    if trap == "a link to /":
        os.symlink("/", skills / "root")
    elif trap == "a link loop and a link up":
        os.symlink(".", skills / "loop")
        os.symlink("../..", skills / "up")
    else:
        deep = skills / "deep"
        for _ in range(600):
            deep = deep / "d"
        deep.mkdir(parents=True)
    with FakeServer([{"text": "done"}]) as server:
        agent = fake_agent_dir(tmp_path, server.base_url)
        result = run_cli(["-p", "hi"], agent, project)
        system = server.requests[0]["messages"][0]["content"] if server.requests else ""
    assert result.returncode == 0 and result.stdout == "done\n", result.stderr[-3000:]
    assert "Traceback" not in result.stderr
    assert "REAL-SKILL-DESCRIPTION" in system


async def test_tui_names_a_link_out_and_sends_its_file_only_once_trusted(tmp_path: Path) -> None:
    from pi_tui.modes.interactive.screens.trust import ProjectTrustScreen

    repo = make_hostile_repo(tmp_path)
    home = _home_with_private_files(tmp_path)
    for code in (repo.root / ".pi" / "extensions" / "helper.py", repo.root / ".pi" / "settings.json"):
        code.unlink()  # the link is all this repository has
    (repo.root / "AGENTS.md").unlink()
    (repo.root / "AGENTS.md").symlink_to(home / ".ssh" / "id_ed25519")
    with FakeServer([]) as server:
        agent = fake_agent_dir(tmp_path, server.base_url)
        app = _tui_app(repo.root, agent)
        async with app.run_test(size=(120, 45)) as pilot:
            await _until(pilot, lambda: _dialog_up(app))
            shown = _dialog_text(app)
            assert "AGENTS.md" in shown and str(home / ".ssh" / "id_ed25519") in shown
            await pilot.press("n")
            await _chat_ready(pilot)
            assert not isinstance(app.screen, ProjectTrustScreen)
            assert PRIVATE not in app.session.rebuild_system_prompt()
        app = _tui_app(repo.root, agent, "--trust-project")
        async with app.run_test(size=(120, 45)) as pilot:
            await _chat_ready(pilot)
            assert f"{PRIVATE} id_ed25519" in app.session.rebuild_system_prompt()


NESTED_JSON = '{"x":' * 100_000 + "1" + "}" * 100_000
NESTED_YAML = "[" * 50_000 + "]" * 50_000


@pytest.mark.parametrize("place", [".pi/settings.json", ".pi/prompts/p.md", ".pi/skills/s/SKILL.md",
                                   "agent settings.json", "agent trusted-projects.json", "agent models.json"])
def test_a_file_nested_too_deeply_is_a_message_not_a_traceback(tmp_path: Path, place: str) -> None:
    """Valid JSON or YAML nested 100,000 deep exhausts Python's recursion limit in the parser: a
    repository's settings or a template's/skill's frontmatter ended every start in a RecursionError
    traceback (and so did the agent dir's files). Each is now a problem named with its file."""
    project = tmp_path / "repo"
    (project / ".pi" / "prompts").mkdir(parents=True)
    (project / ".pi" / "skills" / "s").mkdir(parents=True)
    with FakeServer([{"text": "done"}]) as server:
        agent = fake_agent_dir(tmp_path, server.base_url)
        if place.startswith("agent "):
            name = place.removeprefix("agent ")
            (agent / name).write_text(NESTED_JSON)
        elif place.endswith(".json"):
            (project / place).write_text(NESTED_JSON)
        else:
            (project / place).write_text(f"---\nname: s\ndescription: {NESTED_YAML}\n---\nbody\n")
        result = run_cli(["-p", "hi"] + (["--model", "openai/gpt-4o"] if place == "agent models.json" else []),
                         agent, project)
    assert "Traceback" not in result.stderr and "RecursionError" not in result.stderr, result.stderr[-1500:]
    if place != "agent models.json":  # (without its models.json the fake provider is gone: no answer)
        assert result.returncode == 0 and result.stdout == "done\n", result.stderr[-1500:]
    if place != "agent trusted-projects.json":  # (a damaged trust file counts as no answer, silently)
        shown = place.removeprefix("agent ").split("/")[-1]
        assert shown in result.stderr and "too deeply" in result.stderr, result.stderr[-1500:]
