"""RPC commands that read or change session state: model, thinking level, queue modes,
automatic compaction and retry, name, and the read-only views (pi-behaviour.md §9.4).

Setting changes that pi persists (queue modes, ``compaction.enabled``, ``retry.enabled``) go to
the global settings file, as pi's ``SettingsManager`` setters do; the session reads those
settings at the moment it needs them, so they take effect for the next run.
"""

from __future__ import annotations

import asyncio
import fnmatch
import sys
from typing import Any

from pi_tui.core.messages import THINKING_LEVELS
from pi_tui.core.provider import ModelInfo
from pi_tui.modes.export_html import export_session_html
from pi_tui.modes.rpc import views
from pi_tui.modes.rpc.context import NULL_DATA, RpcCommandError, RpcContext, field_bool, field_str

QUEUE_MODES = ("all", "one-at-a-time")


async def get_state(ctx: RpcContext, command: dict[str, Any]) -> Any:
    return views.state_json(ctx.session)


async def get_messages(ctx: RpcContext, command: dict[str, Any]) -> Any:
    return {"messages": list(ctx.session.agent.settled_messages)}  # pi: a streaming reply is no message yet


async def get_session_stats(ctx: RpcContext, command: dict[str, Any]) -> Any:
    return views.session_stats(ctx.session)


async def get_fork_messages(ctx: RpcContext, command: dict[str, Any]) -> Any:
    return {"messages": views.fork_messages(ctx.session)}


async def get_last_assistant_text(ctx: RpcContext, command: dict[str, Any]) -> Any:
    return {"text": views.last_assistant_text(ctx.session)}


async def get_commands(ctx: RpcContext, command: dict[str, Any]) -> Any:
    return {"commands": views.commands_json(ctx.session)}


async def set_session_name(ctx: RpcContext, command: dict[str, Any]) -> Any:
    name = (field_str(command, "name") or "").strip()
    if not name:
        raise RpcCommandError("Session name cannot be empty")
    ctx.session.set_session_name(name)
    return None


# --------------------------------------------------------------------------- models


def available_models(ctx: RpcContext) -> list[ModelInfo]:
    """The models with credentials (models.json first), as ``--list-models`` shows them."""
    registry = ctx.session.model_registry
    return list(registry.list_models()) if registry is not None else []


async def get_available_models(ctx: RpcContext, command: dict[str, Any]) -> Any:
    return {"models": [views.model_json(m) for m in available_models(ctx)]}


async def set_model(ctx: RpcContext, command: dict[str, Any]) -> Any:
    provider = field_str(command, "provider") or ""
    model_id = field_str(command, "modelId") or ""
    current = ctx.session.model
    candidates = [*([current] if current is not None else []), *available_models(ctx)]
    found = next((m for m in candidates if (m.provider, m.id) == (provider, model_id)), None)
    if found is None:
        raise RpcCommandError(f"Model not found: {provider}/{model_id}")
    ctx.session.set_model(found)
    return views.model_json(found)


async def cycle_model(ctx: RpcContext, command: dict[str, Any]) -> Any:
    """The next of the ``--models`` scope (with its ``:thinking``), else of the available models;
    ``data: null`` when there is nothing to switch to."""
    scoped = bool(ctx.scoped_models)
    choices = ctx.scoped_models if scoped else [(m, None) for m in available_models(ctx)]
    if len(choices) <= 1:
        return NULL_DATA
    current = ctx.session.model
    refs = [(m.provider, m.id) for m, _ in choices]
    index = refs.index((current.provider, current.id)) if current is not None and (current.provider, current.id) in refs else -1
    model, level = choices[(index + 1) % len(choices)]
    ctx.session.set_model(model, source="cycle", thinking_level=level)
    return {"model": views.model_json(model), "thinkingLevel": ctx.session.thinking_level, "isScoped": scoped}


def resolve_scoped_models(patterns: str | None, registry: Any) -> list[tuple[ModelInfo, str | None]]:
    """``--models a,b*:high``: each pattern (globs allowed) with an optional ``:thinking``,
    matched against ``provider/id`` and the bare id of the available models. Patterns that match
    nothing are reported on stderr."""
    if not patterns or registry is None:
        return []
    from pi_tui.providers.models import parse_model_ref

    available = list(registry.list_models())
    chosen: list[tuple[ModelInfo, str | None]] = []
    for raw in patterns.split(","):
        pattern, level = parse_model_ref(raw.strip())
        if not pattern:
            continue
        needle = pattern.lower()
        hits = [m for m in available
                if fnmatch.fnmatchcase(m.ref.lower(), needle) or fnmatch.fnmatchcase(m.id.lower(), needle)]
        if not hits:
            try:
                hits = [registry.resolve(pattern)]
            except Exception:
                print(f"pi-tui: --models: no model matches {raw.strip()!r}", file=sys.stderr)
        for model in hits:
            if all(model.ref != seen.ref for seen, _ in chosen):
                chosen.append((model, level))
    return chosen


# --------------------------------------------------------------------------- thinking and queues


async def set_thinking_level(ctx: RpcContext, command: dict[str, Any]) -> Any:
    level = field_str(command, "level") or ""
    if level not in THINKING_LEVELS:
        raise RpcCommandError(f"Invalid thinking level: {level!r} (one of {', '.join(THINKING_LEVELS)})")
    ctx.session.set_thinking_level(level)
    return None


async def cycle_thinking_level(ctx: RpcContext, command: dict[str, Any]) -> Any:
    model = ctx.session.model
    if model is None or not model.reasoning:
        return NULL_DATA  # pi: the model does not support thinking
    return {"level": ctx.session.cycle_thinking_level()}


def _queue_mode(command: dict[str, Any]) -> str:
    mode = field_str(command, "mode") or ""
    if mode not in QUEUE_MODES:
        raise RpcCommandError(f'{command.get("type")}: mode must be "all" or "one-at-a-time", not {mode!r}')
    return mode


async def set_steering_mode(ctx: RpcContext, command: dict[str, Any]) -> Any:
    mode = _queue_mode(command)
    ctx.session.agent.steering.mode = mode  # type: ignore[assignment]
    _persist(ctx, "steeringMode", mode)
    return None


async def set_follow_up_mode(ctx: RpcContext, command: dict[str, Any]) -> Any:
    mode = _queue_mode(command)
    ctx.session.agent.follow_ups.mode = mode  # type: ignore[assignment]
    _persist(ctx, "followUpMode", mode)
    return None


async def set_auto_compaction(ctx: RpcContext, command: dict[str, Any]) -> Any:
    _persist(ctx, "compaction.enabled", field_bool(command, "enabled"))
    return None


async def set_auto_retry(ctx: RpcContext, command: dict[str, Any]) -> Any:
    _persist(ctx, "retry.enabled", field_bool(command, "enabled"))
    return None


def _persist(ctx: RpcContext, key: str, value: Any) -> None:
    settings = ctx.session.settings
    setter = getattr(settings, "set_global", None)
    if not callable(setter):
        raise RpcCommandError(f"Cannot change {key}: this session has no settings store")
    setter(key, value)


async def export_html(ctx: RpcContext, command: dict[str, Any]) -> Any:
    """``export_html{outputPath?}`` → ``{path}``: the current branch as one self-contained HTML file."""
    output = command.get("outputPath")
    if output is not None and not isinstance(output, str):
        raise RpcCommandError("outputPath must be a string")
    path = await asyncio.to_thread(export_session_html, ctx.session.session_manager, output)
    return {"path": str(path)}
