"""Start litellm's import at process start in print, JSON and RPC mode, when the model needs it.

``import litellm`` takes seconds; a print run on a litellm-carried model (Gemini, Bedrock, ...)
would otherwise start it only at the first model call, after our own startup (imports, settings,
resources, the session file). A daemon thread resolves the model the flags choose, as the
session will (``--model``/``--provider``, else settings' defaults, else models.json or a key in
the environment), and if ``providers.routing`` says that model needs litellm, imports it. The
provider then finds litellm loaded (``load_litellm`` is thread-safe: a call made while the
thread is importing waits for it). What it can save is bounded by our own startup (~0.4 s),
and less: both threads mostly run Python code under one GIL (bench/RESULTS.md has the figures).

Nothing here runs for ``--version``/``--help`` (they exit before any mode), nor imports litellm
for a model one of our own clients carries. Getting the guess wrong only costs time: a session
resumed with another model still works. ``PI_TUI_NO_EARLY_LITELLM=1`` turns it off (benchmarks).
"""

from __future__ import annotations

import argparse
import os
import threading
from typing import Any

DISABLE_ENV = "PI_TUI_NO_EARLY_LITELLM"


def start_early_litellm_import(args: argparse.Namespace) -> threading.Thread | None:
    """Resolve the model and, if it needs litellm, import litellm, on a daemon thread."""
    if os.environ.get(DISABLE_ENV):
        return None
    thread = threading.Thread(target=_import_if_needed, args=(args,), name="litellm-early-import", daemon=True)
    thread.start()
    return thread


def _import_if_needed(args: argparse.Namespace) -> None:
    try:
        model = _chosen_model(args)
    except Exception:  # a bad flag or file: the session reports it properly; nothing to warm
        return
    from pi_tui.providers.routing import uses_litellm

    if uses_litellm(model):
        from pi_tui.providers.litellm_provider import load_litellm

        # import only: the first model call comes sooner than the import ends (our startup is
        # ~0.4 s, the import 3.5 s or more), so a warm-up call here would only race the real one
        load_litellm()


def _chosen_model(args: argparse.Namespace) -> Any:
    from pathlib import Path

    from pi_tui.providers.models import ModelRegistry
    from pi_tui.resources.locations import agent_dir
    from pi_tui.resources.settings import load_settings

    agent = agent_dir()
    settings = load_settings(Path.cwd(), agent)
    return ModelRegistry.for_agent_dir(agent).initial_model(
        getattr(args, "model", None), getattr(args, "provider", None),
        default_provider=getattr(settings, "default_provider", None),
        default_model=getattr(settings, "default_model", None),
    )
