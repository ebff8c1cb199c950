"""Gemini's model families and thinking settings (pi-behaviour.md §15.15), shared by both routes to
Gemini: the native client (``gemini_encode``) and litellm (``litellm_encode``), so a level means
the same ``thinkingConfig`` whichever carries the request.

| model | level given | off |
|---|---|---|
| Gemini 2.x and others | ``{"includeThoughts": true, "thinkingBudget": B}`` | ``{"thinkingBudget": 0}`` (2.5 Pro: 128) |
| ``gemini-3(.x)-pro`` | ``thinkingLevel`` ``LOW`` / ``HIGH`` | ``{"thinkingLevel": "LOW"}`` |
| ``gemini-3(.x)-flash`` | ``MINIMAL`` / ``LOW`` / ``MEDIUM`` / ``HIGH`` | ``{"thinkingLevel": "MINIMAL"}`` |
| ``gemma-4`` | ``MINIMAL`` / ``HIGH`` | ``{"thinkingLevel": "MINIMAL"}`` |

``B`` is the ``thinkingBudgets`` setting's value for the level when set, else pi's table by model id.
One deliberate difference from pi 0.73.1: Gemini 2.5 Pro with thinking off gets its smallest
budget (128), not 0 — it cannot stop thinking, and the API refuses 0 (``Budget 0 is invalid.
This model only works in thinking mode.``), so pi's request fails.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pi_tui.core.provider import ModelInfo

DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com/v1beta"
_GEMINI_3_PRO = re.compile(r"gemini-3(?:\.\d+)?-pro")
_GEMINI_3_FLASH = re.compile(r"gemini-3(?:\.\d+)?-flash")
_GEMMA_4 = re.compile(r"gemma-?4")
_GEMINI_MAJOR = re.compile(r"^gemini(?:-live)?-(\d+)")
_BASE64 = re.compile(r"^[A-Za-z0-9+/]+={0,2}$")
_LEVELS = {
    "pro": {"minimal": "LOW", "low": "LOW", "medium": "HIGH", "high": "HIGH"},
    "flash": {"minimal": "MINIMAL", "low": "LOW", "medium": "MEDIUM", "high": "HIGH"},
    "gemma": {"minimal": "MINIMAL", "low": "MINIMAL", "medium": "HIGH", "high": "HIGH"},
}
_OFF_LEVELS = {"pro": "LOW", "flash": "MINIMAL", "gemma": "MINIMAL"}
_BUDGETS = (  # the first id fragment that matches wins (2.5-flash-lite before 2.5-flash)
    ("2.5-pro", {"minimal": 128, "low": 2048, "medium": 8192, "high": 32768}),
    ("2.5-flash-lite", {"minimal": 512, "low": 2048, "medium": 8192, "high": 24576}),
    ("2.5-flash", {"minimal": 128, "low": 2048, "medium": 8192, "high": 24576}),
)
PRO_25_SMALLEST_BUDGET = 128
DYNAMIC_BUDGET = -1


def level_family(model_id: str) -> str | None:
    """``pro``/``flash``/``gemma`` for the models that take a ``thinkingLevel``, else None."""
    name = model_id.lower()
    if _GEMINI_3_PRO.search(name):
        return "pro"
    if _GEMINI_3_FLASH.search(name):
        return "flash"
    if _GEMMA_4.search(name):
        return "gemma"
    return None


def thinking_budget(model_id: str, level: str, budgets: Mapping[str, int] | None = None) -> int | None:
    """The budget for a level: the ``thinkingBudgets`` setting's, else pi's table (-1, dynamic,
    for models it does not list; None for a level the table lacks, such as a mapped ``xhigh``)."""
    if budgets is not None and isinstance(budgets.get(level), int):
        return int(budgets[level])
    for fragment, table in _BUDGETS:
        if fragment in model_id:
            return table.get(level)
    return DYNAMIC_BUDGET


def thinking_config(model: ModelInfo, level: str | None, budgets: Mapping[str, int] | None = None) -> dict[str, Any] | None:
    """``generationConfig.thinkingConfig`` for a clamped level (None = off), None for a model
    that does not think. Keys in pi's order."""
    if not model.reasoning:
        return None
    family = level_family(model.id)
    if level is None:
        if family is not None:
            return {"thinkingLevel": _OFF_LEVELS[family]}
        return {"thinkingBudget": PRO_25_SMALLEST_BUDGET if "2.5-pro" in model.id else 0}
    config: dict[str, Any] = {"includeThoughts": True}
    if family is not None:
        mapped = _LEVELS[family].get(level)
        if mapped is not None:
            config["thinkingLevel"] = mapped
        return config
    budget = thinking_budget(model.id, level, budgets)
    if budget is not None:
        config["thinkingBudget"] = budget
    return config


def looks_like_base64(value: Any) -> bool:
    """pi attaches a thought signature only when it looks like base64 (the API's bytes field)."""
    return isinstance(value, str) and len(value) % 4 == 0 and _BASE64.match(value) is not None


def gemini_major_version(model_id: str) -> int | None:
    found = _GEMINI_MAJOR.match(model_id.lower())
    return int(found.group(1)) if found else None


def takes_images_in_function_responses(model_id: str) -> bool:
    """Gemini 3 and later (and non-Gemini models behind the API) take a tool result's images
    inside its ``functionResponse``; older Gemini gets them in an extra user turn."""
    major = gemini_major_version(model_id)
    return major is None or major >= 3


def requires_tool_call_id(model_id: str) -> bool:
    """Models behind Google's API that need ``id`` on function calls and responses."""
    return model_id.startswith(("claude-", "gpt-oss-"))
