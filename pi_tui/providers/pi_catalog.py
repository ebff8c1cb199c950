"""pi 0.73.1's built-in ``google`` and ``openai`` models: which think, their ``thinkingLevelMap``,
windows, output limits and prices (the ``anthropic`` ones are ``anthropic_models.py``).

Why our own table and not litellm's catalog: the level map decides the request, and litellm has
none. pi clamps the session's thinking level with it (§15.1): ``off`` on the gpt-5 family
(``off: null``) becomes ``minimal`` — without the map pi-tui sent ``reasoning.effort: "none"``,
which those models refuse — and on gemini-3-pro (``off``/``minimal``/``medium`` unsupported)
``off`` becomes ``low`` and ``medium`` ``high``. litellm also calls gemini-3-pro-preview a model
that does not think, so it got no ``thinkingConfig`` at all. Same numbers as pi means the same
requests and the same recorded cost. Models missing here fall back to litellm's catalog.
"""

from __future__ import annotations

from pi_tui.core.provider import ModelCost, ModelInfo

_PROVIDERS = {"google": ("google-generative-ai", "gemini"), "openai": ("openai-responses", "openai")}
"""pi's provider → (its api, litellm's prefix for the same models)."""


def _m(model_id: str, name: str, reasoning: bool, cost: tuple[float, float, float, float], window: int, max_tokens: int,
       level_map: dict[str, str | None] | None = None, *, text_only: bool = False) -> tuple[str, ModelInfo]:
    return model_id, ModelInfo(
        provider="", id=model_id, name=name, context_window=window, context_window_source="builtin", max_tokens=max_tokens,
        reasoning=reasoning, input=("text",) if text_only else ("text", "image"),
        cost=ModelCost(input=cost[0], output=cost[1], cache_read=cost[2], cache_write=cost[3]),
        thinking_level_map=dict(level_map or {}),
    )


_GOOGLE = dict((
    _m("gemini-1.5-flash", "Gemini 1.5 Flash", False, (0.075, 0.3, 0.01875, 0), 1000000, 8192),
    _m("gemini-1.5-flash-8b", "Gemini 1.5 Flash-8B", False, (0.0375, 0.15, 0.01, 0), 1000000, 8192),
    _m("gemini-1.5-pro", "Gemini 1.5 Pro", False, (1.25, 5, 0.3125, 0), 1000000, 8192),
    _m("gemini-2.0-flash", "Gemini 2.0 Flash", False, (0.1, 0.4, 0.025, 0), 1048576, 8192),
    _m("gemini-2.0-flash-lite", "Gemini 2.0 Flash Lite", False, (0.075, 0.3, 0, 0), 1048576, 8192),
    _m("gemini-2.5-flash", "Gemini 2.5 Flash", True, (0.3, 2.5, 0.03, 0), 1048576, 65536),
    _m("gemini-2.5-flash-lite", "Gemini 2.5 Flash Lite", True, (0.1, 0.4, 0.025, 0), 1048576, 65536),
    _m("gemini-2.5-flash-lite-preview-06-17", "Gemini 2.5 Flash Lite Preview 06-17", True, (0.1, 0.4, 0.025, 0), 1048576, 65536),
    _m("gemini-2.5-flash-lite-preview-09-2025", "Gemini 2.5 Flash Lite Preview 09-25", True, (0.1, 0.4, 0.025, 0), 1048576, 65536),
    _m("gemini-2.5-flash-preview-04-17", "Gemini 2.5 Flash Preview 04-17", True, (0.15, 0.6, 0.0375, 0), 1048576, 65536),
    _m("gemini-2.5-flash-preview-05-20", "Gemini 2.5 Flash Preview 05-20", True, (0.15, 0.6, 0.0375, 0), 1048576, 65536),
    _m("gemini-2.5-flash-preview-09-2025", "Gemini 2.5 Flash Preview 09-25", True, (0.3, 2.5, 0.075, 0), 1048576, 65536),
    _m("gemini-2.5-pro", "Gemini 2.5 Pro", True, (1.25, 10, 0.125, 0), 1048576, 65536),
    _m("gemini-2.5-pro-preview-05-06", "Gemini 2.5 Pro Preview 05-06", True, (1.25, 10, 0.31, 0), 1048576, 65536),
    _m("gemini-2.5-pro-preview-06-05", "Gemini 2.5 Pro Preview 06-05", True, (1.25, 10, 0.31, 0), 1048576, 65536),
    _m("gemini-3-flash-preview", "Gemini 3 Flash Preview", True, (0.5, 3, 0.05, 0), 1048576, 65536, {"off": None}),
    _m("gemini-3-pro-preview", "Gemini 3 Pro Preview", True, (2, 12, 0.2, 0), 1000000, 64000, {"off": None, "minimal": None, "low": "LOW", "medium": None, "high": "HIGH"}),
    _m("gemini-3.1-flash-lite-preview", "Gemini 3.1 Flash Lite Preview", True, (0.25, 1.5, 0.025, 1), 1048576, 65536, {"off": None}),
    _m("gemini-3.1-pro-preview", "Gemini 3.1 Pro Preview", True, (2, 12, 0.2, 0), 1048576, 65536, {"off": None, "minimal": None, "low": "LOW", "medium": None, "high": "HIGH"}),
    _m("gemini-3.1-pro-preview-customtools", "Gemini 3.1 Pro Preview Custom Tools", True, (2, 12, 0.2, 0), 1048576, 65536, {"off": None, "minimal": None, "low": "LOW", "medium": None, "high": "HIGH"}),
    _m("gemini-flash-latest", "Gemini Flash Latest", True, (0.3, 2.5, 0.075, 0), 1048576, 65536),
    _m("gemini-flash-lite-latest", "Gemini Flash-Lite Latest", True, (0.1, 0.4, 0.025, 0), 1048576, 65536),
    _m("gemini-live-2.5-flash", "Gemini Live 2.5 Flash", True, (0.5, 2, 0, 0), 128000, 8000),
    _m("gemini-live-2.5-flash-preview-native-audio", "Gemini Live 2.5 Flash Preview Native Audio", True, (0.5, 2, 0, 0), 131072, 65536, text_only=True),
    _m("gemma-3-27b-it", "Gemma 3 27B", False, (0, 0, 0, 0), 131072, 8192),
    _m("gemma-4-26b-a4b-it", "Gemma 4 26B", True, (0, 0, 0, 0), 256000, 8192, {"off": None, "minimal": "MINIMAL", "low": None, "medium": None, "high": "HIGH"}),
    _m("gemma-4-31b-it", "Gemma 4 31B", True, (0, 0, 0, 0), 256000, 8192, {"off": None, "minimal": "MINIMAL", "low": None, "medium": None, "high": "HIGH"}),
))
_OPENAI = dict((
    _m("gpt-4", "GPT-4", False, (30, 60, 0, 0), 8192, 8192, text_only=True),
    _m("gpt-4-turbo", "GPT-4 Turbo", False, (10, 30, 0, 0), 128000, 4096),
    _m("gpt-4.1", "GPT-4.1", False, (2, 8, 0.5, 0), 1047576, 32768),
    _m("gpt-4.1-mini", "GPT-4.1 mini", False, (0.4, 1.6, 0.1, 0), 1047576, 32768),
    _m("gpt-4.1-nano", "GPT-4.1 nano", False, (0.1, 0.4, 0.03, 0), 1047576, 32768),
    _m("gpt-4o", "GPT-4o", False, (2.5, 10, 1.25, 0), 128000, 16384),
    _m("gpt-4o-2024-05-13", "GPT-4o (2024-05-13)", False, (5, 15, 0, 0), 128000, 4096),
    _m("gpt-4o-2024-08-06", "GPT-4o (2024-08-06)", False, (2.5, 10, 1.25, 0), 128000, 16384),
    _m("gpt-4o-2024-11-20", "GPT-4o (2024-11-20)", False, (2.5, 10, 1.25, 0), 128000, 16384),
    _m("gpt-4o-mini", "GPT-4o mini", False, (0.15, 0.6, 0.08, 0), 128000, 16384),
    _m("gpt-5", "GPT-5", True, (1.25, 10, 0.125, 0), 400000, 128000, {"off": None}),
    _m("gpt-5-chat-latest", "GPT-5 Chat Latest", False, (1.25, 10, 0.125, 0), 128000, 16384, {"off": None}),
    _m("gpt-5-codex", "GPT-5-Codex", True, (1.25, 10, 0.125, 0), 400000, 128000, {"off": None}),
    _m("gpt-5-mini", "GPT-5 Mini", True, (0.25, 2, 0.025, 0), 400000, 128000, {"off": None}),
    _m("gpt-5-nano", "GPT-5 Nano", True, (0.05, 0.4, 0.005, 0), 400000, 128000, {"off": None}),
    _m("gpt-5-pro", "GPT-5 Pro", True, (15, 120, 0, 0), 400000, 272000, {"off": None}),
    _m("gpt-5.1", "GPT-5.1", True, (1.25, 10, 0.13, 0), 400000, 128000, {"off": None}),
    _m("gpt-5.1-chat-latest", "GPT-5.1 Chat", True, (1.25, 10, 0.125, 0), 128000, 16384, {"off": None}),
    _m("gpt-5.1-codex", "GPT-5.1 Codex", True, (1.25, 10, 0.125, 0), 400000, 128000, {"off": None}),
    _m("gpt-5.1-codex-max", "GPT-5.1 Codex Max", True, (1.25, 10, 0.125, 0), 400000, 128000, {"off": None}),
    _m("gpt-5.1-codex-mini", "GPT-5.1 Codex mini", True, (0.25, 2, 0.025, 0), 400000, 128000, {"off": None}),
    _m("gpt-5.2", "GPT-5.2", True, (1.75, 14, 0.175, 0), 400000, 128000, {"off": None, "xhigh": "xhigh"}),
    _m("gpt-5.2-chat-latest", "GPT-5.2 Chat", True, (1.75, 14, 0.175, 0), 128000, 16384, {"off": None, "xhigh": "xhigh"}),
    _m("gpt-5.2-codex", "GPT-5.2 Codex", True, (1.75, 14, 0.175, 0), 400000, 128000, {"off": None, "xhigh": "xhigh"}),
    _m("gpt-5.2-pro", "GPT-5.2 Pro", True, (21, 168, 0, 0), 400000, 128000, {"off": None, "xhigh": "xhigh"}),
    _m("gpt-5.3-chat-latest", "GPT-5.3 Chat (latest)", False, (1.75, 14, 0.175, 0), 128000, 16384, {"off": None, "xhigh": "xhigh"}),
    _m("gpt-5.3-codex", "GPT-5.3 Codex", True, (1.75, 14, 0.175, 0), 400000, 128000, {"off": None, "xhigh": "xhigh"}),
    _m("gpt-5.3-codex-spark", "GPT-5.3 Codex Spark", True, (1.75, 14, 0.175, 0), 128000, 32000, {"off": None, "xhigh": "xhigh"}),
    _m("gpt-5.4", "GPT-5.4", True, (2.5, 15, 0.25, 0), 272000, 128000, {"off": None, "xhigh": "xhigh"}),
    _m("gpt-5.4-mini", "GPT-5.4 mini", True, (0.75, 4.5, 0.075, 0), 400000, 128000, {"off": None, "xhigh": "xhigh"}),
    _m("gpt-5.4-nano", "GPT-5.4 nano", True, (0.2, 1.25, 0.02, 0), 400000, 128000, {"off": None, "xhigh": "xhigh"}),
    _m("gpt-5.4-pro", "GPT-5.4 Pro", True, (30, 180, 0, 0), 1050000, 128000, {"off": None, "xhigh": "xhigh"}),
    _m("gpt-5.5", "GPT-5.5", True, (5, 30, 0.5, 0), 272000, 128000, {"off": None, "xhigh": "xhigh"}),
    _m("gpt-5.5-pro", "GPT-5.5 Pro", True, (30, 180, 0, 0), 1050000, 128000, {"off": None, "xhigh": "xhigh"}),
    _m("o1", "o1", True, (15, 60, 7.5, 0), 200000, 100000),
    _m("o1-pro", "o1-pro", True, (150, 600, 0, 0), 200000, 100000),
    _m("o3", "o3", True, (2, 8, 0.5, 0), 200000, 100000),
    _m("o3-deep-research", "o3-deep-research", True, (10, 40, 2.5, 0), 200000, 100000),
    _m("o3-mini", "o3-mini", True, (1.1, 4.4, 0.55, 0), 200000, 100000, text_only=True),
    _m("o3-pro", "o3-pro", True, (20, 80, 0, 0), 200000, 100000),
    _m("o4-mini", "o4-mini", True, (1.1, 4.4, 0.28, 0), 200000, 100000),
    _m("o4-mini-deep-research", "o4-mini-deep-research", True, (2, 8, 0.5, 0), 200000, 100000),
))
_TABLES = {"google": _GOOGLE, "openai": _OPENAI}


def builtin_model(provider: str, model_id: str) -> ModelInfo | None:
    """pi's entry for ``provider/model_id`` (``gemini`` is litellm's name for ``google``), as a
    model of ``provider``; None when pi has no such built-in model."""
    table = "google" if provider in ("google", "gemini") else provider
    found = _TABLES.get(table, {}).get(model_id)
    if found is None:
        return None
    api, prefix = _PROVIDERS[table]
    return ModelInfo(
        provider=provider, id=found.id, name=found.name, api=api, litellm_model=f"{prefix}/{model_id}",
        context_window=found.context_window, context_window_source="builtin", max_tokens=found.max_tokens,
        reasoning=found.reasoning, input=found.input, cost=found.cost, thinking_level_map=dict(found.thinking_level_map),
    )
