"""``pi-tui --list-models [search]``: the models this agent dir can use, as a table.

models.json models come first (in file order), then litellm's models of every provider whose
key is set. litellm itself is not imported: its bundled catalog file is read directly.
"""

from __future__ import annotations

import argparse
import sys
from typing import TextIO

from pi_tui.core.provider import ModelInfo
from pi_tui.providers.models import ModelRegistry
from pi_tui.resources.locations import agent_dir

HEADERS = ("provider", "model", "context", "max-out", "thinking", "images")


def format_tokens(count: int) -> str:
    """``200000`` → ``200K``, ``1048576`` → ``1M`` (as pi prints them)."""
    if count >= 1_000_000:
        value = count / 1_000_000
        return f"{value:.1f}".rstrip("0").rstrip(".") + "M"
    if count >= 1_000:
        value = count / 1_000
        return f"{value:.1f}".rstrip("0").rstrip(".") + "K"
    return str(count)


def _row(model: ModelInfo) -> tuple[str, ...]:
    window = format_tokens(model.context_window)
    if model.context_window_source == "default":
        window += "?"  # unknown to models.json and litellm: pi's default, a guess
    return (
        model.provider,
        model.id,
        window,
        format_tokens(model.max_tokens),
        "yes" if model.reasoning else "no",
        "yes" if model.supports_images else "no",
    )


def render_table(models: list[ModelInfo]) -> str:
    rows = [HEADERS, *(_row(m) for m in models)]
    widths = [max(len(r[i]) for r in rows) for i in range(len(HEADERS))]
    lines = ["  ".join(cell.ljust(widths[i]) for i, cell in enumerate(r)).rstrip() for r in rows]
    return "\n".join(lines)


def list_models(registry: ModelRegistry, search: str, out: TextIO, err: TextIO) -> int:
    for problem in registry.diagnostics:
        print(f"Warning: {problem}", file=err)
    models = registry.list_models(search)
    if not models:
        if search:
            print(f'No models match "{search}".', file=err)
        else:
            print(
                "No models available. Add a provider to "
                f"{registry.models_json} or set a provider key "
                "(ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY, OPENROUTER_API_KEY, ...). "
                "See docs/models.md.",
                file=err,
            )
        return 0
    print(render_table(models), file=out)
    if any(m.context_window_source == "default" for m in models):
        print("? = context window unknown; using the default. Set contextWindow in models.json.", file=err)
    return 0


def run_list_models(args: argparse.Namespace) -> int:
    registry = ModelRegistry.for_agent_dir(agent_dir())
    return list_models(registry, str(args.list_models or ""), sys.stdout, sys.stderr)
