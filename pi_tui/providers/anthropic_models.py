"""pi 0.73.1"s built-in ``anthropic`` models (pi-behaviour.md §15.10): prices, windows, output
limits, which models think, and their ``thinkingLevelMap``.

Why our own table and not litellm's catalog: litellm's numbers differ from pi's for several of
them (claude-sonnet-4-6"s output limit, claude-3-5-haiku and claude-opus-4-1 missing, haiku"s
cache price as 0.09999...), and the output limit decides ``max_tokens`` and the thinking budget
on the wire (§15.3). Same numbers as pi means the same requests and the same recorded cost.
"""

from __future__ import annotations

from pi_tui.core.provider import ModelCost, ModelInfo

DEFAULT_BASE_URL = "https://api.anthropic.com"
_ADAPTIVE_MARKERS = ("opus-4-6", "opus-4.6", "opus-4-7", "opus-4.7", "sonnet-4-6", "sonnet-4.6")


def is_adaptive(model_id: str) -> bool:
    """Models that take ``thinking: {type: adaptive}`` + ``output_config.effort`` (§15.3)."""
    return any(marker in model_id for marker in _ADAPTIVE_MARKERS)


def _m(model_id: str, name: str, reasoning: bool, cost: tuple[float, float, float, float], window: int, max_tokens: int,
       level_map: dict[str, str | None] | None = None) -> ModelInfo:
    return ModelInfo(
        provider="anthropic", id=model_id, name=name, api="anthropic-messages", litellm_model=f"anthropic/{model_id}",
        context_window=window, context_window_source="builtin", max_tokens=max_tokens, reasoning=reasoning,
        input=("text", "image"), cost=ModelCost(input=cost[0], output=cost[1], cache_read=cost[2], cache_write=cost[3]),
        thinking_level_map=dict(level_map or {}),
    )


BUILTIN_MODELS: dict[str, ModelInfo] = {m.id: m for m in (
    _m("claude-3-5-haiku-20241022", "Claude Haiku 3.5", False, (0.8, 4, 0.08, 1), 200000, 8192),
    _m("claude-3-5-haiku-latest", "Claude Haiku 3.5 (latest)", False, (0.8, 4, 0.08, 1), 200000, 8192),
    _m("claude-3-5-sonnet-20240620", "Claude Sonnet 3.5", False, (3, 15, 0.3, 3.75), 200000, 8192),
    _m("claude-3-5-sonnet-20241022", "Claude Sonnet 3.5 v2", False, (3, 15, 0.3, 3.75), 200000, 8192),
    _m("claude-3-7-sonnet-20250219", "Claude Sonnet 3.7", True, (3, 15, 0.3, 3.75), 200000, 64000),
    _m("claude-3-haiku-20240307", "Claude Haiku 3", False, (0.25, 1.25, 0.03, 0.3), 200000, 4096),
    _m("claude-3-opus-20240229", "Claude Opus 3", False, (15, 75, 1.5, 18.75), 200000, 4096),
    _m("claude-3-sonnet-20240229", "Claude Sonnet 3", False, (3, 15, 0.3, 0.3), 200000, 4096),
    _m("claude-haiku-4-5", "Claude Haiku 4.5 (latest)", True, (1, 5, 0.1, 1.25), 200000, 64000),
    _m("claude-haiku-4-5-20251001", "Claude Haiku 4.5", True, (1, 5, 0.1, 1.25), 200000, 64000),
    _m("claude-opus-4-0", "Claude Opus 4 (latest)", True, (15, 75, 1.5, 18.75), 200000, 32000),
    _m("claude-opus-4-1", "Claude Opus 4.1 (latest)", True, (15, 75, 1.5, 18.75), 200000, 32000),
    _m("claude-opus-4-1-20250805", "Claude Opus 4.1", True, (15, 75, 1.5, 18.75), 200000, 32000),
    _m("claude-opus-4-20250514", "Claude Opus 4", True, (15, 75, 1.5, 18.75), 200000, 32000),
    _m("claude-opus-4-5", "Claude Opus 4.5 (latest)", True, (5, 25, 0.5, 6.25), 200000, 64000),
    _m("claude-opus-4-5-20251101", "Claude Opus 4.5", True, (5, 25, 0.5, 6.25), 200000, 64000),
    _m("claude-opus-4-6", "Claude Opus 4.6", True, (5, 25, 0.5, 6.25), 1000000, 128000, {"xhigh": "max"}),
    _m("claude-opus-4-7", "Claude Opus 4.7", True, (5, 25, 0.5, 6.25), 1000000, 128000, {"xhigh": "xhigh"}),
    _m("claude-sonnet-4-0", "Claude Sonnet 4 (latest)", True, (3, 15, 0.3, 3.75), 200000, 64000),
    _m("claude-sonnet-4-20250514", "Claude Sonnet 4", True, (3, 15, 0.3, 3.75), 200000, 64000),
    _m("claude-sonnet-4-5", "Claude Sonnet 4.5 (latest)", True, (3, 15, 0.3, 3.75), 200000, 64000),
    _m("claude-sonnet-4-5-20250929", "Claude Sonnet 4.5", True, (3, 15, 0.3, 3.75), 200000, 64000),
    _m("claude-sonnet-4-6", "Claude Sonnet 4.6", True, (3, 15, 0.3, 3.75), 1000000, 64000),
)}
"""Keyed by model id, in pi's order."""


def builtin_model(model_id: str) -> ModelInfo | None:
    return BUILTIN_MODELS.get(model_id)
