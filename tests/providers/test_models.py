"""models.json parsing, model resolution, keys and setup messages (§10.1, §13.2, §14.4)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pi_tui.core.errors import ProviderSetupError
from pi_tui.providers.models import ModelRegistry, parse_model_ref
from pi_tui.providers.models_json import resolve_config_value


def _write(agent_dir: Path, providers: dict[str, Any]) -> Path:
    path = agent_dir / "models.json"
    path.write_text(json.dumps({"providers": providers}), encoding="utf-8")
    return path


FAKE = {
    "baseUrl": "http://127.0.0.1:9/v1",
    "api": "openai-completions",
    "apiKey": "fake-key",
    "headers": {"X-Team": "core"},
    "compat": {"supportsDeveloperRole": False},
    "models": [
        {"id": "fake-model", "contextWindow": 8192, "maxTokens": 1000, "cost": {"input": 3, "output": 15}},
        {"id": "bare"},
        {"id": "vision", "input": ["text", "image"], "reasoning": True, "compat": {"supportsDeveloperRole": True}},
    ],
}


def test_custom_model_keeps_models_json_values(agent_dir: Path) -> None:
    registry = ModelRegistry.for_agent_dir(agent_dir, env={})
    _write(agent_dir, {"fake": FAKE})
    registry = ModelRegistry.for_agent_dir(agent_dir, env={})
    model = registry.resolve("fake/fake-model")
    assert (model.provider, model.id, model.api) == ("fake", "fake-model", "openai-completions")
    assert model.litellm_model == "openai/fake-model"
    assert model.base_url == "http://127.0.0.1:9/v1"
    assert (model.context_window, model.context_window_source, model.max_tokens) == (8192, "models.json", 1000)
    assert (model.cost.input, model.cost.output) == (3.0, 15.0)
    assert model.headers == {"X-Team": "core"}
    assert model.compat == {"supportsDeveloperRole": False}


def test_custom_model_defaults_are_pis(agent_dir: Path) -> None:
    _write(agent_dir, {"fake": FAKE})
    model = ModelRegistry.for_agent_dir(agent_dir, env={}).resolve("fake/bare")
    assert model.name == "bare"
    assert model.reasoning is False
    assert model.input == ("text",)
    assert (model.context_window, model.context_window_source) == (128_000, "default")
    assert model.max_tokens == 16_384
    assert model.cost.input == model.cost.output == 0


def test_model_compat_overrides_provider_compat(agent_dir: Path) -> None:
    _write(agent_dir, {"fake": FAKE})
    model = ModelRegistry.for_agent_dir(agent_dir, env={}).resolve("fake/vision")
    assert model.compat == {"supportsDeveloperRole": True}
    assert model.supports_images and model.reasoning


def test_bare_custom_id_and_provider_flag_resolve(agent_dir: Path) -> None:
    _write(agent_dir, {"fake": FAKE})
    registry = ModelRegistry.for_agent_dir(agent_dir, env={})
    assert registry.resolve("fake-model").ref == "fake/fake-model"
    assert registry.resolve("fake-model", "fake").ref == "fake/fake-model"
    assert registry.resolve("fake/fake-model", "fake").ref == "fake/fake-model"


def test_anthropic_messages_provider_uses_litellms_anthropic_route(agent_dir: Path) -> None:
    _write(agent_dir, {"proxy": {"baseUrl": "http://127.0.0.1:9", "api": "anthropic-messages", "apiKey": "k",
                                 "models": [{"id": "claude-x"}]}})
    model = ModelRegistry.for_agent_dir(agent_dir, env={}).resolve("proxy/claude-x")
    assert model.api == "anthropic-messages"
    assert model.litellm_model == "anthropic/claude-x"


def test_litellm_naming_uses_litellms_catalog() -> None:
    registry = ModelRegistry(None, env={})
    claude = registry.resolve("anthropic/claude-sonnet-4-5")
    assert claude.provider == "anthropic" and claude.api == "anthropic-messages"
    assert claude.litellm_model == "anthropic/claude-sonnet-4-5"
    assert (claude.context_window, claude.context_window_source) == (200_000, "builtin")  # pi's own table
    assert claude.cost.input == pytest.approx(3.0) and claude.cost.output == pytest.approx(15.0)
    gpt = registry.resolve("openai/gpt-4o-mini-2024-07-18")  # pi has no such built-in model: litellm's numbers
    assert gpt.context_window == 128_000 and gpt.context_window_source == "litellm" and gpt.supports_images
    assert registry.resolve("gpt-4o").ref == "openai/gpt-4o"


def test_anthropic_models_use_pis_own_numbers_and_models_json_still_overrides(tmp_path: Path) -> None:
    """§15.10: litellm's catalog lacks claude-3-5-haiku and gives sonnet-4-6 another output limit;
    pi's numbers decide max_tokens and the thinking budget on the wire."""
    registry = ModelRegistry(None, env={})
    haiku = registry.resolve("anthropic/claude-3-5-haiku-20241022")
    assert (haiku.max_tokens, haiku.reasoning, haiku.cost.input, haiku.cost.cache_write) == (8192, False, 0.8, 1)
    assert registry.resolve("anthropic/claude-sonnet-4-6").max_tokens == 64000
    assert registry.resolve("anthropic/claude-opus-4-6").thinking_level_map == {"xhigh": "max"}
    path = tmp_path / "models.json"
    path.write_text(json.dumps({"providers": {"anthropic": {
        "baseUrl": "http://127.0.0.1:9", "headers": {"x-proxy": "1"},
        "modelOverrides": {"claude-sonnet-4-5": {"maxTokens": 1000}}}}}))
    custom = ModelRegistry(path, env={}).resolve("anthropic/claude-sonnet-4-5")
    assert (custom.base_url, custom.headers, custom.max_tokens, custom.cost.cache_read) == ("http://127.0.0.1:9", {"x-proxy": "1"}, 1000, 0.3)


def test_unknown_model_of_a_known_provider_reports_the_default_window() -> None:
    model = ModelRegistry(None, env={}).resolve("ollama/my-local-finetune")
    assert model.litellm_model == "ollama/my-local-finetune"
    assert (model.context_window, model.context_window_source) == (128_000, "default")


def test_model_overrides_merge_into_builtin_models(agent_dir: Path) -> None:
    _write(agent_dir, {"openai": {"baseUrl": "http://127.0.0.1:9/v1", "headers": {"X-A": "1"},
                                  "modelOverrides": {"gpt-4o": {"contextWindow": 64000, "cost": {"input": 1}}}}})
    model = ModelRegistry.for_agent_dir(agent_dir, env={}).resolve("openai/gpt-4o")
    assert (model.context_window, model.context_window_source) == (64_000, "models.json")
    assert model.cost.input == 1.0 and model.cost.output == pytest.approx(10.0)  # untouched prices stay litellm's
    assert model.base_url == "http://127.0.0.1:9/v1" and model.headers == {"X-A": "1"}


def test_thinking_suffix_is_split_off() -> None:
    assert parse_model_ref("openai/gpt-4o:high") == ("openai/gpt-4o", "high")
    assert parse_model_ref("ollama/qwen3:8b") == ("ollama/qwen3:8b", None)
    assert ModelRegistry(None, env={}).resolve("openai/gpt-4o:high").id == "gpt-4o"


def test_unknown_provider_and_model_say_what_to_do(agent_dir: Path) -> None:
    _write(agent_dir, {"fake": FAKE})
    registry = ModelRegistry.for_agent_dir(agent_dir, env={})
    with pytest.raises(ProviderSetupError, match=r"Unknown provider 'nope' in model 'nope/x'.*models\.json.*fake"):
        registry.resolve("nope/x")
    with pytest.raises(ProviderSetupError, match=r"Unknown model 'missing' for provider 'fake'.*fake-model, bare, vision"):
        registry.resolve("fake/missing")
    with pytest.raises(ProviderSetupError, match=r"Unknown model 'no-such-model'.*--list-models"):
        registry.resolve("no-such-model")


def test_no_model_configured_message_names_every_option(agent_dir: Path) -> None:
    registry = ModelRegistry.for_agent_dir(agent_dir, env={})
    with pytest.raises(ProviderSetupError) as info:
        registry.initial_model()
    text = str(info.value)
    assert text.startswith("No model selected.")
    for needle in ("--model", "defaultProvider", "defaultModel", str(agent_dir / "models.json"), "ANTHROPIC_API_KEY", "--api-key"):
        assert needle in text


def test_initial_model_precedence(agent_dir: Path) -> None:
    _write(agent_dir, {"fake": FAKE})
    registry = ModelRegistry.for_agent_dir(agent_dir, env={"OPENAI_API_KEY": "sk"})
    assert registry.initial_model().ref == "fake/fake-model"  # first models.json model
    assert registry.initial_model(default_provider="fake", default_model="bare").ref == "fake/bare"
    assert registry.initial_model("openai/gpt-4o", default_provider="fake", default_model="bare").ref == "openai/gpt-4o"
    assert ModelRegistry(None, env={"OPENAI_API_KEY": "sk"}).initial_model().ref == "openai/gpt-4o"


def test_api_key_sources(agent_dir: Path) -> None:
    _write(agent_dir, {
        "lit": {**FAKE, "apiKey": "literal-key"},
        "byname": {**FAKE, "apiKey": "MY_KEY"},
        "dollar": {**FAKE, "apiKey": "$MY_KEY"},
        "cmd": {**FAKE, "apiKey": "!echo from-command"},
        "unset": {**FAKE, "apiKey": "$NOT_SET_ANYWHERE"},
    })
    registry = ModelRegistry.for_agent_dir(agent_dir, env={"MY_KEY": "from-env", "OPENAI_API_KEY": "sk-env"})
    key = {name: registry.api_key_for(registry.resolve(f"{name}/fake-model")) for name in ("lit", "byname", "dollar", "cmd", "unset")}
    assert key == {"lit": "literal-key", "byname": "from-env", "dollar": "from-env", "cmd": "from-command", "unset": None}
    gpt = registry.resolve("openai/gpt-4o")
    assert registry.api_key_for(gpt) == "sk-env"
    assert registry.api_key_for(gpt, "from-flag") == "from-flag"


def test_missing_key_messages_say_exactly_what_to_set(agent_dir: Path) -> None:
    _write(agent_dir, {"nokey": {k: v for k, v in FAKE.items() if k != "apiKey"}, "unset": {**FAKE, "apiKey": "$NOPE"}})
    registry = ModelRegistry.for_agent_dir(agent_dir, env={})
    with pytest.raises(ProviderSetupError, match=r"(?s)No API key found for anthropic\..*Set ANTHROPIC_API_KEY.*--api-key"):
        registry.require_api_key(registry.resolve("anthropic/claude-sonnet-4-5"))
    with pytest.raises(ProviderSetupError, match=r'(?s)No API key found for nokey\..*Add "apiKey" to provider "nokey"'):
        registry.require_api_key(registry.resolve("nokey/fake-model"))
    with pytest.raises(ProviderSetupError, match=r"'\$NOPE' is an unset environment variable"):
        registry.require_api_key(registry.resolve("unset/fake-model"))
    assert registry.require_api_key(registry.resolve("ollama/llama3")) is None  # local: no key needed


def test_broken_models_json_becomes_diagnostics_not_a_crash(agent_dir: Path) -> None:
    path = agent_dir / "models.json"
    path.write_text("{not json", encoding="utf-8")
    registry = ModelRegistry.for_agent_dir(agent_dir, env={})
    assert registry.custom_models() == []
    assert "invalid JSON" in registry.diagnostics[0] and str(path) in registry.diagnostics[0]
    _write(agent_dir, {
        "bad-api": {**FAKE, "api": "bedrock-converse-stream"},
        "good": {**FAKE, "models": [{"name": "no id"}, {"id": "ok", "contextWindow": "big"}]},
    })
    registry = ModelRegistry.for_agent_dir(agent_dir, env={})
    assert [m.ref for m in registry.custom_models()] == ["good/ok"]
    text = "\n".join(registry.diagnostics)
    assert 'provider "bad-api": "api" \'bedrock-converse-stream\' is not supported' in text
    assert 'provider "good" models[0]: "id" is required' in text
    assert 'provider "good" models[1]: "contextWindow" must be a positive number' in text


def test_list_models_puts_models_json_first_and_filters(agent_dir: Path) -> None:
    _write(agent_dir, {"fake": FAKE})
    registry = ModelRegistry.for_agent_dir(agent_dir, env={"OPENAI_API_KEY": "sk"})
    refs = [m.ref for m in registry.list_models()]
    assert refs[:3] == ["fake/fake-model", "fake/bare", "fake/vision"]
    assert "openai/gpt-4o" in refs
    assert not any(r.startswith("anthropic/") for r in refs)  # no key, not listed
    assert [m.ref for m in registry.list_models("fake vision")] == ["fake/vision"]
    assert "anthropic/claude-sonnet-4-5" in [m.ref for m in registry.list_models("claude-sonnet-4-5", include_unavailable=True)]


def test_resolve_config_value_rules() -> None:
    env = {"A": "from-a"}
    assert resolve_config_value("A", env) == "from-a"
    assert resolve_config_value("${A}", env) == "from-a"
    assert resolve_config_value("plain-literal", env) == "plain-literal"
    assert resolve_config_value("!printf ' x '", env) == "x"
    assert resolve_config_value("!exit 3", env) is None


def test_a_provider_dropped_for_a_bad_value_is_named_with_its_problem(agent_dir: Path) -> None:
    """A provider models.json defines with a wrong type is left out (with a diagnostic); asking
    for its model said only 'custom providers there: none', hiding why."""
    _write(agent_dir, {"mine": {**FAKE, "baseUrl": 5}})
    registry = ModelRegistry.for_agent_dir(agent_dir, env={})
    with pytest.raises(ProviderSetupError, match=r'Unknown provider \'mine\'.*provider "mine": "baseUrl" must be a string'):
        registry.resolve("mine/fake-model")
