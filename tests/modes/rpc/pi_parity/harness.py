"""Run one scenario of ``drive.mjs`` (pi's own ``RpcClient``) against pi or pi-tui, each in its own
scratch agent dir and project, on its own fake OpenAI-compatible server with the same script.

``python -m tests.modes.rpc.pi_parity.harness SCENARIO [pi|pi-tui]`` prints the transcripts, for
looking at a difference by hand. ``PI_TUI_ROOT=<checkout>`` runs another checkout's pi-tui (to
see a test fail before its fix).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pi_tui.testing.fake_server import FakeServer
from pi_tui.testing.pi_reference import PI_CLI, PI_REF, pi_missing_reason

HERE = Path(__file__).parent
RUN_SECONDS = 120

LONG_TEXT = "Once upon a time there was a very long story that streams slowly. " * 20
USAGE = {"prompt_tokens": 100, "completion_tokens": 10}

SCRIPTS: dict[str, list[dict[str, Any]]] = {
    "clone": [{"text": "Hi there!", "usage": USAGE}],
    "commands": [],
    "extension_commands": [],
    "set_model": [{"text": "Noted.", "usage": USAGE}],
    "abort": [{"text": LONG_TEXT, "chunk_size": 8, "chunk_delay_ms": 100, "usage": USAGE}],
    "bash": [],
    "bash_abort": [],
    "tool_updates": [
        {"tool_calls": [{"id": "call_1", "name": "bash", "arguments": {"command": "echo hi"}}], "usage": USAGE},
        {"text": "It printed hi.", "usage": USAGE},
    ],
    "resume": [{"text": "Resumed again.", "usage": USAGE}],
    "steer_follow_up": [
        {"text": LONG_TEXT, "chunk_size": 8, "chunk_delay_ms": 20, "usage": USAGE},
        {"text": "Shorter: once upon a time.", "usage": USAGE},
        {"text": "Summary: a story.", "usage": USAGE},
    ],
    "tool_abort": [
        {"tool_calls": [{"id": "call_1", "name": "bash", "arguments": {"command": "echo start; sleep 30"}}],
         "usage": USAGE},
        {"text": "unused", "usage": USAGE},
    ],
}


def pi_available() -> str | None:
    """Why the side-by-side cannot run here (None when it can)."""
    return pi_missing_reason()


@dataclass
class Run:
    transcript: list[dict[str, Any]]
    agent: Path
    project: Path
    requests: list[Any]
    stderr: str

    def session_lines(self, path: str) -> list[dict[str, Any]]:
        return [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]


def _write_resources(agent: Path, project: Path | None, base_url: str) -> None:
    models = {"providers": {"fake": {
        "baseUrl": base_url, "api": "openai-completions", "apiKey": "fake-key",
        "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
        "models": [
            {"id": "fake-model", "contextWindow": 128000, "maxTokens": 1000},
            {"id": "fake-reasoner", "reasoning": True, "contextWindow": 128000, "maxTokens": 1000},
        ],
    }}}
    (agent / "models.json").write_text(json.dumps(models))
    (agent / "settings.json").write_text(json.dumps({"defaultProvider": "fake", "defaultModel": "fake-model"}))
    (agent / "prompts").mkdir()
    (agent / "prompts" / "greet.md").write_text(
        "---\ndescription: Greet someone\nargument-hint: <name>\n---\nSay hello to $1.\n")
    skill = agent / "skills" / "tidy"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: tidy\ndescription: Tidy the workspace\n---\nRemove junk files.\n")
    if project is None:
        return
    (project / ".pi" / "prompts").mkdir(parents=True)
    (project / ".pi" / "prompts" / "check.md").write_text("Check the build for $@\n")


_FINDER = {  # the same extension for each program: a command, and a prompt and a skill it finds
    "pi": """export default function (pi) {
  pi.registerCommand("find", { description: "Find", handler: async () => {} });
  pi.on("resources_discover", () => ({ promptPaths: [FOUND + "/prompts"], skillPaths: [FOUND + "/skills"] }));
}
""",
    "pi-tui": """def register(pi):
    pi.register_command("find", lambda args: None, description="Find")
    pi.on("resources_discover", lambda event: {"promptPaths": [FOUND + "/prompts"], "skillPaths": [FOUND + "/skills"]})
""",
}


def _write_finder(program: str, agent: Path, root: Path) -> None:
    """``extension_commands``: an extension in ``<agentDir>/extensions`` that registers a command
    and returns a prompt folder and a skill folder from ``resources_discover``."""
    found = root / "found"
    (found / "prompts").mkdir(parents=True)
    (found / "prompts" / "fromext.md").write_text("Found by an extension\n")
    (found / "skills" / "sweep").mkdir(parents=True)
    (found / "skills" / "sweep" / "SKILL.md").write_text("---\nname: sweep\ndescription: Sweep up\n---\nSweep.\n")
    suffix = "ts" if program == "pi" else "py"
    (agent / "extensions").mkdir()
    declare = "const " if program == "pi" else ""
    (agent / "extensions" / f"finder.{suffix}").write_text(f"{declare}FOUND = {json.dumps(str(found))}\n{_FINDER[program]}")


FIXTURES = Path(os.environ.get("PI_TUI_SHARED", str(Path(__file__).resolve().parents[5] / "shared")),
                "fixtures", "pi-sessions")
if not FIXTURES.is_dir():
    FIXTURES = Path("/work/shared/fixtures/pi-sessions")
RESUMED_FIXTURE = "v3-compact-overflow.jsonl"


def resumable_fixture(project: Path, root: Path) -> Path:
    """pi's overflow-compaction session, its stored cwd made this run's project (pi refuses a
    session whose cwd is gone)."""
    lines = (FIXTURES / RESUMED_FIXTURE).read_text().splitlines()
    header = json.loads(lines[0])
    header["cwd"] = str(project)
    copy = root / RESUMED_FIXTURE
    copy.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    return copy


def run(program: str, scenario: str, root: Path, *, in_project: Path | None = None) -> Run:
    """``program`` is ``pi`` or ``pi-tui``. ``in_project``: run there (an existing project, left
    as it is) instead of in a scratch project with its own ``.pi/`` prompts."""
    agent, project, home = root / "agent", in_project or root / "project", root / "home"
    for folder in (agent, home) if in_project else (agent, project, home):
        folder.mkdir(parents=True)
    extra_args = ["--session", str(resumable_fixture(project, root))] if scenario == "resume" else []
    with FakeServer(SCRIPTS[scenario]) as server:
        _write_resources(agent, None if in_project else project, server.base_url)
        if scenario == "extension_commands":
            _write_finder(program, agent, root)
        env = {
            "PATH": os.environ.get("PATH", ""), "HOME": str(home), "PI_OFFLINE": "1",
            "PI_CODING_AGENT_DIR": str(agent), "LITELLM_OFFLINE_MODE": "true", "LITELLM_MODE": "PRODUCTION",
            "PI_REF": str(PI_REF), "PI_TUI_COMMAND": json.dumps([sys.executable, "-m", "pi_tui"]),
            "PYTHONPATH": os.environ.get("PI_TUI_ROOT", str(Path(__file__).resolve().parents[4])),
            "PYTHONDONTWRITEBYTECODE": "1", "TMPDIR": str(root),
            "PI_PERMISSION_MODE": "bypassPermissions",  # side by side with pi, which has no permission gate
        }
        cli = str(PI_CLI) if program == "pi" else str(HERE / "pi_tui_shim.mjs")
        done = subprocess.run(["node", str(HERE / "drive.mjs"), cli, scenario, *extra_args], cwd=project, env=env,
                              capture_output=True, text=True, timeout=RUN_SECONDS, check=False)
        requests = server.requests
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        raise AssertionError(f"{program} {scenario}: driver exit {done.returncode}\n{done.stderr[-3000:]}")
    return Run(json.loads(lines[-1]), agent, project, requests, done.stderr)


def main() -> None:
    scenario = sys.argv[1]
    programs = sys.argv[2:] or ["pi", "pi-tui"]
    for program in programs:
        with tempfile.TemporaryDirectory() as tmp:
            result = run(program, scenario, Path(tmp))
            print(f"===== {program}")
            for step in result.transcript:
                print(json.dumps(step, indent=1)[:6000])


if __name__ == "__main__":
    main()
