"""Read-only adapters from an ``AgentSession`` to the plain data the widgets render.

Kept apart from the widgets (which never import the session) and tolerant: a part the session
does not offer yet (usage unknown, no settings) renders as unknown instead of failing.
"""

from __future__ import annotations

import weakref
from pathlib import Path
from typing import Any

from pi_tui.modes.interactive.formatting import git_branch, tilde_path
from pi_tui.modes.interactive.widgets.footer import FooterData


def history_messages(session: Any) -> list[dict[str, Any]]:
    """The messages of the current branch as the model sees them (summaries included).

    The session keeps them already (``messages``); the file is projected again only when a
    session object does not expose them.
    """
    messages = getattr(session, "messages", None)
    if isinstance(messages, list):
        return list(messages)
    manager = getattr(session, "session_manager", None)
    if manager is None:
        return []
    try:
        return list(manager.build_session_context().messages)
    except Exception:  # a damaged file is reported by the session when it loads; show what we can
        return []


def model_label(model: Any) -> str:
    if model is None:
        return "no model"
    return f"{model.provider}/{model.id}"


STARTING = "starting…"
_FILE_TOTALS: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()


def file_totals(session: Any) -> Any:
    """``core.usage.FileTotals`` over the session's entries, as pi's footer counts (every entry of
    the file: a compaction does not take the turns it summarized out of the totals); None for a
    session without entries to read."""
    entries = getattr(getattr(session, "session_manager", None), "get_entries", None)
    if not callable(entries):
        return None
    # Imported with the session, not before the first frame.
    from pi_tui.core.usage import FileTotals

    try:
        totals = _FILE_TOTALS.setdefault(session, FileTotals())
    except TypeError:  # a session object without weak references
        totals = FileTotals()
    return totals.update(entries())


def footer_data(session: Any, cwd: Path, *, context_unknown: bool = False, starting: bool = False) -> FooterData:
    """What the footer shows; ``context_unknown`` right after a compaction (pi shows ``?``);
    ``starting`` while the session is still being built after the first frame (not "no model")."""
    data = FooterData(cwd=tilde_path(cwd), branch=git_branch(cwd))
    if session is None:
        if starting:
            data.model = STARTING
        return data
    statuses = getattr(getattr(session, "extension_ui", None), "statuses", None)
    if isinstance(statuses, dict):
        data.statuses = dict(statuses)
    gate = getattr(session, "permissions", None)
    if gate is not None and gate.mode != "bypassPermissions":
        data.permissions = f"mode {gate.mode}" + ("" if gate.sandbox is not None else " · no sandbox")
    mcp = getattr(session, "mcp", None)
    if mcp is not None and mcp.connections:
        up, failed = mcp.counts()
        data.mcp = (up, failed, len(mcp.connections))
    state = session.state
    model = state.model
    data.model = model_label(model)
    data.session_name = state.session_name
    if model is not None and getattr(model, "reasoning", False):
        data.thinking = str(state.thinking_level)
    file = file_totals(session)
    totals = file.own if file is not None else state.totals
    data.totals = {
        "input": totals.input, "output": totals.output, "cacheRead": totals.cache_read,
        "cacheWrite": totals.cache_write, "cost": totals.cost,
    }
    all_tools = getattr(session, "get_all_tools", None)
    if file is not None and callable(all_tools) and "task" in all_tools():
        delegated = file.delegated
        if delegated.turns:  # the task tool's children, shown apart from the session's own usage
            data.totals.update({"subagentTokens": delegated.total_tokens, "subagentCost": delegated.cost})
    usage = None
    if not context_unknown:
        try:
            usage = session.get_context_usage()
        except Exception:
            usage = None
    if usage is not None and usage.tokens is not None and usage.percent is not None:
        data.context_tokens = int(usage.tokens)
        data.context_window = int(usage.context_window)
        data.context_percent = float(usage.percent)
    elif usage is not None:
        data.context_window = int(usage.context_window)
    elif model is not None:
        data.context_window = int(model.context_window)
    settings: Any = getattr(session, "settings", None)
    try:
        compaction = settings.compaction_settings(getattr(model, "provider", None), getattr(model, "id", None))
        data.auto_compaction = bool(compaction.enabled)
    except Exception:
        data.auto_compaction = True
    return data


def context_preview(session: Any) -> Any:
    """The /context view's data: the next request part by part (``core.context.preview``).

    The session supplies the system prompt, tools and model of the next call; the parts are built
    from its current context messages so compaction summaries and artifact references keep their
    notes, and the branch lets the compaction summary say what it replaced. Under the
    ``pipeline`` strategy the messages are the reduced request copy (snip and micro applied, see
    ``pipeline_messages``). Failed and aborted replies are left out, as every request leaves
    them out (``sent_messages``). Prefix reuse is computed when the session exposes its last
    request.
    """
    import dataclasses

    from pi_tui.core.context.preview import build_request_preview, request_fingerprints

    request = session.preview_request()
    messages: Any = history_messages(session)
    last_request = getattr(session, "last_request", None)
    previous = None
    if last_request is not None:  # compared as it went on the wire, failed replies left out
        previous = request_fingerprints(dataclasses.replace(last_request, messages=sent_messages(
            [dict(m) for m in last_request.messages])[0]))
    cache_read = None
    for message in reversed(messages):
        if message.get("role") == "assistant":
            cache_read = int((message.get("usage") or {}).get("cacheRead", 0))
            break
    model = request.model
    try:
        branch = list(session.session_manager.get_branch())
    except Exception:  # no manager (a bare session): the summary keeps its short note
        branch = None
    notes: list[str] = []
    prepared = pipeline_messages(session, messages)
    if prepared is not None:
        notes.append("pipeline strategy: messages as sent after snip and micro (summaries happen at send time)")
        messages = prepared
    messages, dropped = sent_messages(messages)
    if dropped:
        notes.append(f"not sent: {dropped} failed or aborted {'reply' if dropped == 1 else 'replies'} "
                     "(kept in the session, dropped from every request)")
    return build_request_preview(
        system_prompt=request.system_prompt,
        tools=request.tools,
        messages=messages,
        previous=previous,
        model_ref=model_label(model) if model is not None else None,
        context_window=getattr(model, "context_window", None),
        last_cache_read_tokens=cache_read,
        branch=branch,
        notes=notes,
    )


def sent_messages(messages: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """The messages the next request carries, and how many failed replies were left out: the
    replay repair every request gets (pi-behaviour.md §14.6) drops error/aborted replies and
    answers a tool call left without a result with ``No result provided``."""
    from pi_tui.providers.replay_transform import is_failed_reply, repair_for_replay

    return repair_for_replay(messages), sum(1 for m in messages if is_failed_reply(m))


def pipeline_messages(session: Any, messages: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
    """The request copy the pipeline strategy would send (snip markers, cleared tool results), or
    None under pi's strategy.

    A fresh ``RequestPreparer`` is used, not the session's: its output is a function of the
    history alone (pipeline_cache.py), and the session's own cache, events and summary step stay
    untouched. The JSON summary that may follow at send time needs a model call and is not
    previewed.
    """
    settings = getattr(session, "settings", None)
    strategy = getattr(settings, "context_strategy", None)
    if not callable(strategy) or str(strategy()) != "pipeline":
        return None
    from pi_tui.core.context.pipeline import coerce_pipeline_config
    from pi_tui.core.context.pipeline_cache import RequestPreparer

    pipeline_settings = getattr(settings, "pipeline_settings", None)
    config = coerce_pipeline_config(pipeline_settings() if callable(pipeline_settings) else None)
    prepared = RequestPreparer(config, strategy="pipeline").prepare(messages)  # type: ignore[arg-type]
    return [dict(m) for m in prepared.messages]
