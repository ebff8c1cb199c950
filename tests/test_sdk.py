"""``create_agent_session``: wired like the CLI, every part injectable, litellm never loaded
for a scripted or OpenAI-compatible model."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from pi_tui.core.session.manager import SessionManager
from pi_tui.core.tool import FunctionTool, text_result
from pi_tui.sdk import SCRIPTED_MODEL, create_agent_session, resolve_session_arg
from pi_tui.testing.scripted import ScriptedProvider


def test_scripted_session_never_imports_litellm(tmp_path: Path) -> None:
    code = (
        "import asyncio, json, sys\n"
        "from pi_tui.sdk import create_agent_session\n"
        "from pi_tui.testing.scripted import ScriptedProvider\n"
        "s = create_agent_session(provider=ScriptedProvider([{'text': 'hi'}]), no_session=True)\n"
        "asyncio.run(s.prompt('hello'))\n"
        "assert s.messages[-1]['content'][0]['text'] == 'hi'\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in ('litellm', 'openai', 'textual'))))\n"
    )
    agent = tmp_path / "agent"
    agent.mkdir()
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path,
                            env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PI_CODING_AGENT_DIR": str(agent)},
                            timeout=60)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.strip().splitlines()[-1]) == []


async def test_every_part_is_injectable(project: Path, agent_dir: Path) -> None:
    calls: list[dict] = []

    async def shout(call_id, args, ctx):
        calls.append(args)
        return text_result(str(args["word"]).upper())

    tool = FunctionTool(name="shout", description="Shout a word",
                        parameters={"type": "object", "required": ["word"], "properties": {"word": {"type": "string"}}},
                        run=shout)
    manager = SessionManager.in_memory(project)
    provider = ScriptedProvider([
        {"tool_calls": [{"id": "s1", "name": "shout", "arguments": {"word": "hey"}}]},
        {"text": "done"},
    ])
    session = create_agent_session(cwd=project, agent_dir=agent_dir, provider=provider, tools=[tool],
                                   session_manager=manager, settings={"defaultThinkingLevel": "high"},
                                   load_extensions=False)
    assert session.model == SCRIPTED_MODEL  # nothing configured: the scripted stand-in
    assert session.thinking_level == "off"  # clamped: not a reasoning model
    assert session.get_active_tools() == ["shout"]
    await session.prompt("go")
    assert calls == [{"word": "hey"}]
    assert provider.requests[0].tools[0].name == "shout"
    assert session.session_manager is manager and manager.session_file is None
    assert [m["role"] for m in session.messages] == ["user", "assistant", "toolResult", "assistant"]


async def test_models_json_model_is_picked_and_hooks_apply(project: Path, agent_dir: Path) -> None:
    (agent_dir / "models.json").write_text(json.dumps({"providers": {"local": {
        "baseUrl": "http://127.0.0.1:9/v1", "api": "openai-completions", "apiKey": "k",
        "models": [{"id": "m1", "contextWindow": 32000, "reasoning": True}]}}}))
    provider = ScriptedProvider([{"text": "ok"}])
    session = create_agent_session(cwd=project, agent_dir=agent_dir, provider=provider, load_extensions=False)
    assert session.model is not None and session.model.ref == "local/m1"
    assert session.thinking_level == "medium"
    seen: list[int] = []

    async def transform(messages):
        seen.append(len(messages))
        return messages

    session.transform_context = transform
    await session.prompt("hi")
    assert seen == [1]
    assert provider.requests[0].reasoning == "medium"


def test_session_argument_is_a_path_or_an_id_prefix(tmp_path: Path) -> None:
    folder = tmp_path / "sessions"
    folder.mkdir()
    (folder / "2026-01-01T00-00-00-000Z_01a2aaaa-0000-7000-8000-000000000000.jsonl").write_text("")
    assert resolve_session_arg("01a2aa", folder).name.endswith("000000000000.jsonl")
    assert resolve_session_arg("x/y.jsonl", folder) == Path("x/y.jsonl")


def test_model_reference_may_carry_a_thinking_suffix(project: Path, agent_dir: Path) -> None:
    (agent_dir / "models.json").write_text(json.dumps({"providers": {"local": {
        "baseUrl": "http://127.0.0.1:9/v1", "api": "openai-completions", "apiKey": "k",
        "models": [{"id": "m1", "reasoning": True}, {"id": "m2"}]}}}))
    session = create_agent_session(cwd=project, agent_dir=agent_dir, model="local/m1:high",
                                   provider=ScriptedProvider([]), no_session=True, load_extensions=False)
    assert session.model is not None and session.model.id == "m1" and session.thinking_level == "high"


def test_a_session_of_another_project_is_named_and_fork_copies_it(project: Path, agent_dir: Path) -> None:
    import pytest

    from pi_tui.core.errors import ConfigError
    from pi_tui.sdk import fork_session_arg

    other = agent_dir / "sessions" / "--elsewhere--"
    other.mkdir(parents=True)
    source = other / "2026-01-01T00-00-00-000Z_01b3bbbb-0000-7000-8000-000000000000.jsonl"
    source.write_text(
        '{"type":"session","version":3,"id":"01b3bbbb-0000-7000-8000-000000000000","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/elsewhere"}\n'
        '{"type":"message","id":"aaaa1111","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}\n'
    )
    here = agent_dir / "sessions" / "--here--"
    with pytest.raises(ConfigError, match="belongs to another project"):
        resolve_session_arg("01b3", here)
    manager = fork_session_arg("01b3", project, None, session_dir=here)
    assert manager.session_file is not None and manager.session_file.parent == here
    assert [e["type"] for e in manager.get_entries()] == ["message"]


def test_no_extensions_still_loads_explicit_extension_paths(project: Path, agent_dir: Path, tmp_path: Path) -> None:
    """``--no-extensions -e x.py``: discovery is off, the explicit path loads (as in pi)."""
    discovered = project / ".pi" / "extensions"
    discovered.mkdir(parents=True)
    (discovered / "found.py").write_text("def register(pi):\n    pass\n")
    explicit = tmp_path / "explicit.py"
    explicit.write_text("def register(pi):\n    pass\n")
    session = create_agent_session(cwd=project, agent_dir=agent_dir, provider=ScriptedProvider([]),
                                   no_session=True, load_extensions=False, extension_paths=[str(explicit)])
    assert session.extensions is not None
    assert [e.path.name for e in session.extensions.extensions] == ["explicit.py"]
    bare = create_agent_session(cwd=project, agent_dir=agent_dir, provider=ScriptedProvider([]),
                                no_session=True, load_extensions=False)
    assert bare.extensions is None
