"""Unbounded context: a huge ``AGENTS.md``, a huge skill description, binary and FIFO context files.

Run through ``pi-tui -p`` against the fake server, so what is measured is the system prompt the
model really received, and the notice the user really saw on stderr; the TUI shows the same
notices (pilot test). Bounds: docs/settings.md "Context files and skills".
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from pi_tui.resources.context_files import CONTEXT_FILE_MAX_BYTES, context_budget_bytes
from pi_tui.resources.skills import SKILL_FILE_MAX_BYTES
from pi_tui.testing.fake_server import FakeServer
from tests.reliability.pi_process import child_env, pi_command
from tests.reliability.record import FaultRecord

FAULT_CLASS = "unbounded context files"

ANSWER = [{"text": "ok", "usage": {"prompt_tokens": 10, "completion_tokens": 1}}]


def _agent(root: Path, base_url: str, window: int) -> Path:
    agent = root / "agent"
    agent.mkdir(exist_ok=True)
    (agent / "models.json").write_text(json.dumps({"providers": {"fake": {
        "baseUrl": base_url, "api": "openai-completions", "apiKey": "k",
        "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
        "models": [{"id": "fake-model", "contextWindow": window, "maxTokens": 500}],
    }}}))
    return agent


def _print_run(project: Path, tmp_path: Path, *, window: int = 8000) -> tuple[subprocess.CompletedProcess[str], str, float]:
    """``pi-tui -p hi`` in ``project``; (the process, the system prompt the model got, seconds)."""
    with FakeServer(ANSWER) as server:
        agent = _agent(tmp_path, server.base_url, window)
        started = time.monotonic()
        done = subprocess.run(pi_command("-p", "hi"), cwd=project, env=child_env(agent), capture_output=True,
                              text=True, timeout=120, stdin=subprocess.DEVNULL)
        took = time.monotonic() - started
        requests = server.requests
    system = ""
    if requests:
        first: dict[str, Any] = requests[0]["messages"][0]
        system = first["content"] if isinstance(first["content"], str) else "".join(
            part.get("text", "") for part in first["content"])
    return done, system, took


def _project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    return project


def test_a_30_mb_agents_md_is_cut_for_an_8k_model(fault: FaultRecord, tmp_path: Path) -> None:
    project = _project(tmp_path)
    line = "- Always run the linter before committing; this line is here to be long.\n"
    with open(project / "AGENTS.md", "w") as fh:
        fh.write("# Rules\nFIRST-RULE: use tabs.\n")
        fh.write(line * (30 * 1024 * 1024 // len(line)))
    with fault.case("30 MB AGENTS.md, 8k-token window") as case:
        done, system, _took = _print_run(project, tmp_path, window=8000)
        case.no_traceback(done.stderr, done.stdout)
        assert done.returncode == 0, done.stderr[-2000:]
        budget = context_budget_bytes(8000)
        assert "FIRST-RULE: use tabs." in system  # the start of the instructions is there
        assert len(system.encode()) < budget + 8 * 1024, f"system prompt of {len(system.encode()):,} bytes"
        assert "AGENTS.md is 30.0MB; only its first" in system  # the model is told
        assert "AGENTS.md" in done.stderr and "only its first" in done.stderr  # so is the user


@pytest.mark.parametrize(("size", "notice"), [
    (5 * 1024 * 1024, "over the 1.0MB limit for skills"),  # the file itself is over the skill limit
    (500 * 1024, "first 1024 characters"),  # loads, with the description cut to pi's 1,024
], ids=["5MB", "500KB"])
def test_a_huge_skill_description_is_not_sent_with_every_request(
    fault: FaultRecord, tmp_path: Path, size: int, notice: str
) -> None:
    project = _project(tmp_path)
    folder = project / ".pi" / "skills" / "huge"
    folder.mkdir(parents=True)
    description = "Use this skill for everything. " + "x" * size
    (folder / "SKILL.md").write_text(f"---\nname: huge\ndescription: {description}\n---\nbody\n")
    with fault.case(f"{size // 1024} KB skill description") as case:
        done, system, _took = _print_run(project, tmp_path, window=128_000)
        case.no_traceback(done.stderr, done.stdout)
        assert done.returncode == 0, done.stderr[-2000:]
        assert len(system) < 40_000, f"system prompt of {len(system):,} characters"
        assert "SKILL.md" in done.stderr and notice in done.stderr, done.stderr[-2000:]
        if size < SKILL_FILE_MAX_BYTES:
            case.kept("<name>huge</name>" in system, "the skill, with its description cut")


@pytest.mark.parametrize("content", [
    b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 64,  # not UTF-8
    b"\x7fELF\x02\x01\x01" + b"\x00" * 4096 + b"ELF text",  # NUL bytes, yet valid UTF-8
], ids=["not-utf8", "nul-bytes"])
def test_a_binary_agents_md_is_reported_not_sent(fault: FaultRecord, tmp_path: Path, content: bytes) -> None:
    project = _project(tmp_path)
    (project / "AGENTS.md").write_bytes(content)
    with fault.case("binary AGENTS.md") as case:
        done, system, _took = _print_run(project, tmp_path)
        case.no_traceback(done.stderr)
        assert done.returncode == 0, done.stderr[-2000:]
        assert "ELF" not in system and "\x00" not in system
        assert "AGENTS.md" in done.stderr and "binary" in done.stderr


def test_a_fifo_agents_md_does_not_hang_startup(fault: FaultRecord, tmp_path: Path) -> None:
    project = _project(tmp_path)
    os.mkfifo(project / "AGENTS.md")
    with fault.case("AGENTS.md is a FIFO") as case:
        done, _system, took = _print_run(project, tmp_path)
        case.no_traceback(done.stderr)
        assert done.returncode == 0, done.stderr[-2000:]
        assert "AGENTS.md" in done.stderr and "FIFO" in done.stderr, done.stderr
        case.note(f"answered in {took:.1f} s")


def test_many_context_files_share_the_window_and_the_nearest_wins(fault: FaultRecord, tmp_path: Path) -> None:
    """Each file under the per-file limit, together over an 8k model's share: the cwd's file (the
    most specific) stays whole, the repository root's is cut."""
    root = tmp_path / "repo"
    cwd = root / "pkg"
    cwd.mkdir(parents=True)
    (root / "AGENTS.md").write_text("ROOT-RULES\n" + "root guidance line\n" * 1500)
    (cwd / "AGENTS.md").write_text("PKG-RULES\n" + "package guidance line\n" * 200 + "PKG-END\n")
    with fault.case("two context files over an 8k model's share") as case:
        done, system, _took = _print_run(cwd, tmp_path, window=8000)
        case.no_traceback(done.stderr)
        assert done.returncode == 0, done.stderr[-2000:]
        case.kept("PKG-END" in system, "the nearest AGENTS.md, whole")
        assert "ROOT-RULES" in system and system.count("root guidance line") < 1500
        assert str(root / "AGENTS.md") in done.stderr


def test_a_file_just_under_the_limit_is_sent_whole(fault: FaultRecord, tmp_path: Path) -> None:
    project = _project(tmp_path)
    text = "r" * (CONTEXT_FILE_MAX_BYTES - 100) + "\nLAST-LINE\n"
    (project / "AGENTS.md").write_text(text)
    with fault.case("AGENTS.md just under 64 KB, 200k window") as case:
        done, system, _took = _print_run(project, tmp_path, window=200_000)
        assert done.returncode == 0, done.stderr[-2000:]
        case.kept("LAST-LINE" in system, "a context file within the bounds")
        assert "only its first" not in done.stderr


@pytest.mark.parametrize("name", ["SYSTEM.md", "APPEND_SYSTEM.md"])
def test_a_huge_project_system_md_is_cut_too(fault: FaultRecord, tmp_path: Path, name: str) -> None:
    project = _project(tmp_path)
    (project / ".pi").mkdir()
    with open(project / ".pi" / name, "w") as fh:
        fh.write("FIRST-LINE of the prompt\n" + "- a long line of instructions, over and over again.\n" * 40_000)
    with fault.case(f"2 MB .pi/{name}") as case:
        done, system, _took = _print_run(project, tmp_path, window=200_000)
        case.no_traceback(done.stderr, done.stdout)
        assert done.returncode == 0, done.stderr[-2000:]
        assert "FIRST-LINE of the prompt" in system
        assert len(system.encode()) < CONTEXT_FILE_MAX_BYTES + 16 * 1024, f"system prompt of {len(system.encode()):,} bytes"
        assert f"{name} is 2.0MB; only its first" in system
        assert name in done.stderr and "only its first" in done.stderr


@pytest.mark.parametrize("kind", ["FIFO", "binary"])
def test_a_project_system_md_that_is_no_text_is_reported(fault: FaultRecord, tmp_path: Path, kind: str) -> None:
    project = _project(tmp_path)
    (project / ".pi").mkdir()
    if kind == "FIFO":
        os.mkfifo(project / ".pi" / "SYSTEM.md")
    else:
        (project / ".pi" / "SYSTEM.md").write_bytes(b"\x7fELF\x00\x00binary")
    with fault.case(f".pi/SYSTEM.md is {kind}") as case:
        done, system, took = _print_run(project, tmp_path)
        case.no_traceback(done.stderr, done.stdout)
        assert done.returncode == 0, done.stderr[-2000:]
        assert "SYSTEM.md" in done.stderr and "not included" in done.stderr, done.stderr
        assert "You are" in system  # pi-tui's own prompt, not the file
        assert took < 60


async def test_the_tui_shows_the_notice(fault: FaultRecord, tmp_path: Path, agent_dir: Path) -> None:
    from pi_tui.modes.interactive.app import PiApp
    from pi_tui.modes.interactive.widgets.chat_items import Notice
    from pi_tui.sdk import create_agent_session
    from pi_tui.testing.scripted import ScriptedProvider
    from tests.modes.interactive.conftest import ready, settle

    project = _project(tmp_path)
    (project / "AGENTS.md").write_text("x\n" * (CONTEXT_FILE_MAX_BYTES))
    with fault.case("TUI notice for a cut AGENTS.md"):
        session = create_agent_session(cwd=project, agent_dir=agent_dir, provider=ScriptedProvider([]),
                                       settings={}, load_extensions=False)
        app = PiApp(session, cwd=project, agent_dir=agent_dir)
        async with app.run_test(size=(120, 40)) as pilot:
            await ready(pilot)
            await settle(app, pilot)
            warnings = [n.text for n in app.screen.query(Notice) if n.has_class("-warning")]
            assert any("AGENTS.md" in w and "only its first" in w for w in warnings), warnings
