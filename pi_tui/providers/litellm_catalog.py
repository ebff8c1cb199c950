"""litellm's bundled model catalog (context windows, output limits, prices), read without litellm.

``import litellm`` costs several seconds; resolving ``--model`` or drawing the context bar must
not. litellm ships its model map as a JSON file inside the package
(``model_prices_and_context_window_backup.json``, the same data ``litellm.get_model_info`` serves
with ``LITELLM_OFFLINE_MODE``). We locate it with ``importlib.util.find_spec`` (which does not
execute litellm) and parse it once (~40 ms).

This module and the two adapter modules are the only places that know litellm's layout.
"""

from __future__ import annotations

import importlib.util
import json
import os
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

_CATALOG_FILE = "model_prices_and_context_window_backup.json"


@dataclass(frozen=True, slots=True, kw_only=True)
class CatalogModel:
    """One chat model as litellm describes it. Prices are dollars per million tokens."""

    provider: str
    id: str
    context_window: int | None
    max_output: int | None
    reasoning: bool
    vision: bool
    input_price: float
    output_price: float
    cache_read_price: float
    cache_write_price: float

    @property
    def ref(self) -> str:
        return f"{self.provider}/{self.id}"


@cache
def litellm_package_dir() -> Path | None:
    """Where litellm is installed, found without importing it."""
    try:
        spec = importlib.util.find_spec("litellm")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def tokenizer_dir() -> Path | None:
    """litellm's bundled tiktoken files (cl100k_base, o200k_base, ...)."""
    root = litellm_package_dir()
    path = root / "litellm_core_utils" / "tokenizers" if root else None
    return path if path is not None and path.is_dir() else None


def point_tiktoken_at_bundled_files() -> None:
    """Set ``TIKTOKEN_CACHE_DIR`` to litellm's files so tiktoken never tries to download."""
    path = tokenizer_dir()
    if path is not None and not os.environ.get("TIKTOKEN_CACHE_DIR"):
        os.environ["TIKTOKEN_CACHE_DIR"] = str(path)


def _price(entry: dict[str, Any], key: str) -> float:
    value = entry.get(key)
    return float(value) * 1e6 if isinstance(value, (int, float)) else 0.0


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, (int, float)) and value > 0 else None


def _to_model(key: str, entry: dict[str, Any]) -> CatalogModel | None:
    provider = entry.get("litellm_provider")
    if entry.get("mode") != "chat" or not isinstance(provider, str):
        return None
    model_id = key[len(provider) + 1 :] if key.startswith(provider + "/") else key
    return CatalogModel(
        provider=provider,
        id=model_id,
        context_window=_int(entry.get("max_input_tokens")) or _int(entry.get("max_tokens")),
        max_output=_int(entry.get("max_output_tokens")),
        reasoning=bool(entry.get("supports_reasoning")),
        vision=bool(entry.get("supports_vision")),
        input_price=_price(entry, "input_cost_per_token"),
        output_price=_price(entry, "output_cost_per_token"),
        cache_read_price=_price(entry, "cache_read_input_token_cost"),
        cache_write_price=_price(entry, "cache_creation_input_token_cost"),
    )


@cache
def _load() -> tuple[dict[str, CatalogModel], dict[str, list[CatalogModel]]]:
    """(by ``provider/id``, by bare id) — empty when litellm or its file is missing."""
    root = litellm_package_dir()
    by_ref: dict[str, CatalogModel] = {}
    by_id: dict[str, list[CatalogModel]] = {}
    if root is None:
        return by_ref, by_id
    try:
        raw = json.loads((root / _CATALOG_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return by_ref, by_id
    for key, entry in raw.items():
        if not isinstance(entry, dict):
            continue
        model = _to_model(key, entry)
        if model is None or model.ref in by_ref:
            continue
        by_ref[model.ref] = model
        same_id = by_id.setdefault(model.id, [])
        # litellm's canonical entry for a bare id is the one keyed without a provider prefix
        # ("gpt-4o" is OpenAI's, "azure/gpt-4o" is not what a bare "gpt-4o" means).
        if key == model.id:
            same_id.insert(0, model)
        else:
            same_id.append(model)
    return by_ref, by_id


def lookup(provider: str | None, model_id: str) -> CatalogModel | None:
    """The catalog entry for ``provider/id``; with no provider, the first model of that id."""
    by_ref, by_id = _load()
    if provider:
        return by_ref.get(f"{provider}/{model_id}")
    candidates = by_id.get(model_id)
    return candidates[0] if candidates else None


def all_models() -> list[CatalogModel]:
    return list(_load()[0].values())


def known_providers() -> set[str]:
    """Provider prefixes litellm understands (from the catalog, plus a few catalog-less ones)."""
    providers = {m.provider for m in all_models()}
    providers.update(COMMON_PROVIDERS)
    return providers


COMMON_PROVIDERS = (
    "openai",
    "anthropic",
    "ollama",
    "ollama_chat",
    "hosted_vllm",
    "lm_studio",
    "llamafile",
    "openrouter",
    "azure",
    "gemini",
    "vertex_ai",
    "bedrock",
    "groq",
    "mistral",
    "deepseek",
    "xai",
    "together_ai",
    "fireworks_ai",
    "cerebras",
    "litellm_proxy",
    "custom_openai",
)
