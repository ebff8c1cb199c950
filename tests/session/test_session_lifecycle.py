"""Extension lifecycle events the session emits: ``session_start`` + ``resources_discover``
(``start()``, ``/reload``), ``session_before_switch`` / ``session_before_fork`` (cancellable) and
``user_bash`` (``{operations}`` / ``{result}``, the first one wins)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.session.conftest import entries_of

EXTENSION = '''
import json, pathlib

LOG = pathlib.Path(__file__).with_name("events.jsonl")
STATE = {"veto": False}

def log(event):
    with LOG.open("a") as f:
        f.write(json.dumps(event) + "\\n")

def register(pi):
    @pi.on("session_start")
    def started(event):
        log(event)

    @pi.on("session_shutdown")
    def stopped(event):
        log(event)

    @pi.on("resources_discover")
    def discover(event):
        log(event)
        base = pathlib.Path(event["cwd"]) / ("extra-reload" if event["reason"] == "reload" else "extra")
        return {"skillPaths": [str(base / "skills")], "promptPaths": [str(base / "prompts")]}

    @pi.on("session_before_switch")
    def before_switch(event):
        log(event)
        return {"cancel": STATE["veto"]}

    @pi.on("session_before_fork")
    def before_fork(event):
        log(event)
        return {"cancel": STATE["veto"]}

    def veto(args, ctx):
        STATE["veto"] = args.strip() == "on"

    pi.register_command("veto", veto)
'''

BASH_EXTENSIONS = {
    "a_remote.py": '''
def register(pi):
    @pi.on("user_bash")
    def remote(event):
        if not event["command"].startswith("remote "):
            return None

        async def run(command, cwd, on_data, signal):
            on_data("ran " + command + " in " + cwd + "\\n")
            on_data(b"bytes too\\n")
            return {"exitCode": 3}

        return {"operations": {"exec": run}}
''',
    "b_fake.py": '''
def register(pi):
    @pi.on("user_bash")
    def fake(event):
        return {"result": {"output": "faked\\n", "exitCode": 0}}
''',
}


def _install(project: Path, files: dict[str, str]) -> None:
    folder = project / ".pi" / "extensions"
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).write_text(text)


def _log(project: Path) -> list[dict]:
    path = project / ".pi" / "extensions" / "events.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def _resources(project: Path, folder: str, skill: str, template: str) -> None:
    skill_dir = project / folder / "skills" / skill
    skill_dir.mkdir(parents=True)
    (skill_dir / "SKILL.md").write_text(f"---\nname: {skill}\ndescription: The {skill} skill.\n---\nDo {skill}.\n")
    (project / folder / "prompts").mkdir()
    (project / folder / "prompts" / f"{template}.md").write_text(f"Template {template} says $1\n")


async def test_start_fires_once_and_loads_discovered_skills_and_templates(make_session, project: Path) -> None:
    _install(project, {"life.py": EXTENSION})
    _resources(project, "extra", "deploy", "greet")
    session, provider, _ = make_session([{"text": "ok"}], load_extensions=True)
    assert "deploy" not in [s.name for s in session.resources.skills]
    await session.start()
    await session.start()
    assert [(e["type"], e["reason"]) for e in _log(project)] == [
        ("session_start", "startup"), ("resources_discover", "startup"),
    ]
    assert "deploy" in [s.name for s in session.resources.skills]
    assert "deploy" in session.get_system_prompt()
    await session.prompt("/greet world")  # the discovered template expands
    assert provider.requests[0].messages[0]["content"][0]["text"].strip() == "Template greet says world"
    assert "deploy" in provider.requests[0].system_prompt  # still there after the per-run reload
    assert len(_log(project)) == 2  # prompt() did not start again


async def test_the_first_prompt_starts_the_session_when_a_mode_did_not(make_session, project: Path) -> None:
    _install(project, {"life.py": EXTENSION})
    session, _, _ = make_session([{"text": "ok"}, {"text": "ok"}], load_extensions=True)
    await session.prompt("hi")
    await session.prompt("again")
    assert [(e["type"], e["reason"]) for e in _log(project)] == [
        ("session_start", "startup"), ("resources_discover", "startup"),
    ]


async def test_reload_discovers_again_and_replaces_the_paths(make_session, project: Path) -> None:
    _install(project, {"life.py": EXTENSION})
    _resources(project, "extra", "deploy", "greet")
    _resources(project, "extra-reload", "audit", "bye")
    session, _, _ = make_session([], load_extensions=True)
    await session.start()
    await session.reload()
    assert [(e["type"], e["reason"]) for e in _log(project)][2:] == [
        ("session_shutdown", "reload"), ("session_start", "reload"), ("resources_discover", "reload"),
    ]
    names = [s.name for s in session.resources.skills]
    assert "audit" in names and "deploy" not in names
    assert [t.name for t in session.resources.prompt_templates if t.name in ("greet", "bye")] == ["bye"]


async def test_before_switch_and_before_fork_may_cancel(make_session, project: Path) -> None:
    _install(project, {"life.py": EXTENSION})
    session, _, _ = make_session([{"text": "first"}], load_extensions=True)
    await session.prompt("hello")
    path = session.session_manager.session_file
    user_id = next(e["id"] for e in entries_of(session) if e["type"] == "message")
    await session.prompt("/veto on")
    assert await session.new_session() is False and session.replacement_cancelled
    assert await session.switch_session(project / "other.jsonl") is False
    assert await session.fork(user_id) is None and session.replacement_cancelled
    assert session.session_manager.session_file == path
    assert [m["role"] for m in session.messages] == ["user", "assistant"]
    before = [e for e in _log(project) if e["type"].startswith("session_before")]
    assert before == [
        {"type": "session_before_switch", "reason": "new"},
        {"type": "session_before_switch", "reason": "resume", "targetSessionFile": str(project / "other.jsonl")},
        {"type": "session_before_fork", "entryId": user_id, "position": "before"},
    ]
    await session.prompt("/veto off")
    assert await session.new_session() is True and not session.replacement_cancelled
    assert session.session_manager.session_file != path and session.messages == []


async def test_user_bash_operations_and_result_first_one_wins(make_session, project: Path) -> None:
    _install(project, BASH_EXTENSIONS)
    session, _, _ = make_session([], load_extensions=True)
    remote = await session.run_user_bash("remote ls")
    assert remote["output"] == f"ran remote ls in {project}\nbytes too\n"
    assert remote["exitCode"] == 3 and remote["cancelled"] is False
    faked = await session.run_user_bash("echo local")  # a_remote passes, b_fake replaces it
    assert faked["output"] == "faked\n" and faked["exitCode"] == 0
    assert [m["role"] for m in session.messages] == ["bashExecution", "bashExecution"]
