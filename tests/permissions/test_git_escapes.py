"""Escapes through a repository's ``.git`` (pi_tui/permissions/git_guard.py): real bwrap, a fake
HOME, real git repositories. Each command plants something git on the host would run
(``core.fsmonitor`` runs on every ``git status``); afterwards the host's ``git status`` must run
nothing planted and the repository must be as it was — and ``git add``/``git commit`` inside
the sandbox must still work."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from pi_tui.core.deadline import within
from pi_tui.permissions.gate import PermissionGate
from pi_tui.permissions.sandbox import find_bwrap
from pi_tui.permissions.setup import PermissionOptions, build_gate
from pi_tui.tools.shell import run_shell
from tests.permissions.conftest import FakeWorld

pytestmark = pytest.mark.skipif(find_bwrap() is None, reason="NO SANDBOX TESTED: bwrap is not installed "
                                "(apt install bubblewrap; .ci/run installs it)")
GIT = ["git", "-c", "user.email=t@example.invalid", "-c", "user.name=t", "-c", "protocol.file.allow=always",
       "-c", "init.defaultBranch=main"]


class _Settings:
    def file_settings(self, scope: str) -> dict[str, object]:
        return {"sandbox": {"network": "off"}} if scope == "global" else {}


def git(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*GIT, *args], cwd=cwd, capture_output=True, text=True, check=False)


def gate_for(project: Path, agent: Path, on_event: Any = None) -> PermissionGate:
    gate = build_gate(PermissionOptions(mode="auto"), cwd=project, agent_dir=agent, settings=_Settings(), trusted=True,
                      on_event=on_event)
    assert gate.sandboxed
    return gate


def run(gate: PermissionGate, cwd: Path, command: str, *, timeout: float = 30) -> tuple[int | None, str]:
    chunks: list[bytes] = []
    outcome = asyncio.run(run_shell(command, cwd=cwd, settings={}, on_output=chunks.append, timeout_seconds=timeout,
                                    sandbox=gate, call_id="call"))
    return outcome.exit_code, b"".join(chunks).decode("utf-8", "replace")


def planted(marker: Path) -> str:
    """A git config whose ``core.fsmonitor`` touches ``marker`` (git runs it on ``status``)."""
    return f"[core]\n\trepositoryformatversion = 0\n\tfsmonitor = \"touch {marker}; false\"\n"


@pytest.fixture
def repo(fake_world: FakeWorld) -> Path:
    """The fake world's project as a real repository with one commit."""
    project = fake_world.project
    shutil.rmtree(project / ".git")
    assert git(project, "init", "-q").returncode == 0
    (project / "a.txt").write_text("a\n")
    assert git(project, "add", "a.txt").returncode == 0
    assert git(project, "commit", "-q", "-m", "first").returncode == 0
    return project


def host_status(cwd: Path, marker: Path) -> None:
    """The user's next ``git status`` on the host runs nothing the sandbox planted."""
    git(cwd, "status", "--short")
    assert not marker.exists(), "the host's git status ran a command planted from the sandbox"


def test_git_add_and_commit_still_work_inside(repo: Path, fake_world: FakeWorld) -> None:
    gate = gate_for(repo, fake_world.agent)
    code, out = run(gate, repo, f"echo b > b.txt && {' '.join(GIT)} add b.txt && {' '.join(GIT)} commit -q -m second "
                    "&& git log --format=%s")
    assert code == 0, out
    assert out.split() == ["second", "first"], out
    assert git(repo, "log", "--format=%s").stdout.split() == ["second", "first"]
    assert "[sandbox]" not in out


def test_git_cannot_be_renamed_and_replaced(repo: Path, fake_world: FakeWorld) -> None:
    marker = fake_world.base / "PWNED"
    head = git(repo, "rev-parse", "HEAD").stdout
    (fake_world.base / "evil.config").write_text(planted(marker))
    _, out = run(gate_for(repo, fake_world.agent), repo,
                    "mv .git .git-old && mkdir .git && cp -r .git-old/objects .git-old/refs .git-old/HEAD .git/ && "
                    f"cp {fake_world.base}/evil.config .git/config; rmdir .git; mv .git/config .git/c; "
                    f"cp {fake_world.base}/evil.config .git/config; echo end")
    assert "Device or resource busy" in out, out
    assert not (repo / ".git-old").exists()
    host_status(repo, marker)
    assert git(repo, "rev-parse", "HEAD").stdout == head
    assert "fsmonitor" not in (repo / ".git" / "config").read_text()


def test_a_written_commondir_is_moved_aside(repo: Path, fake_world: FakeWorld) -> None:
    marker = fake_world.base / "PWNED"
    (fake_world.base / "evil.config").write_text(planted(marker))
    code, out = run(gate_for(repo, fake_world.agent), repo,
                    f"mkdir evil && cp -r .git/objects .git/refs evil/ && cp {fake_world.base}/evil.config evil/config "
                    "&& echo ../evil > .git/commondir && echo ok > .git/config.worktree && echo written")
    assert code == 0 and "written" in out, out
    host_status(repo, marker)
    assert not (repo / ".git" / "commondir").exists() and not (repo / ".git" / "config.worktree").exists()
    assert (repo / ".git" / "commondir.pi-tui-blocked-1").read_text() == "../evil\n"  # moved, not deleted
    assert f"the command created {repo}/.git/commondir: moved aside to commondir.pi-tui-blocked-1" in out, out
    assert "config.worktree: moved aside" in out, out
    assert git(repo, "status", "--short").returncode == 0


def test_a_command_killed_by_its_timeout_is_guarded_too(repo: Path, fake_world: FakeWorld) -> None:
    """Killed, the sandbox takes a moment to end: the guard waits for its pid 1 to be gone (a
    loop planting the file again and again would otherwise plant it after the guard looked)."""
    code, out = run(gate_for(repo, fake_world.agent), repo,
                    "while :; do echo ../evil > .git/commondir; done", timeout=1)
    assert code is None
    assert not (repo / ".git" / "commondir").exists(), out
    assert "commondir: moved aside" in out, out


def test_a_background_child_cannot_write_after_the_guard(repo: Path, fake_world: FakeWorld) -> None:
    _, out = run(gate_for(repo, fake_world.agent), repo,
                    "(sleep 0.5; echo ../evil > .git/commondir) >/dev/null 2>&1 & echo started")
    assert out.strip() == "started"
    subprocess.run(["sleep", "1"], check=True)
    assert not (repo / ".git" / "commondir").exists()  # killed with the sandbox's PID namespace


def test_a_submodules_gitdir_config_and_hooks(repo: Path, fake_world: FakeWorld) -> None:
    source = fake_world.base / "source"
    source.mkdir()
    for args in (("init", "-q"), ("commit", "-q", "--allow-empty", "-m", "s")):
        assert git(source, *args).returncode == 0
    done = git(repo, "submodule", "add", "-q", str(source), "x")
    assert done.returncode == 0, done.stderr
    gitdir = repo / ".git" / "modules" / "x"
    assert (gitdir / "config").is_file()
    shutil.rmtree(gitdir / "hooks")
    config = (gitdir / "config").read_text()
    marker = fake_world.base / "PWNED"
    (fake_world.base / "evil.config").write_text(planted(marker))
    _, out = run(gate_for(repo, fake_world.agent), repo,
                    f"cp {fake_world.base}/evil.config .git/modules/x/config; "
                    f"mkdir .git/modules/x/hooks && printf '#!/bin/sh\\ntouch {marker}\\n' > .git/modules/x/hooks/pre-commit;"
                    " mv .git/modules/x .git/modules/y; echo end")
    assert "\nend\n" in out, out
    assert "Read-only file system" in out and "Device or resource busy" in out, out
    assert (gitdir / "config").read_text() == config
    assert not (gitdir / "hooks").exists() and (gitdir / "hooks.pi-tui-blocked-1" / "pre-commit").exists()
    host_status(repo / "x", marker)
    (repo / "x" / "new.txt").write_text("n\n")
    git(repo / "x", "add", "new.txt")
    git(repo / "x", "commit", "-q", "-m", "n")
    assert not marker.exists()


def test_a_git_file_pointer_cannot_be_rewritten(fake_world: FakeWorld) -> None:
    project = fake_world.project
    shutil.rmtree(project / ".git")
    gitdir = fake_world.base / "separate.git"
    assert git(project, "init", "-q", f"--separate-git-dir={gitdir}").returncode == 0
    pointer = (project / ".git").read_text()
    marker = fake_world.base / "PWNED"
    (fake_world.base / "evil.config").write_text(planted(marker))
    _, out = run(gate_for(project, fake_world.agent), project,
                 "mkdir evil && cp -r $(sed 's/gitdir: //' .git)/objects $(sed 's/gitdir: //' .git)/refs evil/ && "
                 f"cp {fake_world.base}/evil.config evil/config && echo ref: refs/heads/main > evil/HEAD; "
                 "echo 'gitdir: evil' > .git; rm -f .git; mv .git g; echo end")
    assert out.rstrip().endswith("end") and "Read-only file system" in out, out
    assert (project / ".git").read_text() == pointer
    host_status(project, marker)


def test_the_project_cannot_become_the_repository_git_finds(repo: Path, fake_world: FakeWorld) -> None:
    """A broken ``.git`` (no HEAD) sends git on to the folder itself: with HEAD, objects/, refs/
    and a config there, git reads it as a bare repository and runs its config."""
    marker = fake_world.base / "PWNED"
    (fake_world.base / "evil.config").write_text(
        planted(marker).replace("[core]\n", "[core]\n\tbare = false\n\tworktree = .\n"))
    code, out = run(gate_for(repo, fake_world.agent), repo,
                    f"rm .git/HEAD && mkdir objects refs && echo 'ref: refs/heads/main' > HEAD && "
                    f"cp {fake_world.base}/evil.config config && echo done")
    assert code == 0 and "done" in out, out
    assert "HEAD: moved aside to HEAD.pi-tui-blocked-1" in out, out
    host_status(repo, marker)
    assert not os.path.lexists(repo / "HEAD")
    gate = gate_for(repo, fake_world.agent)  # in two steps: HEAD first, objects/ and refs/ by the next command
    shutil.rmtree(repo / "objects")
    run(gate, repo, "echo 'ref: refs/heads/main' > HEAD")
    _, out = run(gate, repo, "mkdir objects && echo done")
    assert "HEAD: moved aside to HEAD.pi-tui-blocked-2" in out, out
    host_status(repo, marker)


async def test_a_command_cancelled_while_the_sandbox_starts_is_guarded_too(repo: Path, fake_world: FakeWorld,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """An abort can land while bwrap is starting (the command already runs, the tool has no pid
    yet): the group is killed then, and the guard must still move aside what the command planted —
    and say so, though the call has no output left to say it in: a warning notice."""
    loop = asyncio.get_running_loop()
    real_exec = loop.subprocess_exec
    planted_file = repo / ".git" / "commondir"
    events: list[dict[str, Any]] = []

    released = asyncio.Event()

    async def slow_start(*args: object, **kwargs: object) -> object:  # the start ends after the cancel
        started = await real_exec(*args, **kwargs)  # type: ignore[arg-type]
        await within(released.wait(), 10)
        return started

    monkeypatch.setattr(loop, "subprocess_exec", slow_start)
    task = asyncio.create_task(run_shell("echo ../evil > .git/commondir; sleep 60", cwd=repo, settings={},
                                         on_output=lambda _chunk: None, timeout_seconds=30,
                                         sandbox=gate_for(repo, fake_world.agent, events.append), call_id="call"))
    for _ in range(500):
        await asyncio.sleep(0.01)
        if planted_file.exists():
            break
    assert planted_file.exists(), "the command did not start"
    task.cancel()
    await asyncio.sleep(0.05)  # the cancel has landed in the start
    released.set()
    with pytest.raises(asyncio.CancelledError):
        await task
    for _ in range(300):  # the guard runs once the start is over (SPAWN_GRACE_SECONDS at most)
        if not planted_file.exists():
            break
        await asyncio.sleep(0.01)
    assert not planted_file.exists(), "a command cancelled while starting kept what it planted in .git"
    assert (repo / ".git" / "commondir.pi-tui-blocked-1").read_text() == "../evil\n"
    notices = [e for e in events if e["type"] == "notify"]
    assert [e["level"] for e in notices] == ["warning"], events
    assert notices[0]["message"].startswith("After a cancelled bash call:\n[sandbox] the command created ")
    assert "commondir: moved aside to commondir.pi-tui-blocked-1" in notices[0]["message"]
