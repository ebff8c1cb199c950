"""``pi-tui -p`` and ``--mode json`` end to end: a real subprocess against the fake server, with
an agent dir whose models.json defines the server as an ``openai-completions`` provider."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pi_tui.testing.fake_server import FakeServer

TOOL_THEN_TEXT = [
    {"tool_calls": [{"id": "call_1", "name": "bash", "arguments": {"command": "echo hello"}, "chunks": 3}],
     "usage": {"prompt_tokens": 120, "completion_tokens": 10}},
    {"text": "The command printed hello.", "usage": {"prompt_tokens": 150, "completion_tokens": 6}},
]


def _agent_dir(root: Path, base_url: str) -> Path:
    agent = root / "agent"
    agent.mkdir(exist_ok=True)
    models = {"providers": {"fake": {
        "baseUrl": base_url, "api": "openai-completions", "apiKey": "fake-key",
        "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
        "models": [{"id": "fake-model", "contextWindow": 128000, "maxTokens": 1000}],
    }}}
    (agent / "models.json").write_text(json.dumps(models))
    return agent


def _run(args: list[str], agent: Path, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(agent)}
    env.pop("PYTEST_CURRENT_TEST", None)
    return subprocess.run([sys.executable, "-m", "pi_tui", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, input=stdin if stdin is not None else "", timeout=60)


def _session_files(agent: Path) -> list[Path]:
    return sorted((agent / "sessions").rglob("*.jsonl"))


def test_print_mode_prints_the_answer_and_writes_a_loadable_session(tmp_path: Path, project: Path) -> None:
    with FakeServer(TOOL_THEN_TEXT) as server:
        agent = _agent_dir(tmp_path, server.base_url)
        result = _run(["-p", "say hi"], agent, project)
        requests = server.requests
    assert result.returncode == 0, result.stderr
    assert result.stdout == "The command printed hello.\n"
    first, second = requests
    assert list(first)[:7] == ["model", "messages", "stream", "stream_options", "store", "max_completion_tokens", "tools"]
    assert first["model"] == "fake-model" and first["max_completion_tokens"] == 1000
    assert [t["function"]["name"] for t in first["tools"]] == ["read", "bash", "edit", "write"]
    assert first["messages"][1] == {"role": "user", "content": [{"type": "text", "text": "say hi"}]}
    assert second["messages"][2] == {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "bash", "arguments": '{"command":"echo hello"}'}}]}
    assert second["messages"][3] == {"role": "tool", "content": "hello\n", "tool_call_id": "call_1"}
    (path,) = _session_files(agent)
    entries = [json.loads(line) for line in path.read_text().splitlines()]
    assert [e["type"] for e in entries] == ["session", "model_change", "thinking_level_change"] + ["message"] * 4
    assert entries[2]["thinkingLevel"] == "off"  # not a reasoning model
    assert entries[4]["message"]["usage"]["input"] == 120
    context = _run(["context", str(path), "--json"], agent, project)
    assert context.returncode == 0, context.stderr
    assert "The command printed hello." in context.stdout


def test_json_mode_prints_the_header_then_every_event(tmp_path: Path, project: Path) -> None:
    with FakeServer(TOOL_THEN_TEXT) as server:
        agent = _agent_dir(tmp_path, server.base_url)
        result = _run(["--mode", "json", "-p", "say hi"], agent, project)
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert lines[0]["type"] == "session" and lines[0]["version"] == 3
    types = [e["type"] for e in lines[1:] if not e["type"].endswith("_update")]
    assert types == [
        "agent_start", "turn_start", "message_start", "message_end", "message_start", "message_end",
        "tool_execution_start", "tool_execution_end", "message_start", "message_end", "turn_end",
        "turn_start", "message_start", "message_end", "turn_end", "agent_end",
    ]
    updates = [e for e in lines if e["type"] == "message_update"]
    assert any(u["assistantMessageEvent"]["type"] == "toolcall_delta" for u in updates)
    end = next(e for e in lines if e["type"] == "tool_execution_end")
    assert end["result"]["content"] == [{"type": "text", "text": "hello\n"}] and end["isError"] is False


def test_errors_go_to_stderr_with_exit_1(tmp_path: Path, project: Path) -> None:
    with FakeServer([{"error": {"status": 400, "message": "bad things"}}]) as server:
        agent = _agent_dir(tmp_path, server.base_url)
        result = _run(["-p", "--no-session", "hi"], agent, project)
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.strip() == "400 bad things"
    assert _session_files(agent) == []


def test_several_prompts_run_in_one_session_and_continue_picks_it_up(tmp_path: Path, project: Path) -> None:
    turns: list[dict[str, Any]] = [{"text": "one"}, {"text": "two"}, {"text": "three"}]
    with FakeServer(turns) as server:
        agent = _agent_dir(tmp_path, server.base_url)
        first = _run(["-p", "--no-tools", "a", "b"], agent, project)
        again = _run(["-p", "-c", "--no-tools", "c"], agent, project)
        requests = server.requests
    assert first.stdout == "two\n" and again.stdout == "three\n"
    assert "tools" not in requests[0]
    (path,) = _session_files(agent)
    roles = [json.loads(x)["message"]["role"] for x in path.read_text().splitlines() if '"type":"message"' in x]
    assert roles == ["user", "assistant"] * 3
    assert [m["role"] for m in requests[2]["messages"]] == ["system", "user", "assistant", "user", "assistant", "user"]


def test_piped_stdin_is_the_first_message_and_system_prompt_flags_apply(tmp_path: Path, project: Path) -> None:
    with FakeServer([{"text": "ok"}, {"text": "second"}]) as server:
        agent = _agent_dir(tmp_path, server.base_url)
        result = _run(["--system-prompt", "You are terse.", "--append-system-prompt", "Extra rule.",
                       "--no-session", "and this"], agent, project, stdin="from stdin\n")
        body = server.requests[0]
    assert result.returncode == 0, result.stderr
    system = body["messages"][0]["content"]
    assert system.startswith("You are terse.") and "Extra rule." in system
    assert body["messages"][1]["content"][0]["text"] == "from stdin"
    assert result.stdout == "second\n"


def test_no_model_is_a_clear_message_not_a_traceback(tmp_path: Path, project: Path) -> None:
    agent = tmp_path / "empty-agent"
    agent.mkdir()
    result = _run(["-p", "hi"], agent, project)
    assert result.returncode == 1
    assert "No model selected" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize("flag", ["--thinking", "--model"])
def test_bad_flag_values_are_reported(tmp_path: Path, project: Path, flag: str) -> None:
    with FakeServer([{"text": "ok"}]) as server:
        agent = _agent_dir(tmp_path, server.base_url)
        value = "fake/nope" if flag == "--model" else "off"
        result = _run(["-p", flag, value, "hi"], agent, project)
    if flag == "--model":
        assert result.returncode == 1 and "nope" in result.stderr and "Traceback" not in result.stderr
    else:
        assert result.returncode == 0


def test_json_mode_shows_retries_and_the_answer_after_them(tmp_path: Path, project: Path) -> None:
    with FakeServer([{"error": {"status": 503}}, {"text": "back again"}]) as server:
        agent = _agent_dir(tmp_path, server.base_url)
        (agent / "settings.json").write_text(json.dumps({"retry": {"baseDelayMs": 10}}))
        result = _run(["--mode", "json", "-p", "--no-session", "hi"], agent, project)
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()[1:]]
    retry = [e for e in events if e["type"].startswith("auto_retry")]
    assert retry == [
        {"type": "auto_retry_start", "attempt": 1, "maxAttempts": 3, "delayMs": 10, "errorMessage": "503 Service unavailable"},
        {"type": "auto_retry_end", "success": True, "attempt": 1},
    ]
    assert [e["type"] for e in events].count("agent_start") == 2
    assert events[-1]["type"] == "agent_end"


def test_unknown_tool_names_are_reported(tmp_path: Path, project: Path) -> None:
    agent = _agent_dir(tmp_path, "http://127.0.0.1:9/v1")
    result = _run(["-p", "--tools", "read,fly", "hi"], agent, project)
    assert result.returncode == 1
    assert "Unknown tool in --tools: fly (available: read, bash, edit, write" in result.stderr


def test_print_mode_starts_the_session_so_discovered_templates_expand(tmp_path: Path, project: Path) -> None:
    extension = tmp_path / "discover.py"
    extension.write_text(
        "def register(pi):\n"
        "    @pi.on('resources_discover')\n"
        f"    def found(event):\n        return {{'promptPaths': [{str(tmp_path / 'prompts')!r}]}}\n"
    )
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "greet.md").write_text("Say hello to $1.\n")
    with FakeServer([{"text": "hello"}]) as server:
        agent = _agent_dir(tmp_path, server.base_url)
        result = _run(["-p", "--no-session", "--no-extensions", "-e", str(extension), "/greet Ada"], agent, project)
        requests = server.requests
    assert result.returncode == 0, result.stderr
    assert requests[0]["messages"][1]["content"][0]["text"].strip() == "Say hello to Ada."


def test_startup_diagnostics_go_to_stderr_and_are_notify_events_in_json_mode(tmp_path: Path, project: Path) -> None:
    (project / ".pi").mkdir(exist_ok=True)
    settings_file = project / ".pi" / "settings.json"
    settings_file.write_text("{ broken")
    with FakeServer([{"text": "one"}, {"text": "two"}]) as server:
        agent = _agent_dir(tmp_path, server.base_url)
        text = _run(["-p", "--no-session", "hi"], agent, project)
        json_run = _run(["--mode", "json", "-p", "--no-session", "hi"], agent, project)
    assert text.returncode == 0 and text.stdout == "one\n"
    assert str(settings_file) in text.stderr
    assert json_run.returncode == 0, json_run.stderr
    lines = [json.loads(line) for line in json_run.stdout.splitlines()]
    assert lines[0]["type"] == "session"
    assert lines[1]["type"] == "notify" and lines[1]["level"] == "warning"
    assert str(settings_file) in lines[1]["message"]
    assert lines[2]["type"] == "agent_start"
