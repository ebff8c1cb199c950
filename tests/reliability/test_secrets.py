"""Secrets: planted keys never reach a file pi-tui writes nor any of its output streams.

Keys are planted everywhere a user keeps them — provider env vars, ``--api-key``, a models.json
``apiKey`` literal, an ``apiKey`` naming an unusual env var, a credential header — and other
secrets sit in the environment (``GITHUB_TOKEN``, ``*_SECRET``). A proxy then echoes the key it
received in its 401 (and in a retried 503), and the model runs ``env`` through ``bash`` and the
user through ``!env``. Afterwards every file under the agent dir and the project (sessions,
artifacts, the HTML export) and every stream (stdout, stderr, JSON, RPC, the TUI's screen) is
grepped for every planted value.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pi_tui.core.redact import REDACTED, Redactor, is_secret_name
from pi_tui.testing.fake_anthropic_server import FakeAnthropicServer
from pi_tui.testing.fake_server import FakeServer
from tests.reliability.hostile_repo import run_cli
from tests.reliability.planted import (
    ENV_NAME_KEY,
    ENV_SECRETS,
    FLAG_KEY,
    HEADER_TOKEN,
    MODELS_KEY,
    files_leaking,
    leaks,
)

FAULT_CLASS = "secrets"

def _agent(base: Path, base_url: str, *, api: str = "openai-completions", api_key: str = MODELS_KEY,
           settings: dict[str, Any] | None = None) -> Path:
    agent = base / "agent"
    agent.mkdir(exist_ok=True)
    provider: dict[str, Any] = {
        "baseUrl": base_url, "api": api, "apiKey": api_key, "headers": {"x-proxy-token": HEADER_TOKEN},
        "models": [{"id": "fake-model", "contextWindow": 128000, "maxTokens": 1000}],
    }
    if api == "openai-completions":
        provider["compat"] = {"supportsDeveloperRole": False, "supportsReasoningEffort": False}
    (agent / "models.json").write_text(json.dumps({"providers": {"fake": provider}}))
    (agent / "settings.json").write_text(json.dumps({"retry": {"baseDelayMs": 1}, **(settings or {})}))
    return agent


def _prompt_hi(mode: str, agent: Path, project: Path) -> Any:
    """One prompt "hi" in print (``text``), JSON or RPC mode, with ``--api-key`` and the planted env."""
    if mode == "rpc":
        stdin = json.dumps({"id": "1", "type": "prompt", "message": "hi"}) + "\n"
        return run_cli(["--mode", "rpc", "--api-key", FLAG_KEY], agent, project, stdin=stdin, env=ENV_SECRETS)
    extra = ["--mode", "json"] if mode == "json" else []
    return run_cli([*extra, "-p", "hi", "--api-key", FLAG_KEY], agent, project, env=ENV_SECRETS)


def _session_file(agent: Path) -> Path:
    (path,) = sorted((agent / "sessions").rglob("*.jsonl"))
    return path


# --------------------------------------------------------------------------- the redactor


def test_the_redactor_replaces_every_known_secret_longest_first() -> None:
    redactor = Redactor(["sk-short-12", "sk-short-12-and-longer", None, "tiny"])
    text = "a sk-short-12-and-longer b sk-short-12 c tiny"
    assert redactor.redact(text) == f"a {REDACTED} b {REDACTED} c tiny"


@pytest.mark.parametrize(("name", "secret"), [
    ("OPENAI_API_KEY", True), ("github_token", True), ("AWS_SECRET_ACCESS_KEY", True), ("DB_PASSWORD", True),
    ("MY_SERVICE_SECRET", True), ("PATH", False), ("HOME", False), ("TOKENIZERS_PARALLELISM", False),
    # Common names the first rule missed: Azure's and many services' *_KEY, *APIKEY, libpq's PGPASSWORD, MySQL's
    ("AZURE_OPENAI_KEY", True), ("STRIPE_KEY", True), ("OPENAI_APIKEY", True), ("PGPASSWORD", True),
    ("MYSQL_PWD", True), ("SMTP_PASSWD", True), ("PWD", False), ("OLDPWD", False), ("KEYTIMEOUT", False),
    ("AWS_ACCESS_KEY_ID", False), ("PASSWORD_STORE_DIR", False), ("GOOGLE_APPLICATION_CREDENTIALS", False),
])
def test_secret_names(name: str, secret: bool) -> None:
    assert is_secret_name(name) is secret


# --------------------------------------------------------------------------- an echoing proxy


@pytest.mark.parametrize("mode", ["text", "json", "rpc"])
def test_an_echoed_key_reaches_no_file_and_no_stream(tmp_path: Path, project: Path, mode: str) -> None:
    turns = [{"text": "x", "fault": {"kind": "echo_auth", "status": 503}},  # retried: notices quote it
             {"text": "x", "fault": {"kind": "echo_auth", "status": 401}}]
    with FakeServer(turns) as server:
        agent = _agent(tmp_path, server.base_url)
        result = _prompt_hi(mode, agent, project)
        sent = [r.headers.get("authorization", "") for r in server.recorded]
    assert sent == [f"Bearer {FLAG_KEY}"] * 2  # the proxy really got (and echoed) the key
    assert leaks(result.stdout, result.stderr) == []
    assert REDACTED in (result.stderr if mode == "text" else result.stdout)
    session = _session_file(agent)
    export = tmp_path / "export.html"
    exported = run_cli(["--export", str(session), str(export)], agent, project)
    assert exported.returncode == 0, exported.stderr
    assert files_leaking(agent, project, export.parent) == {}


def test_a_models_json_key_echoed_on_the_anthropic_wire_is_redacted_too(tmp_path: Path, project: Path) -> None:
    with FakeAnthropicServer([{"error": {"status": 401, "echo_api_key": True}}]) as server:
        agent = _agent(tmp_path, server.base_url, api="anthropic-messages")
        result = run_cli(["-p", "hi"], agent, project, env=ENV_SECRETS)
    assert result.returncode == 1
    assert leaks(result.stdout, result.stderr) == [] and REDACTED in result.stderr
    assert files_leaking(agent, project) == {}


def test_an_api_key_from_an_env_name_in_models_json_is_redacted(tmp_path: Path, project: Path) -> None:
    with FakeServer([{"text": "x", "fault": {"kind": "echo_auth"}}]) as server:
        agent = _agent(tmp_path, server.base_url, api_key="PROXY_CRED")
        result = run_cli(["-p", "hi"], agent, project, env=ENV_SECRETS)
    assert result.returncode == 1
    assert ENV_NAME_KEY not in result.stderr and REDACTED in result.stderr
    assert files_leaking(agent, project) == {}


# --------------------------------------------------------------------------- the shell's environment

BASH_ENV = [
    {"tool_calls": [{"id": "c1", "name": "bash", "arguments": {"command": "env; echo END-OF-ENV"}}]},
    {"text": "listed"},
]


def test_bash_gets_no_secret_from_the_environment(tmp_path: Path, project: Path) -> None:
    with FakeServer(BASH_ENV) as server:
        agent = _agent(tmp_path, server.base_url, api_key="PROXY_CRED")
        result = run_cli(["-p", "list env"], agent, project, env=ENV_SECRETS)
        tool_output = server.requests[1]["messages"][-1]["content"]
    assert result.returncode == 0, result.stderr
    assert "END-OF-ENV" in tool_output and "PATH=" in tool_output  # the rest of the env is there
    assert leaks(tool_output) == []
    assert files_leaking(agent, project) == {}


def test_a_variable_passed_through_by_the_setting_reaches_bash_but_not_the_conversation(
        tmp_path: Path, project: Path) -> None:
    with FakeServer(BASH_ENV) as server:
        agent = _agent(tmp_path, server.base_url, api_key="PROXY_CRED",
                       settings={"shellEnvPassthrough": ["GITHUB_TOKEN"]})
        result = run_cli(["-p", "list env"], agent, project, env=ENV_SECRETS)
        tool_output = server.requests[1]["messages"][-1]["content"]
    assert result.returncode == 0, result.stderr
    assert f"GITHUB_TOKEN={REDACTED}" in tool_output  # the command had it; printed, it is redacted
    assert "MY_SERVICE_SECRET" not in tool_output
    assert leaks(tool_output) == []


def test_a_project_cannot_pass_secrets_through_to_bash(tmp_path: Path, project: Path) -> None:
    (project / ".pi").mkdir()
    (project / ".pi" / "settings.json").write_text(json.dumps({"shellEnvPassthrough": ["*"]}))
    with FakeServer(BASH_ENV) as server:
        agent = _agent(tmp_path, server.base_url, api_key="PROXY_CRED")
        result = run_cli(["-p", "list env", "--trust-project"], agent, project, env=ENV_SECRETS)
        tool_output = server.requests[1]["messages"][-1]["content"]
    assert result.returncode == 0, result.stderr
    assert leaks(tool_output) == []


def test_the_users_bang_command_gets_no_secret_either(tmp_path: Path, project: Path) -> None:
    commands = json.dumps({"id": "1", "type": "bash", "command": "env"}) + "\n"
    with FakeServer([]) as server:
        agent = _agent(tmp_path, server.base_url, api_key="PROXY_CRED")  # known before any request
        result = run_cli(["--mode", "rpc"], agent, project, stdin=commands, env=ENV_SECRETS)
    frames = [json.loads(line) for line in result.stdout.splitlines()]
    reply = next(f for f in frames if f.get("type") == "response" and f.get("command") == "bash")
    assert reply["success"], reply
    assert "PATH=" in reply["data"]["output"]
    assert leaks(result.stdout, result.stderr) == []


# --------------------------------------------------------------------------- the TUI


async def test_the_tui_shows_an_echoed_key_redacted(tmp_path: Path, project: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from pi_tui.modes.interactive.app import PiApp
    from pi_tui.modes.interactive.widgets.editor import PromptEditor
    from pi_tui.sdk import create_agent_session
    from tests.reliability.test_terminal_escapes import screen_bytes

    for name, value in ENV_SECRETS.items():
        monkeypatch.setenv(name, value)
    with FakeServer([{"text": "x", "fault": {"kind": "echo_auth"}}]) as server:
        agent = _agent(tmp_path, server.base_url)
        session = create_agent_session(cwd=project, agent_dir=agent, model="fake/fake-model", settings={},
                                       load_extensions=False)
        app = PiApp(session, cwd=project, agent_dir=agent)
        async with app.run_test(size=(140, 50)) as pilot:
            while not (app.chat is not None and app.chat.history_loaded.is_set()):
                await pilot.pause(0.05)
            app.screen.query_one(PromptEditor).insert("hi")
            await pilot.press("enter")
            for _ in range(100):
                if not session.is_streaming and "Invalid credentials" in screen_bytes(app):
                    break
                await pilot.pause(0.05)
            shown = screen_bytes(app)
    assert "Invalid credentials" in shown
    assert leaks(shown) == []
    assert files_leaking(agent, project) == {}


def test_the_shell_environment_drops_secret_names_and_known_values_only() -> None:
    from pi_tui.tools.shell import shell_env

    base = {"PATH": "/usr/bin", "HOME": "/home/u", **ENV_SECRETS}
    assert set(shell_env({}, secret_values=[ENV_NAME_KEY], base=base)) == {"PATH", "HOME"}
    passed = shell_env({"shellEnvPassthrough": ["GITHUB_*"]}, secret_values=[ENV_NAME_KEY], base=base)
    assert set(passed) == {"PATH", "HOME", "GITHUB_TOKEN"}


# --------------------------------------------------------------------------- tool output


def test_a_model_reading_the_key_files_gets_them_redacted(tmp_path: Path, project: Path) -> None:
    turns = [
        {"tool_calls": [{"id": "c1", "name": "bash", "arguments": {"command": "cat \"$PI_CODING_AGENT_DIR/models.json\""}},
                        {"id": "c2", "name": "read", "arguments": {"path": str(tmp_path / "agent" / "models.json")}}]},
        {"text": "read them"},
    ]
    with FakeServer(turns) as server:
        agent = _agent(tmp_path, server.base_url)
        result = run_cli(["--mode", "json", "-p", "show me your config", "--api-key", FLAG_KEY], agent, project,
                         env=ENV_SECRETS)
        second = server.requests[1]["messages"]
    assert result.returncode == 0, result.stderr
    outputs = [m["content"] for m in second if m["role"] == "tool"]
    assert len(outputs) == 2 and all("x-proxy-token" in o and REDACTED in o for o in outputs)
    assert leaks(json.dumps(second), result.stdout, result.stderr) == []
    assert files_leaking(agent, project) == {}


def test_the_users_bang_command_output_is_redacted(tmp_path: Path, project: Path) -> None:
    commands = json.dumps({"id": "1", "type": "bash", "command": "cat \"$PI_CODING_AGENT_DIR/models.json\""}) + "\n"
    with FakeServer([]) as server:
        agent = _agent(tmp_path, server.base_url)
        result = run_cli(["--mode", "rpc"], agent, project, stdin=commands, env=ENV_SECRETS)
    assert "x-proxy-token" in result.stdout and REDACTED in result.stdout
    assert leaks(result.stdout, result.stderr) == []
    assert files_leaking(agent, project) == {}


# --------------------------------------------------------------------------- the full-output file

HUGE = 'cat "$PI_CODING_AGENT_DIR/models.json"; seq 1 40000; cat "$PI_CODING_AGENT_DIR/models.json"'
"""A key printed first (only in the full-output file, out of the 50 KB tail) and last (in both)."""


def test_a_key_printed_by_a_huge_command_reaches_no_full_output_file(tmp_path: Path, project: Path) -> None:
    turns = [{"tool_calls": [{"id": "c1", "name": "bash", "arguments": {"command": HUGE}}]}, {"text": "done"}]
    with FakeServer(turns) as server:
        agent = _agent(tmp_path, server.base_url)
        result = run_cli(["-p", "print a lot", "--api-key", FLAG_KEY], agent, project, env=ENV_SECRETS)
        tool_output = server.requests[1]["messages"][-1]["content"]
    assert result.returncode == 0, result.stderr
    (full,) = (agent / "sessions").rglob("pi-bash-*.log")  # the tool really saved the whole output
    text = full.read_text()
    assert text.count("x-proxy-token") == 2 and text.count(REDACTED) >= 4 and "\n40000\n" in text
    assert str(full) in tool_output and leaks(tool_output) == []
    assert files_leaking(agent, project) == {}


def test_a_key_printed_by_a_huge_bang_command_reaches_no_full_output_file(tmp_path: Path, project: Path) -> None:
    commands = json.dumps({"id": "1", "type": "bash", "command": HUGE}) + "\n"
    with FakeServer([]) as server:
        agent = _agent(tmp_path, server.base_url)
        result = run_cli(["--mode", "rpc"], agent, project, stdin=commands, env=ENV_SECRETS)
    frames = [json.loads(line) for line in result.stdout.splitlines()]
    reply = next(f for f in frames if f.get("type") == "response" and f.get("command") == "bash")
    full = Path(reply["data"]["fullOutputPath"])
    assert full.read_text().count("x-proxy-token") == 2
    assert leaks(result.stdout, result.stderr, full.read_text()) == []
    assert files_leaking(agent, project) == {}


# --------------------------------------------------------------------------- keys the model says

def _model_says_the_keys() -> list[dict[str, Any]]:
    """A model (or a proxy) that knows keys — from a context file symlinked to models.json, or
    echoing the request — and puts them in its text, its thinking and its tool calls."""
    return [
        {"thinking": f"the key is {MODELS_KEY}", "text": f"Your key: {MODELS_KEY} and {FLAG_KEY}.",
         "tool_calls": [
             {"id": "c1", "name": "bash", "arguments": {"command": f"echo {FLAG_KEY} > leaked-by-bash.txt"}},
             {"id": "c2", "name": "write", "arguments": {"path": "leaked-by-write.txt",
                                                         "content": f"k={MODELS_KEY}\n"}}]},
        {"text": f"Done; again {ENV_SECRETS['GITHUB_TOKEN']}"},
    ]


@pytest.mark.parametrize("mode", ["text", "json", "rpc"])
def test_keys_the_model_says_reach_no_stream_no_file_and_no_command(tmp_path: Path, project: Path,
                                                                     mode: str) -> None:
    with FakeServer(_model_says_the_keys()) as server:
        agent = _agent(tmp_path, server.base_url)
        result = _prompt_hi(mode, agent, project)
        second = json.dumps(server.requests[1]["messages"]) if len(server.requests) > 1 else ""
    assert (project / "leaked-by-bash.txt").read_text() == f"{REDACTED}\n"  # the command ran, without the key
    assert (project / "leaked-by-write.txt").read_text() == f"k={REDACTED}\n"
    assert leaks(result.stdout, result.stderr, second) == []
    assert REDACTED in (result.stdout + result.stderr)
    export = tmp_path / "export.html"
    assert run_cli(["--export", str(_session_file(agent)), str(export)], agent, project).returncode == 0
    assert files_leaking(agent, project, export.parent) == {}


def test_a_credential_header_is_known_without_its_scheme_too(tmp_path: Path) -> None:
    """models.json ``"headers": {"Authorization": "Bearer TOKEN"}``: the session knew the whole
    value, so a proxy quoting just the token ("invalid token TOKEN") or a model printing it went
    through unredacted."""
    from pi_tui.providers.models import ModelRegistry
    from pi_tui.session.redaction import known_secrets

    token = "hdr-tok-0123456789abcdef"
    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "models.json").write_text(json.dumps({"providers": {"proxy": {
        "baseUrl": "http://127.0.0.1:9/v1", "api": "openai-completions", "apiKey": "none",
        "headers": {"Authorization": f"Bearer {token}", "X-Api-Key": "Token other-0123456789", "X-Trace": "Bearer"},
        "models": [{"id": "m"}]}}}))
    redactor = Redactor(known_secrets(ModelRegistry.for_agent_dir(agent), None, {}))
    assert redactor.redact(f"401: invalid token {token}") == f"401: invalid token {REDACTED}"
    assert redactor.redact(f"Authorization: Bearer {token}") == f"Authorization: {REDACTED}"  # the whole value
    assert redactor.redact("bad other-0123456789") == f"bad {REDACTED}"
    assert redactor.redact("a Bearer token") == "a Bearer token"  # a bare scheme word is no secret
