"""RPC commands pi-tui adds for files that follow the session tree (docs/checkpoints.md).

``navigate_tree {targetId, summarize?, customInstructions?, restoreFiles?}`` →
``{cancelled, editorText?, files?}`` (``files``: ``changed``/``created``/``deleted``/``skipped``
and ``editedSinceSnapshot``); ``get_checkpoints`` → ``{enabled, nodes: [{entryId, reason,
counts, files}]}``; ``preview_restore {targetId}`` → what a restore would do. ``fork`` takes
``restoreFiles`` in ``handlers_run.fork``.
"""

from __future__ import annotations

from typing import Any

from pi_tui.core.errors import PiError
from pi_tui.modes.rpc.context import RpcCommandError, RpcContext, field_bool, field_str


def optional_bool(command: dict[str, Any], name: str) -> bool:
    """An optional boolean field: absent is false; anything but true/false is an error naming it."""
    return command.get(name) is not None and field_bool(command, name)


async def navigate_tree(ctx: RpcContext, command: dict[str, Any]) -> Any:
    target = field_str(command, "targetId") or ""
    if ctx.session.session_manager.get_entry(target) is None:
        raise RpcCommandError(f"Entry {target} not found")
    try:
        result = await ctx.session.navigate_tree(
            target, summarize=optional_bool(command, "summarize"),
            custom_instructions=field_str(command, "customInstructions", optional=True),
            restore_files=optional_bool(command, "restoreFiles"),
        )
    except PiError as err:
        raise RpcCommandError(str(err)) from err
    out: dict[str, Any] = {"cancelled": bool(getattr(result, "cancelled", False))}
    editor_text = getattr(result, "editor_text", None)
    if editor_text is not None:
        out["editorText"] = editor_text
    files = getattr(result, "files", None)
    if files is not None:
        out["files"] = files
    return out


async def get_checkpoints(ctx: RpcContext, command: dict[str, Any]) -> Any:
    checkpoints = getattr(ctx.session, "checkpoints", None)
    if checkpoints is None:
        return {"enabled": False, "nodes": []}
    return {"enabled": bool(checkpoints.enabled), "offReason": checkpoints.off_reason,
            "nodes": checkpoints.changes_by_node()}


async def preview_restore(ctx: RpcContext, command: dict[str, Any]) -> Any:
    from pi_tui.session.checkpoint_hooks import preview_restore as preview

    try:
        return await preview(ctx.session, field_str(command, "targetId") or "")
    except PiError as err:
        raise RpcCommandError(str(err)) from err
