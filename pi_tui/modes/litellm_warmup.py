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
    needed = _quick_answer(args)
    if needed is None:
        try:
            model = _chosen_model(args)
        except Exception:  # a bad flag or file: the session reports it properly; nothing to warm
            return
        from pi_tui.providers.routing import uses_litellm

        needed = uses_litellm(model)
    if needed:
        from pi_tui.providers.litellm_provider import load_litellm

        # import only: the first model call comes sooner than the import ends (our startup is
        # ~0.4 s, the import 3.5 s or more), so a warm-up call here would only race the real one
        load_litellm()


def _quick_answer(args: argparse.Namespace) -> bool | None:
    """For ``--model provider/id``, the routing rule read straight off models.json: no imports of
    our own, so the import starts ~0.3 s sooner than after resolving the model properly. None
    when the flags need the full resolution (no ``--model``, a bare id, a bad file)."""
    import json

    from pi_tui.resources.locations import agent_dir

    ref: str | None = getattr(args, "model", None)
    provider: str | None = getattr(args, "provider", None)
    if not ref:
        return None
    head, _, tail = ref.rpartition(":")
    ref = head if tail in ("off", "minimal", "low", "medium", "high", "xhigh") and head else ref
    if not provider:
        provider, slash, _ = ref.partition("/")
        if not slash:
            return None
    path = agent_dir() / "models.json"
    try:
        providers = json.loads(path.read_text(encoding="utf-8")).get("providers") or {} if path.exists() else {}
    except (OSError, ValueError, AttributeError, RecursionError):  # the real load reports it
        return None
    from pi_tui.providers.routing import BUILTIN_APIS, native_api_for

    config = providers.get(provider) if isinstance(providers, dict) else None
    if config is None:
        from pi_tui.providers.litellm_catalog import COMMON_PROVIDERS

        if provider not in COMMON_PROVIDERS:
            return None  # perhaps a provider of litellm's catalog, perhaps a typo: resolve properly
        return native_api_for(BUILTIN_APIS.get(provider, "openai-completions"), None) is None
    if not isinstance(config, dict):
        return None
    model_id = ref[len(provider) + 1:] if ref.startswith(provider + "/") else ref
    models = [m for m in config.get("models") or [] if isinstance(m, dict) and m.get("id") == model_id]
    entry: dict[str, Any] = models[0] if models else {}
    api = entry.get("api") or config.get("api") or ("openai-completions" if models else BUILTIN_APIS.get(provider, "openai-completions"))
    return native_api_for(str(api), entry.get("baseUrl") or config.get("baseUrl"), declared=bool(models)) is None


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
