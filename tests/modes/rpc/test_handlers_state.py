"""RPC state commands on a real session: models (models.json in the agent dir), thinking, queue
modes, persisted toggles, commands, session replacement and retry cancellation."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from pi_tui.modes.rpc.handlers_state import resolve_scoped_models
from pi_tui.resources.settings import load_settings
from tests.modes.rpc.conftest import ClientFactory, RpcClient


def _models_json(agent_dir: Path, *ids: str) -> None:
    models = {"providers": {"fake": {
        "baseUrl": "http://127.0.0.1:9/v1", "api": "openai-completions", "apiKey": "literal-key",
        "models": [{"id": i, "contextWindow": 100_000, "reasoning": True} for i in ids],
    }}}
    (agent_dir / "models.json").write_text(json.dumps(models))


async def test_models_listing_setting_and_cycling(make_client: ClientFactory, agent_dir: Path) -> None:
    _models_json(agent_dir, "m1", "m2")
    client = make_client([], model=None)
    listed = (await client.request({"id": 1, "type": "get_available_models"}))["data"]["models"]
    assert [(m["provider"], m["id"]) for m in listed] == [("fake", "m1"), ("fake", "m2")]
    assert listed[0]["contextWindow"] == 100_000 and listed[0]["cost"] == {
        "input": 0.0, "output": 0.0, "cacheRead": 0.0, "cacheWrite": 0.0}
    chosen = await client.request({"id": 2, "type": "set_model", "provider": "fake", "modelId": "m2"})
    assert chosen["data"]["id"] == "m2" and client.session.model.id == "m2"
    missing = await client.request({"id": 3, "type": "set_model", "provider": "fake", "modelId": "nope"})
    assert missing["success"] is False and missing["error"] == "Model not found: fake/nope"
    cycled = (await client.request({"id": 4, "type": "cycle_model"}))["data"]
    assert cycled["model"]["id"] == "m1" and cycled["isScoped"] is False
    assert cycled["thinkingLevel"] == client.session.thinking_level
    await client.close()
    # pi-tui's own model_changed (its TUI's footer) is not sent: pi has no such event.
    assert not [f for f in client.frames if f["type"] == "model_changed"]


async def test_cycle_model_with_one_model_answers_null(make_client: ClientFactory, agent_dir: Path) -> None:
    _models_json(agent_dir, "only")
    client = make_client([], model=None)
    answer = await client.request({"id": 1, "type": "cycle_model"})
    await client.close()
    assert answer == {"id": 1, "type": "response", "command": "cycle_model", "success": True, "data": None}


async def test_scoped_models_cycle_with_their_thinking_level(make_client: ClientFactory, agent_dir: Path) -> None:
    _models_json(agent_dir, "m1", "m2", "other")
    client = make_client([], model=None)
    scoped = resolve_scoped_models("fake/m*:high", client.session.model_registry)
    assert [(m.id, level) for m, level in scoped] == [("m1", "high"), ("m2", "high")]
    await client.close()
    scoped_client = RpcClient(client.session, scoped_models=scoped)
    cycled = (await scoped_client.request({"id": 1, "type": "cycle_model"}))["data"]
    await scoped_client.close()
    assert cycled["model"]["id"] == "m2" and cycled["isScoped"] is True and cycled["thinkingLevel"] == "high"


async def test_thinking_level_commands(make_client: ClientFactory) -> None:
    client = make_client([])
    assert (await client.request({"id": 1, "type": "set_thinking_level", "level": "high"}))["success"]
    cycled = await client.request({"id": 2, "type": "cycle_thinking_level"})
    await client.close()
    assert {"type": "thinking_level_changed", "level": "high"} in client.frames
    assert cycled["data"] == {"level": client.session.thinking_level} and client.session.thinking_level != "high"


async def test_queue_modes_and_toggles_are_applied_and_persisted(
    make_client: ClientFactory, project: Path, agent_dir: Path
) -> None:
    client = make_client([], settings=load_settings(project, agent_dir))
    for command in ({"type": "set_steering_mode", "mode": "all"}, {"type": "set_follow_up_mode", "mode": "all"},
                    {"type": "set_auto_compaction", "enabled": False}, {"type": "set_auto_retry", "enabled": False}):
        answer = await client.request({"id": command["type"], **command})
        assert answer["success"] is True and "data" not in answer
    bad_mode = await client.request({"id": "m", "type": "set_steering_mode", "mode": "sometimes"})
    bad_flag = await client.request({"id": "f", "type": "set_auto_retry", "enabled": "yes"})
    state = (await client.request({"id": "s", "type": "get_state"}))["data"]
    await client.close()
    assert bad_mode["error"] == "set_steering_mode: mode must be \"all\" or \"one-at-a-time\", not 'sometimes'"
    assert bad_flag["error"] == "set_auto_retry: field \"enabled\" must be true or false, not 'yes'"
    assert state["steeringMode"] == "all" and state["followUpMode"] == "all"
    assert state["autoCompactionEnabled"] is False
    saved = json.loads((agent_dir / "settings.json").read_text())
    assert saved["steeringMode"] == "all" and saved["followUpMode"] == "all"
    assert saved["compaction"]["enabled"] is False and saved["retry"]["enabled"] is False


async def test_get_commands_lists_templates_and_skills(make_client: ClientFactory, agent_dir: Path) -> None:
    (agent_dir / "prompts").mkdir()
    (agent_dir / "prompts" / "review.md").write_text("---\ndescription: Review the diff\n---\nReview $1\n")
    skill = agent_dir / "skills" / "calendar" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("---\ndescription: Dates and times\n---\nUse cal.\n")
    client = make_client([])
    commands = (await client.request({"id": 1, "type": "get_commands"}))["data"]["commands"]
    await client.close()
    # pi 0.73.1's RpcSlashCommand (name, description, source, sourceInfo), then pi 0.58's
    # location and path for older clients.
    review = str(agent_dir / "prompts" / "review.md")
    assert {"name": "review", "description": "Review the diff", "source": "prompt",
            "sourceInfo": {"path": review, "source": "auto", "scope": "user", "origin": "top-level",
                           "baseDir": str(agent_dir)},
            "location": "user", "path": review} in commands
    assert {"name": "skill:calendar", "description": "Dates and times", "source": "skill",
            "sourceInfo": {"path": str(skill), "source": "auto", "scope": "user", "origin": "top-level",
                           "baseDir": str(agent_dir)},
            "location": "user", "path": str(skill)} in commands
    assert all(list(c)[:2] == ["name", "description"] and c["sourceInfo"]["path"] == c["path"] for c in commands)


async def test_new_and_switch_session(make_client: ClientFactory) -> None:
    client = make_client([{"text": "answer"}])
    client.send({"id": "p", "type": "prompt", "message": "remember me"})
    await client.wait_for(lambda: "agent_end" in client.types())
    first = client.session.session_manager.session_file
    fresh = await client.request({"id": "n", "type": "new_session"})
    assert fresh["data"] == {"cancelled": False} and client.session.messages == []
    assert client.session.session_manager.session_file != first
    missing = await client.request({"id": "x", "type": "switch_session", "sessionPath": str(first) + ".missing"})
    assert missing["success"] is False and missing["error"].startswith("Session file not found: ")
    back = await client.request({"id": "b", "type": "switch_session", "sessionPath": str(first)})
    await client.close()
    assert back["data"] == {"cancelled": False}
    assert [m["role"] for m in client.session.messages] == ["user", "assistant"]


class BlockedClock:
    """A clock whose retry waits never end by themselves."""

    def now(self) -> float:
        return 0.0

    async def sleep(self, seconds: float) -> None:
        await asyncio.Event().wait()


async def test_abort_retry_ends_the_retry_wait(make_client: ClientFactory) -> None:
    client = make_client([{"error": {"status": 503, "message": "overloaded"}}], clock=BlockedClock())
    client.send({"id": "p", "type": "prompt", "message": "hi"})
    await client.wait_for(lambda: "auto_retry_start" in client.types())
    assert (await client.request({"id": "r", "type": "abort_retry"}))["success"] is True
    await client.close()
    end = next(f for f in client.frames if f["type"] == "auto_retry_end")
    assert end["success"] is False
    assert client.session.state.is_streaming is False


async def test_session_name_must_not_be_empty(make_client: ClientFactory) -> None:
    client = make_client([])
    answer = await client.request({"id": 1, "type": "set_session_name", "name": "   "})
    missing = await client.request({"id": 2, "type": "set_session_name"})
    await client.close()
    assert answer["error"] == "Session name cannot be empty"
    assert missing["error"] == 'set_session_name: field "name" is missing'



async def test_export_html_writes_the_branch_and_answers_its_path(make_client: ClientFactory, tmp_path: Path) -> None:
    client = make_client([{"text": "Exported <answer> & more"}])
    await client.request({"id": 1, "type": "prompt", "message": "please export"})
    await client.wait_for(lambda: "agent_end" in client.types())
    target = tmp_path / "out.html"
    answer = await client.request({"id": 2, "type": "export_html", "outputPath": str(target)})
    bad = await client.request({"id": 3, "type": "export_html", "outputPath": 5})
    await client.close()
    assert answer["success"] is True and answer["data"] == {"path": str(target)}
    html = target.read_text(encoding="utf-8")
    assert "please export" in html and "Exported &lt;answer&gt; &amp; more" in html
    assert bad["success"] is False and bad["error"] == "outputPath must be a string"
