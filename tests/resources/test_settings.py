from __future__ import annotations

import json
import threading
from pathlib import Path

from pi_tui.resources.settings import SettingsManager, load_settings


def write(path: Path, data: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def test_defaults_without_files(project: Path, agent_dir: Path) -> None:
    s = load_settings(project, agent_dir)
    assert s.diagnostics == []
    c = s.compaction_settings()
    assert (c.enabled, c.reserve_tokens, c.keep_recent_tokens) == (True, 16384, 20000)
    b = s.branch_summary_settings()
    assert (b.reserve_tokens, b.skip_prompt) == (16384, False)
    r = s.retry_settings()
    assert (r.enabled, r.max_retries, r.base_delay_ms, r.provider_max_retry_delay_ms) == (True, 3, 2000, 60000)
    assert s.default_thinking_level == "medium"
    assert s.get("transport") == "auto"
    assert s.get("images.autoResize") is True and s.get("images.blockImages") is False
    assert s.get("terminal.imageWidthCells") == 60
    assert s.context_strategy() == "pi"
    assert s.pipeline_settings().snip_keep_last == 46
    assert s.get("nope.nothing", 7) == 7


def test_project_deep_merges_over_global_and_keeps_unknown_keys(project: Path, agent_dir: Path) -> None:
    write(agent_dir / "settings.json", {
        "compaction": {"reserveTokens": 1000, "keepRecentTokens": 500},
        "skills": ["~/a"], "defaultModel": "gpt-x", "myOwnKey": {"x": 1},
        "compaction_extra": True,
    })
    write(project / ".pi" / "settings.json", {
        "compaction": {"keepRecentTokens": 9}, "skills": ["b"], "context": {"strategy": "pipeline"},
    })
    s = load_settings(project, agent_dir)
    c = s.compaction_settings()
    assert (c.reserve_tokens, c.keep_recent_tokens, c.enabled) == (1000, 9, True)
    assert s.get("skills") == ["b"]  # arrays replace
    assert s.default_model == "gpt-x"
    assert s.get("myOwnKey") == {"x": 1}
    assert s.as_dict()["compaction_extra"] is True
    assert s.context_strategy() == "pipeline"


def test_model_overrides_apply_per_provider_and_model(project: Path, agent_dir: Path) -> None:
    write(agent_dir / "settings.json", {"compaction": {
        "reserveTokens": 16384, "keepRecentTokens": 20000,
        "modelOverrides": {"some-provider/big-model": {"reserveTokens": 400000}, "tiny": {"enabled": False}},
    }})
    s = load_settings(project, agent_dir)
    big = s.compaction_settings("some-provider", "big-model")
    assert (big.reserve_tokens, big.keep_recent_tokens) == (400000, 20000)
    assert s.compaction_settings("other", "big-model").reserve_tokens == 16384
    assert s.compaction_settings("x", "tiny").enabled is False


def test_malformed_file_is_reported_defaults_used_and_never_overwritten(project: Path, agent_dir: Path) -> None:
    bad = '{"compaction": {"reserveTokens": 5,}'
    path = write(agent_dir / "settings.json", bad)
    write(project / ".pi" / "settings.json", {"defaultModel": "m"})
    s = load_settings(project, agent_dir)
    assert len(s.diagnostics) == 1
    d = s.diagnostics[0]
    assert d.path == path and "invalid JSON" in d.message and "line 1" in d.message
    assert s.compaction_settings().reserve_tokens == 16384
    assert s.default_model == "m"
    assert s.set_global("defaultModel", "other") is False
    assert path.read_text() == bad
    assert s.default_model == "m"  # project still wins in memory
    assert any("not saved" in x.message for x in s.diagnostics)


def test_non_object_file_and_wrong_types(project: Path, agent_dir: Path) -> None:
    write(agent_dir / "settings.json", "[1, 2]")
    write(project / ".pi" / "settings.json", {"compaction": {"reserveTokens": "lots"}, "context": {"strategy": "magic"}})
    s = load_settings(project, agent_dir)
    messages = [str(d) for d in s.diagnostics]
    assert any("must be a JSON object" in m for m in messages)
    assert any("compaction.reserveTokens: expected a non-negative integer, got str" in m for m in messages)
    assert any("context.strategy: 'magic' is not one of pi, pipeline" in m for m in messages)
    assert s.compaction_settings().reserve_tokens == 16384
    assert s.context_strategy() == "pi"


def test_invalid_project_value_lets_global_value_through(project: Path, agent_dir: Path) -> None:
    write(agent_dir / "settings.json", {"retry": {"maxRetries": 7}})
    write(project / ".pi" / "settings.json", {"retry": {"maxRetries": True}})
    assert load_settings(project, agent_dir).retry_settings().max_retries == 7


def test_migrations(project: Path, agent_dir: Path) -> None:
    write(agent_dir / "settings.json", {
        "queueMode": "all", "websockets": True,
        "skills": {"enableSkillCommands": False, "customDirectories": ["~/sk"]},
        "retry": {"maxDelayMs": 1234},
    })
    s = load_settings(project, agent_dir)
    assert s.steering_mode == "all"
    assert s.get("transport") == "websocket"
    assert s.enable_skill_commands is False
    assert s.get("skills") == ["~/sk"]
    assert s.retry_settings().provider_max_retry_delay_ms == 1234
    assert s.get("retry.maxDelayMs") is None and s.get("queueMode") is None


def test_retry_max_delay_migration_does_not_override_new_key(project: Path, agent_dir: Path) -> None:
    write(agent_dir / "settings.json", {"retry": {"maxDelayMs": 1, "provider": {"maxRetryDelayMs": 2}}})
    assert load_settings(project, agent_dir).retry_settings().provider_max_retry_delay_ms == 2


def test_write_changes_only_modified_keys_and_keeps_concurrent_edits(project: Path, agent_dir: Path) -> None:
    path = write(agent_dir / "settings.json", {"theme": "dark", "queueMode": "all", "unknown": [1]})
    s = load_settings(project, agent_dir)
    # Another process edits the file after we loaded it.
    write(path, {"theme": "light", "queueMode": "all", "unknown": [1], "added": "elsewhere"})
    assert s.set_global("compaction.reserveTokens", 2048) is True
    on_disk = json.loads(path.read_text())
    assert on_disk == {"theme": "light", "queueMode": "all", "unknown": [1], "added": "elsewhere",
                       "compaction": {"reserveTokens": 2048}}
    assert s.compaction_settings().reserve_tokens == 2048
    assert not path.with_name("settings.json.lock").exists()
    # A second change still carries the first one.
    s.set_global("defaultModel", "m2")
    assert json.loads(path.read_text())["compaction"] == {"reserveTokens": 2048}


def test_write_creates_missing_file_and_project_scope(project: Path, agent_dir: Path) -> None:
    s = load_settings(project, agent_dir)
    assert s.set("defaultProvider", "openai") is True
    assert json.loads((agent_dir / "settings.json").read_text()) == {"defaultProvider": "openai"}
    assert s.set_project("context.strategy", "pipeline") is True
    assert json.loads((project / ".pi" / "settings.json").read_text()) == {"context": {"strategy": "pipeline"}}
    assert s.context_strategy() == "pipeline"


def test_write_waits_for_lock_and_reports_when_held(project: Path, agent_dir: Path) -> None:
    path = write(agent_dir / "settings.json", {})
    lock = path.with_name("settings.json.lock")
    lock.write_text("")
    s = load_settings(project, agent_dir)
    assert s.set_global("theme", "light") is False
    assert any("locked" in d.message for d in s.diagnostics)
    assert json.loads(path.read_text()) == {}
    # Released within the retry window: the write goes through.
    timer = threading.Timer(0.05, lock.unlink)
    timer.start()
    assert s.set_global("theme", "light") is True
    timer.join()
    assert json.loads(path.read_text()) == {"theme": "light"}


def test_reload_keeps_unsaved_changes_and_rereads(project: Path, agent_dir: Path) -> None:
    path = write(agent_dir / "settings.json", {"defaultModel": "a"})
    s = load_settings(project, agent_dir)
    write(path, {"defaultModel": "b"})
    s.reload()
    assert s.default_model == "b"


def test_resource_paths_resolve_against_their_file(project: Path, agent_dir: Path, isolated_home: Path) -> None:
    write(agent_dir / "settings.json", {"prompts": ["p", "~/x", 3]})
    write(project / ".pi" / "settings.json", {"prompts": ["/abs"]})
    s = load_settings(project, agent_dir)
    s.set_project_trusted(True)  # untrusted, a project path outside the project is left out (test_trust.py)
    assert s.resource_paths("prompts") == [Path("/abs"), agent_dir / "p", isolated_home / "x"]


def test_in_memory_and_pipeline_knobs() -> None:
    s = SettingsManager.in_memory({"context": {"strategy": "pipeline", "pipeline": {"variant": "cache-aware", "microKeepRecent": 5}}})
    p = s.pipeline_settings()
    assert (p.variant, p.micro_keep_recent, p.snip_max_groups) == ("cache-aware", 5, 50)
    assert s.set_global("theme", "x") is False and s.get("theme") == "x"


def test_set_rejects_wrong_types_for_known_keys(project: Path, agent_dir: Path) -> None:
    import pytest

    from pi_tui.core.errors import ConfigError

    s = load_settings(project, agent_dir)
    with pytest.raises(ConfigError, match=r"cannot set compaction\.reserveTokens: expected a non-negative integer, got str"):
        s.set_global("compaction.reserveTokens", "lots")
    with pytest.raises(ConfigError, match="not one of pi, pipeline"):
        s.set_project("context.strategy", "other")
    assert not (agent_dir / "settings.json").exists()
    assert s.compaction_settings().reserve_tokens == 16384
