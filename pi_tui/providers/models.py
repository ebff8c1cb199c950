"""Which model a reference means, what it can do, and which key it uses.

Two sources of models, one naming scheme (``provider/id``):

* **models.json providers** (pi's custom providers, ``providers/models_json.py``): the fake server,
  a local vLLM, a proxy... Their models are listed in the file; ``litellm_model`` becomes
  ``openai/<id>`` or ``anthropic/<id>`` with the provider's ``baseUrl``.
* **litellm's providers** (``anthropic/claude-sonnet-4-5``, ``openai/gpt-4o``, ``ollama/qwen3``):
  anything litellm can call. Context window, output limit and prices come from litellm's bundled
  catalog (read without importing litellm, ``litellm_catalog.py``). A models.json entry with the
  same provider name can override their ``baseUrl``, ``apiKey``, ``headers`` and, per model,
  anything via ``modelOverrides``.

The context window comes from models.json, else litellm's catalog, else pi's 128,000 default, and
``ModelInfo.context_window_source`` says which, so the UI can flag a guessed window.

No model or no key is a ``ProviderSetupError`` whose text says exactly what to set.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from pi_tui.core.errors import ProviderSetupError
from pi_tui.core.messages import THINKING_LEVELS, ThinkingLevel
from pi_tui.core.provider import ModelCost, ModelInfo
from pi_tui.providers import litellm_catalog
from pi_tui.providers.anthropic_models import builtin_model as builtin_anthropic_model
from pi_tui.providers.models_json import (
    DEFAULT_CONTEXT_WINDOW,
    DEFAULT_MAX_TOKENS,
    ModelDefinition,
    ModelsFile,
    ProviderConfig,
    load_models_file,
    resolve_config_value,
)
from pi_tui.providers.openai_compat import merge_compat
from pi_tui.providers.pi_catalog import builtin_model as builtin_pi_model
from pi_tui.providers.routing import BUILTIN_APIS

ENV_KEYS: dict[str, tuple[str, ...]] = {
    "openai": ("OPENAI_API_KEY",),
    "anthropic": ("ANTHROPIC_API_KEY", "ANTHROPIC_OAUTH_TOKEN"),
    "gemini": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    "google": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    "openrouter": ("OPENROUTER_API_KEY",),
    "groq": ("GROQ_API_KEY",),
    "xai": ("XAI_API_KEY",),
    "mistral": ("MISTRAL_API_KEY",),
    "deepseek": ("DEEPSEEK_API_KEY",),
    "cerebras": ("CEREBRAS_API_KEY",),
    "together_ai": ("TOGETHERAI_API_KEY", "TOGETHER_API_KEY"),
    "fireworks_ai": ("FIREWORKS_AI_API_KEY", "FIREWORKS_API_KEY"),
    "azure": ("AZURE_API_KEY", "AZURE_OPENAI_API_KEY"),
    "zai": ("ZAI_API_KEY",),
    "moonshot": ("MOONSHOT_API_KEY",),
    "perplexity": ("PERPLEXITYAI_API_KEY",),
    "cohere_chat": ("COHERE_API_KEY",),
    "litellm_proxy": ("LITELLM_PROXY_API_KEY",),
}
"""The usual environment variables, per litellm provider (first set one wins)."""

KEYLESS_PROVIDERS = frozenset(
    {"ollama", "ollama_chat", "hosted_vllm", "lm_studio", "llamafile", "vertex_ai", "bedrock", "sagemaker"}
)
"""Providers that authenticate another way (local servers, cloud credentials)."""

DEFAULT_MODELS: tuple[tuple[str, str], ...] = (
    ("anthropic", "claude-sonnet-4-5"),
    ("openai", "gpt-4o"),
    ("gemini", "gemini-2.5-pro"),
    ("openrouter", "anthropic/claude-sonnet-4.5"),
)
"""What to pick when nothing is configured but a provider key is in the environment."""

SETUP_HELP = (
    "Set one of:\n"
    "  --model provider/id          e.g. --model anthropic/claude-sonnet-4-5 or openai/gpt-4o\n"
    '  settings.json                "defaultProvider" and "defaultModel" in {agent_dir}\n'
    "  models.json                  a custom provider in {models_json} (see docs/models.md)\n"
    "and the provider's key (ANTHROPIC_API_KEY, OPENAI_API_KEY, ...) or --api-key."
)


CATALOG_PROVIDERS = {"google": "gemini"}
"""pi's names for providers litellm's catalog knows by another (``google/gemini-2.5-pro`` is
litellm's ``gemini/gemini-2.5-pro``)."""

LITELLM_PREFIX_FOR_API = {"anthropic-messages": "anthropic", "google-generative-ai": "gemini"}
"""How litellm is told the wire of a models.json provider (with its ``baseUrl`` as ``api_base``)."""



def parse_model_ref(ref: str) -> tuple[str, ThinkingLevel | None]:
    """Split an optional ``:thinking`` suffix off a ``--model`` value (``openai/gpt-4o:high``)."""
    head, sep, tail = ref.rpartition(":")
    if sep and tail in THINKING_LEVELS:
        return head, tail
    return ref, None


class ModelRegistry:
    """Models from ``models.json`` and litellm's catalog, resolved by ``provider/id``."""

    def __init__(self, models_json: Path | None = None, *, env: Mapping[str, str] | None = None) -> None:
        self.models_json = models_json
        self._env: Mapping[str, str] = os.environ if env is None else env
        self._file: ModelsFile = load_models_file(models_json)

    @classmethod
    def for_agent_dir(cls, agent_dir: Path, *, env: Mapping[str, str] | None = None) -> ModelRegistry:
        return cls(agent_dir / "models.json", env=env)

    @property
    def diagnostics(self) -> list[str]:
        """Problems found in models.json (each names the file, provider and field)."""
        return list(self._file.diagnostics)

    @property
    def providers(self) -> dict[str, ProviderConfig]:
        return dict(self._file.providers)

    # ------------------------------------------------------------------ resolution

    def custom_models(self) -> list[ModelInfo]:
        """Every ``models[]`` entry of models.json, in file order."""
        return [self._custom(p, d) for p in self._file.providers.values() for d in p.models]

    def resolve(self, ref: str, provider: str | None = None) -> ModelInfo:
        """The model a ``--model`` value (and optional ``--provider``) names.

        Accepts ``provider/id`` (models.json or litellm naming), a bare models.json id, or a bare
        id litellm knows (``gpt-4o``). A ``:thinking`` suffix is ignored here (``parse_model_ref``).
        """
        ref, _ = parse_model_ref(ref.strip())
        if not ref:
            raise ProviderSetupError("Empty model reference. " + self._help())
        if provider:
            model_id = ref[len(provider) + 1 :] if ref.startswith(provider + "/") else ref
            return self._resolve_in(provider, model_id, ref)
        head, sep, rest = ref.partition("/")
        if sep and head in self._file.providers:
            found = self._find_custom(head, rest)
            if found is not None:
                return found
        for config in self._file.providers.values():
            for definition in config.models:
                if definition.id == ref:
                    return self._custom(config, definition)
        if sep:
            return self._resolve_in(head, rest, ref)
        known = litellm_catalog.lookup(None, ref)
        if known is not None:
            return self._builtin(known.provider, known.id)
        raise ProviderSetupError(
            f"Unknown model '{ref}': not in {self._models_json_text()} and not a model litellm knows. "
            "Use provider/id in litellm naming (e.g. openai/gpt-4o, anthropic/claude-sonnet-4-5, ollama/qwen3), "
            "or run --list-models to see the configured ones."
        )

    def initial_model(
        self,
        model: str | None = None,
        provider: str | None = None,
        *,
        default_provider: str | None = None,
        default_model: str | None = None,
    ) -> ModelInfo:
        """The model to start with: ``--model``/``--provider``, else settings' defaults, else the
        first models.json model, else a default of a provider whose key is set."""
        if model:
            return self.resolve(model, provider)
        if default_model:
            return self.resolve(default_model, default_provider)
        custom = self.custom_models()
        if provider:
            for info in custom:
                if info.provider == provider:
                    return info
        elif custom:
            return custom[0]
        for name, model_id in DEFAULT_MODELS:
            if provider not in (None, name):
                continue
            if any(self._env.get(var) for var in ENV_KEYS.get(name, ())):
                return self._builtin(name, model_id)
        raise ProviderSetupError("No model selected.\n\n" + self._help())

    def _resolve_in(self, provider: str, model_id: str, ref: str) -> ModelInfo:
        config = self._file.providers.get(provider)
        if config is not None:
            found = self._find_custom(provider, model_id)
            if found is not None:
                return found
            if config.models and provider not in litellm_catalog.known_providers():
                ids = ", ".join(d.id for d in config.models)
                raise ProviderSetupError(
                    f"Unknown model '{model_id}' for provider '{provider}' in {self._models_json_text()} "
                    f"(it defines: {ids})."
                )
        if config is None and provider not in litellm_catalog.known_providers() and provider not in CATALOG_PROVIDERS:
            custom = ", ".join(self._file.providers) or "none"
            # A provider the file defines but that was left out for a bad value: say why.
            problems = [d.split(": ", 1)[-1] for d in self._file.diagnostics if f'provider "{provider}"' in d]
            why = f"; left out of it: {'; '.join(problems)}" if problems else ""
            raise ProviderSetupError(
                f"Unknown provider '{provider}' in model '{ref}'. Use a litellm provider "
                "(anthropic, openai, gemini, openrouter, ollama, ...) or define it in "
                f"{self._models_json_text()} (custom providers there: {custom}{why})."
            )
        return self._builtin(provider, model_id)

    def _find_custom(self, provider: str, model_id: str) -> ModelInfo | None:
        config = self._file.providers.get(provider)
        if config is None:
            return None
        for definition in config.models:
            if definition.id == model_id:
                return self._custom(config, definition)
        return None

    def _custom(self, config: ProviderConfig, definition: ModelDefinition) -> ModelInfo:
        api = definition.api or config.api or "openai-completions"
        prefix = LITELLM_PREFIX_FOR_API.get(api, "openai")
        known = litellm_catalog.lookup(None, definition.id) if definition.context_window is None else None
        if definition.context_window is not None:
            window, source = definition.context_window, "models.json"
        elif known is not None and known.context_window:
            window, source = known.context_window, "litellm"
        else:
            window, source = DEFAULT_CONTEXT_WINDOW, "default"
        return ModelInfo(
            provider=config.name,
            id=definition.id,
            name=definition.name or definition.id,
            api=api,
            litellm_model=f"{prefix}/{definition.id}",
            base_url=definition.base_url or config.base_url,
            context_window=window,
            context_window_source=source,  # type: ignore[arg-type]
            max_tokens=definition.max_tokens or DEFAULT_MAX_TOKENS,
            reasoning=bool(definition.reasoning),
            input=definition.input or ("text",),
            cost=definition.model_cost(),
            headers=self._resolved_headers({**config.headers, **definition.headers}),
            compat=merge_compat(config.compat, definition.compat),
            thinking_level_map=dict(definition.thinking_level_map),
        )

    def _builtin(self, provider: str, model_id: str) -> ModelInfo:
        catalog = CATALOG_PROVIDERS.get(provider, provider)
        known = litellm_catalog.lookup(catalog, model_id)
        config = self._file.providers.get(provider)
        info = ModelInfo(
            provider=provider,
            id=model_id,
            name=model_id,
            api=BUILTIN_APIS.get(provider, "openai-completions"),
            litellm_model=f"{catalog}/{model_id}",
            base_url=config.base_url if config else None,
            context_window=(known.context_window if known and known.context_window else DEFAULT_CONTEXT_WINDOW),
            context_window_source="litellm" if known and known.context_window else "default",
            max_tokens=(known.max_output if known and known.max_output else DEFAULT_MAX_TOKENS),
            reasoning=bool(known and known.reasoning),
            input=("text", "image") if known and known.vision else ("text",),
            cost=ModelCost(
                input=known.input_price, output=known.output_price,
                cache_read=known.cache_read_price, cache_write=known.cache_write_price,
            ) if known else ModelCost(),
            headers=self._resolved_headers(config.headers) if config else {},
            compat=dict(config.compat) if config else {},
        )
        pi_builtin = builtin_anthropic_model(model_id) if provider == "anthropic" else builtin_pi_model(provider, model_id)
        if pi_builtin is not None:
            # pi's own numbers for its built-in providers (anthropic_models.py, pi_catalog.py), not litellm's
            info = replace(pi_builtin, base_url=info.base_url, headers=info.headers, compat=info.compat)
        override = config.overrides.get(model_id) if config else None
        return _apply_override(info, override) if override else info

    def _resolved_headers(self, headers: dict[str, str]) -> dict[str, str]:
        """Header values follow the apiKey rule (literal, env var name, ``!command``)."""
        return {k: resolve_config_value(v, dict(self._env)) or v for k, v in headers.items()}

    # ------------------------------------------------------------------ keys

    def api_key_for(self, model: ModelInfo, override: str | None = None) -> str | None:
        """``--api-key``, else the models.json ``apiKey`` (pi's ``!cmd``/env/literal rule), else
        the provider's usual environment variable. None when nothing is set."""
        if override:
            return override
        config = self._file.providers.get(model.provider)
        if config is not None and config.api_key:
            value = resolve_config_value(config.api_key, dict(self._env))
            if value:
                return value
        for var in ENV_KEYS.get(model.provider, ()):
            if self._env.get(var):
                return self._env[var]
        return None

    def needs_api_key(self, model: ModelInfo) -> bool:
        return model.provider in self._file.providers or model.provider not in KEYLESS_PROVIDERS

    def require_api_key(self, model: ModelInfo, override: str | None = None) -> str | None:
        """The key to use, or a ``ProviderSetupError`` saying where to put one."""
        key = self.api_key_for(model, override)
        if key or not self.needs_api_key(model):
            return key
        config = self._file.providers.get(model.provider)
        lines = [f"No API key found for {model.provider}.", ""]
        if config is not None and config.api_key:
            lines.append(f'The "apiKey" of provider "{model.provider}" in {self._models_json_text()} resolved to nothing '
                         f"({config.api_key!r} is an unset environment variable or a failing command).")
        elif config is not None:
            lines.append(f'Add "apiKey" to provider "{model.provider}" in {self._models_json_text()} '
                         '(a literal, an environment variable name, or "!command"), or pass --api-key.')
        else:
            env = " or ".join(ENV_KEYS.get(model.provider, (f"{model.provider.upper()}_API_KEY",)))
            lines.append(f"Set {env}, or pass --api-key, or add \"apiKey\" for provider \"{model.provider}\" "
                         f"in {self._models_json_text()}.")
        raise ProviderSetupError("\n".join(lines))

    # ------------------------------------------------------------------ listing

    def list_models(self, search: str = "", *, include_unavailable: bool = False) -> list[ModelInfo]:
        """models.json models first, then litellm's chat models of providers with a key set
        (all of them with ``include_unavailable``); filtered by a case-insensitive substring
        of ``provider/id`` or name (every word of ``search`` must match)."""
        words = search.lower().split()

        def wanted(info: ModelInfo) -> bool:
            hay = f"{info.provider}/{info.id} {info.name}".lower()
            return all(w in hay for w in words)

        found = [m for m in self.custom_models() if wanted(m)]
        seen = {m.ref for m in found}
        for entry in sorted(litellm_catalog.all_models(), key=lambda m: (m.provider, m.id)):
            if entry.ref in seen:
                continue
            if not include_unavailable and not self._has_credentials(entry.provider):
                continue
            info = self._builtin(entry.provider, entry.id)
            if wanted(info):
                found.append(info)
                seen.add(info.ref)
        return found

    def _has_credentials(self, provider: str) -> bool:
        config = self._file.providers.get(provider)
        if config is not None and config.api_key and resolve_config_value(config.api_key, dict(self._env)):
            return True
        return any(self._env.get(var) for var in ENV_KEYS.get(provider, ()))

    def _models_json_text(self) -> str:
        return str(self.models_json) if self.models_json else "models.json"

    def setup_help(self) -> str:
        """What to set to get a model and a key (the ``<help>`` of pi's auth messages)."""
        agent = str(self.models_json.parent) if self.models_json else "the agent dir"
        return SETUP_HELP.format(agent_dir=agent, models_json=self._models_json_text())

    _help = setup_help


def _apply_override(info: ModelInfo, override: ModelDefinition) -> ModelInfo:
    changes: dict[str, object] = {}
    if override.name is not None:
        changes["name"] = override.name
    if override.reasoning is not None:
        changes["reasoning"] = override.reasoning
    if override.input is not None:
        changes["input"] = override.input
    if override.context_window is not None:
        changes["context_window"] = override.context_window
        changes["context_window_source"] = "models.json"
    if override.max_tokens is not None:
        changes["max_tokens"] = override.max_tokens
    if override.cost is not None:
        c = override.cost
        base = info.cost
        changes["cost"] = ModelCost(
            input=float(c.get("input", base.input)),
            output=float(c.get("output", base.output)),
            cache_read=float(c.get("cacheRead", base.cache_read)),
            cache_write=float(c.get("cacheWrite", base.cache_write)),
        )
    if override.headers:
        changes["headers"] = {**info.headers, **override.headers}
    if override.compat:
        changes["compat"] = merge_compat(info.compat, override.compat)
    if override.thinking_level_map:
        changes["thinking_level_map"] = dict(override.thinking_level_map)
    return replace(info, **changes)  # type: ignore[arg-type]
