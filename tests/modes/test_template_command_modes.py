"""``/template`` in print mode (RPC: tests/modes/rpc/test_template_command.py):
``/template NAME args`` runs the template as ``/NAME args`` does, ``/template`` alone lists the
templates on stderr without sending anything, and a name that is no template is an error."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from pi_tui.testing.fake_server import FakeServer


def _greet(project: Path) -> None:
    prompts = project / ".pi" / "prompts"
    prompts.mkdir(parents=True)
    (prompts / "greet.md").write_text("---\ndescription: Greet someone\nargument-hint: <name>\n---\nSay hello to $1.\n")


def _listed(text: str, usage: str, rest: str) -> bool:
    """``text`` has the listing line for ``usage`` (columns are padded) ending with ``rest``."""
    return any(line.startswith(f"  {usage} ") and line.endswith(rest) for line in text.splitlines())


def test_print_mode_template_command(tmp_path: Path, project: Path) -> None:
    _greet(project)
    with FakeServer([{"text": "Hello, Ada!"}]) as server:
        agent = tmp_path / "agent"
        agent.mkdir()
        (agent / "models.json").write_text(json.dumps({"providers": {"fake": {
            "baseUrl": server.base_url, "api": "openai-completions", "apiKey": "fake-key",
            "models": [{"id": "fake-model", "contextWindow": 128000, "maxTokens": 1000}]}}}))
        env = {**os.environ, "PI_CODING_AGENT_DIR": str(agent)}
        env.pop("PYTEST_CURRENT_TEST", None)

        def run(*args: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run([sys.executable, "-m", "pi_tui", "--no-session", *args], cwd=project, env=env,
                                  capture_output=True, text=True, input="", timeout=60)

        listing = run("-p", "/template")
        answer = run("-p", "/template greet Ada")
        typo = run("-p", "/template gret")
        requests = server.requests
    assert listing.returncode == 0 and listing.stdout == ""
    assert _listed(listing.stderr, "/greet <name>", "Greet someone  [project]")
    assert answer.returncode == 0 and answer.stdout == "Hello, Ada!\n"
    assert typo.returncode == 1 and "No prompt template named 'gret'" in typo.stderr
    assert len(requests) == 1 and requests[0]["messages"][-1]["content"] == [{"type": "text", "text": "Say hello to Ada."}]
