"""The SDK examples of seed 004 (transform_context, prepare_request) run and do what they say."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

from pi_tui.testing.scripted import ScriptedProvider

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


async def test_keep_last_trims_requests_but_not_the_session(project: Path, agent_dir: Path) -> None:
    example = _load("transform_context_keep_last")
    provider = ScriptedProvider([{"text": f"answer {i}"} for i in range(4)])
    session = await example.main(provider, keep=4, prompts=4, cwd=project, agent_dir=agent_dir)
    last = provider.requests[-1].messages
    assert len(last) == 5
    assert last[0]["content"] == "[Trimmed 3 earlier messages: the initial task and old tool outputs]"
    assert last[-1]["content"][0]["text"].startswith("step 3")
    assert len(provider.requests[1].messages) == 3  # below the limit: untouched
    assert len(session.messages) == 8
    stored = session.session_manager.build_session_context().messages
    assert len(stored) == 8


async def test_prepare_request_rebuilds_from_the_projection(project: Path, agent_dir: Path) -> None:
    example = _load("prepare_request_rebuild")
    provider = ScriptedProvider([{"text": "ok", "when": {"last_user_contains": "<project-state>"}}])
    session = await example.main(provider, cwd=project, agent_dir=agent_dir)
    sent = provider.requests[0].messages
    assert [m["role"] for m in sent] == ["user", "user"]
    assert sent[-1]["content"] == (
        "<project-state>\nbranch: feature/fix-types\nmodified files: src/types.ts\n</project-state>"
    )
    assert session.messages[-1]["content"][0]["text"] == "ok"
    assert all("project-state" not in str(m["content"]) for m in session.messages)


def test_examples_run_as_scripts(tmp_path: Path) -> None:
    for name, expected in (("transform_context_keep_last", "kept 8 messages"),
                           ("prepare_request_rebuild", "Continuing with src/types.ts.")):
        result = subprocess.run([sys.executable, str(EXAMPLES / f"{name}.py")], capture_output=True, text=True,
                                cwd=tmp_path, timeout=60)
        assert result.returncode == 0, result.stderr
        assert expected in result.stdout
