"""pi's ``<agentDir>/models.json``: custom providers and model overrides (pi-behaviour.md §10.1, §14.4).

The file is shared with pi, so it is read exactly as pi reads it::

    {"providers": {"<name>": {"baseUrl", "api", "apiKey", "headers", "compat", "authHeader",
                              "models": [{"id", "name", "reasoning", "input", "cost",
                                          "contextWindow", "maxTokens", "headers", "compat",
                                          "thinkingLevelMap", "api", "baseUrl"}],
                              "modelOverrides": {"<modelId>": {...same fields, all optional}}}}}

A broken file never stops the program: every problem becomes a diagnostic naming the file, the
provider and the field, and the rest of the file still counts.
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pi_tui.core.provider import ModelCost

SUPPORTED_APIS = ("openai-completions", "openai-responses", "anthropic-messages", "google-generative-ai")

# pi's defaults for a custom model (§14.4)
DEFAULT_CONTEXT_WINDOW = 128_000
DEFAULT_MAX_TOKENS = 16_384


@dataclass(slots=True, kw_only=True)
class ModelDefinition:
    """One ``models[]`` entry or ``modelOverrides`` value, only what the file says (None = unset)."""

    id: str
    name: str | None = None
    api: str | None = None
    base_url: str | None = None
    reasoning: bool | None = None
    input: tuple[str, ...] | None = None
    cost: dict[str, float] | None = None
    context_window: int | None = None
    max_tokens: int | None = None
    headers: dict[str, str] = field(default_factory=dict)
    compat: dict[str, Any] = field(default_factory=dict)
    thinking_level_map: dict[str, str | None] = field(default_factory=dict)

    def model_cost(self) -> ModelCost:
        c = self.cost or {}
        return ModelCost(
            input=float(c.get("input", 0)),
            output=float(c.get("output", 0)),
            cache_read=float(c.get("cacheRead", 0)),
            cache_write=float(c.get("cacheWrite", 0)),
        )


@dataclass(slots=True, kw_only=True)
class ProviderConfig:
    name: str
    base_url: str | None = None
    api: str | None = None
    api_key: str | None = None
    """As written in the file; resolve with ``resolve_config_value``."""
    headers: dict[str, str] = field(default_factory=dict)
    compat: dict[str, Any] = field(default_factory=dict)
    auth_header: bool = False
    models: list[ModelDefinition] = field(default_factory=list)
    overrides: dict[str, ModelDefinition] = field(default_factory=dict)


@dataclass(slots=True)
class ModelsFile:
    path: Path | None
    providers: dict[str, ProviderConfig] = field(default_factory=dict)
    diagnostics: list[str] = field(default_factory=list)


def resolve_config_value(value: str | None, env: dict[str, str] | None = None) -> str | None:
    """pi's rule for ``apiKey`` and header values.

    ``!command`` runs the command and uses its trimmed stdout; ``$NAME``/``${NAME}`` or a bare
    ``NAME`` that is set in the environment uses that variable; anything else is the literal.
    """
    if value is None:
        return None
    environ = os.environ if env is None else env
    if value.startswith("!"):
        try:
            out = subprocess.run(value[1:], shell=True, capture_output=True, text=True, timeout=10, check=False)
        except (OSError, subprocess.SubprocessError):
            return None
        return out.stdout.strip() or None
    name = value[1:] if value.startswith("$") else value
    if name.startswith("{") and name.endswith("}"):
        name = name[1:-1]
    if environ.get(name):
        return environ[name]
    if value.startswith("$"):
        return None  # an explicit variable reference that is not set: no key
    return value


def load_models_file(path: Path | None) -> ModelsFile:
    """Parse ``models.json``; a missing file is simply empty."""
    result = ModelsFile(path)
    if path is None or not path.exists():
        return result
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as err:
        result.diagnostics.append(f"{path}: cannot read ({err.strerror})")
        return result
    except ValueError as err:
        result.diagnostics.append(f"{path}: invalid JSON ({err}); custom models are ignored")
        return result
    except RecursionError:  # valid JSON nested deeper than Python's parser can go
        result.diagnostics.append(f"{path}: invalid JSON (nested too deeply); custom models are ignored")
        return result
    providers = data.get("providers") if isinstance(data, dict) else None
    if not isinstance(providers, dict):
        result.diagnostics.append(f'{path}: expected an object with a "providers" object')
        return result
    for name, raw in providers.items():
        where = f'{path}: provider "{name}"'
        if not isinstance(raw, dict):
            result.diagnostics.append(f"{where} must be an object")
            continue
        config = _provider(name, raw, where, result.diagnostics)
        if config is not None:
            result.providers[name] = config
    return result


def _dict(value: Any) -> dict[str, Any]:
    return dict(value) if isinstance(value, dict) else {}


def _str_dict(value: Any, where: str, diagnostics: list[str]) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        diagnostics.append(f"{where} must be an object of strings")
        return {}
    return dict(value)


def _provider(name: str, raw: dict[str, Any], where: str, diagnostics: list[str]) -> ProviderConfig | None:
    api = raw.get("api")
    if api is not None and api not in SUPPORTED_APIS:
        diagnostics.append(f'{where}: "api" {api!r} is not supported (use {" or ".join(SUPPORTED_APIS)})')
        return None
    for key in ("baseUrl", "apiKey"):
        if raw.get(key) is not None and not isinstance(raw[key], str):
            diagnostics.append(f'{where}: "{key}" must be a string')
            return None
    config = ProviderConfig(
        name=name,
        base_url=raw.get("baseUrl"),
        api=api,
        api_key=raw.get("apiKey"),
        headers=_str_dict(raw.get("headers"), f'{where}: "headers"', diagnostics),
        compat=_dict(raw.get("compat")),
        auth_header=bool(raw.get("authHeader")),
    )
    models = raw.get("models", [])
    if not isinstance(models, list):
        diagnostics.append(f'{where}: "models" must be a list')
        models = []
    for i, entry in enumerate(models):
        model = _model(entry, f"{where} models[{i}]", diagnostics, require_id=True)
        if model is not None:
            config.models.append(model)
    if config.models and not config.base_url and not all(m.base_url for m in config.models):
        diagnostics.append(f'{where}: "baseUrl" is required when defining models')
        config.models = []
    overrides = raw.get("modelOverrides", {})
    if isinstance(overrides, dict):
        for model_id, entry in overrides.items():
            if isinstance(entry, dict):
                model = _model({**entry, "id": model_id}, f'{where} modelOverrides["{model_id}"]', diagnostics, require_id=True)
                if model is not None:
                    config.overrides[model_id] = model
    else:
        diagnostics.append(f'{where}: "modelOverrides" must be an object')
    return config


def _model(raw: Any, where: str, diagnostics: list[str], *, require_id: bool) -> ModelDefinition | None:
    if not isinstance(raw, dict):
        diagnostics.append(f"{where} must be an object")
        return None
    model_id = raw.get("id")
    if require_id and (not isinstance(model_id, str) or not model_id):
        diagnostics.append(f'{where}: "id" is required')
        return None
    numbers: dict[str, int | None] = {}
    for key in ("contextWindow", "maxTokens"):
        value = raw.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0):
            diagnostics.append(f'{where}: "{key}" must be a positive number')
            value = None
        numbers[key] = int(value) if value is not None else None
    cost = raw.get("cost")
    if cost is not None and not (isinstance(cost, dict) and all(isinstance(v, (int, float)) for v in cost.values())):
        diagnostics.append(f'{where}: "cost" must be an object of numbers')
        cost = None
    api = raw.get("api")
    if api is not None and api not in SUPPORTED_APIS:
        diagnostics.append(f'{where}: "api" {api!r} is not supported')
        api = None
    input_kinds = raw.get("input")
    return ModelDefinition(
        id=str(model_id),
        name=raw.get("name") if isinstance(raw.get("name"), str) else None,
        api=api,
        base_url=raw.get("baseUrl") if isinstance(raw.get("baseUrl"), str) else None,
        reasoning=bool(raw["reasoning"]) if "reasoning" in raw else None,
        input=tuple(str(k) for k in input_kinds) if isinstance(input_kinds, list) else None,
        cost=cost,
        context_window=numbers["contextWindow"],
        max_tokens=numbers["maxTokens"],
        headers=_str_dict(raw.get("headers"), f'{where}: "headers"', diagnostics),
        compat=_dict(raw.get("compat")),
        thinking_level_map=_dict(raw.get("thinkingLevelMap")),
    )
