"""Where the session meets ``pi_tui.checkpoints``: the snapshot points through the hook lists
(``attach_checkpoints``: session start and resume, before each prompt, before a tool that can
change files runs, after its turn), and restoring files with ``/tree``, ``/fork``, ``/undo`` and
``/redo``. Everything that decides lives in the room.

A restore is planned first (the current files snapshotted and bound to the leaf being left, the
target's snapshot looked up and checked), and refused with the reason before the conversation
moves when it cannot be done; only after the move (which an extension may cancel) are files
written.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from pi_tui.core.errors import EntryNotFoundError, PiError


def open_and_attach(session: Any, cwd: Path, agent_dir: Path, settings: Any) -> None:
    """The SDK's call: open the project's checkpoints (unless ``checkpoints.enabled`` is false)
    and attach them; the session folder is excluded when it sits inside the project."""
    from pi_tui.checkpoints import open_checkpoints

    session_file = session.session_manager.session_file
    checkpoints = open_checkpoints(cwd=cwd, agent_dir=agent_dir, settings=settings,
                                   current=lambda: session.session_manager, emit=session.emit,
                                   excluded=[session_file.parent] if session_file is not None else [])
    if checkpoints is not None:
        attach_checkpoints(session, checkpoints)


def attach_checkpoints(session: Any, checkpoints: Any) -> None:
    """Plug ``checkpoints`` into ``session.hooks`` (``hooks.py``)."""
    from pi_tui.checkpoints.manager import READ_ONLY_TOOLS

    session.checkpoints = checkpoints

    async def started(reason: str) -> None:
        await checkpoints.on_start(reason)

    async def before_prompt(_text: str) -> None:
        await checkpoints.before_prompt()

    async def before_tool(info: Any) -> None:  # a gate that never blocks: it only looks
        if info.tool_call.get("name") not in READ_ONLY_TOOLS:
            await checkpoints.before_change()

    async def turn_ended(_turn: Any) -> None:
        await checkpoints.after_change("turn")

    session.hooks.session_started.append(started)
    session.hooks.before_prompt.append(before_prompt)
    session.hooks.tool_gates.append(before_tool)
    session.hooks.turn_ended.append(turn_ended)


NO_CHECKPOINTS = "File checkpoints are off for this session (checkpoints.enabled is false)"


def _checkpoints(session: Any) -> Any:
    found = getattr(session, "checkpoints", None)
    if found is None:
        raise PiError(NO_CHECKPOINTS)
    if not found.enabled:
        raise PiError(f"File checkpoints are off: {found.off_reason}")
    return found


def target_node(entry: dict[str, Any], position: str = "tree") -> str | None:
    """The node whose files a move to ``entry`` brings back: a user message (or an extension's
    message) puts its text back in the editor and leaves the leaf at its parent, as ``/tree``
    and ``/fork`` (``before``) do; anything else is the node itself."""
    if position == "at":
        return str(entry["id"])
    user_like = entry.get("type") == "custom_message" or (
        entry.get("type") == "message" and entry.get("message", {}).get("role") == "user")
    if user_like:
        parent = entry.get("parentId")
        return parent if isinstance(parent, str) else None
    return str(entry["id"])


async def preview_restore(session: Any, target_id: str, position: str = "tree") -> dict[str, Any]:
    """What restoring the files of ``target_id`` would change (the current files are snapshotted
    and bound to the leaf, which is harmless: it is what a restore does first)."""
    checkpoints = _checkpoints(session)
    entry = session.session_manager.get_entry(target_id)
    if entry is None:
        raise EntryNotFoundError(target_id)
    plan = await checkpoints.plan_restore(target_node(entry, position))
    preview: dict[str, Any] = plan.preview()
    return preview


async def _plan(session: Any, target_id: str, position: str) -> tuple[Any, Any]:
    checkpoints = _checkpoints(session)
    entry = session.session_manager.get_entry(target_id)
    if entry is None:
        raise EntryNotFoundError(target_id)
    plan = await checkpoints.plan_restore(target_node(entry, position))
    if plan.problem:
        raise PiError(f"Cannot restore files: {plan.problem}")
    return checkpoints, plan


async def navigate_restoring(session: Any, navigate: Any, target_id: str, **options: Any) -> Any:
    """``navigate_tree`` with ``restoreFiles``: the result gains ``files``."""
    from pi_tui.session.branch_navigation import NavigateResult

    checkpoints, plan = await _plan(session, target_id, "tree")
    result = await navigate(target_id, **options)
    if result is None or getattr(result, "cancelled", False):
        return result
    files = await checkpoints.apply(plan)
    return dataclasses.replace(result, files=files) if isinstance(result, NavigateResult) else result


async def fork_restoring(session: Any, fork: Any, entry_id: str, position: str) -> tuple[str | None, Any]:
    """``fork`` with ``restoreFiles``: ``(selected text, files)``; files None when cancelled."""
    checkpoints, plan = await _plan(session, entry_id, position)
    selected = await fork(entry_id, position)
    if session.replacement_cancelled:
        return selected, None
    return selected, await checkpoints.apply(plan)


def last_prompt_id(session: Any) -> str | None:
    for entry in reversed(session.session_manager.get_branch()):
        message = entry.get("message") if entry.get("type") == "message" else None
        if isinstance(message, dict) and message.get("role") == "user":
            return str(entry["id"])
    return None


async def undo(session: Any) -> Any:
    """``/undo``: back to before the last prompt, files included (its text goes to the editor)."""
    checkpoints = _checkpoints(session)
    target = last_prompt_id(session)
    if target is None:
        raise PiError("Nothing to undo: no prompt on this branch")
    left = session.session_manager.leaf_id
    result = await session.navigate_tree(target, restore_files=True)
    if result is not None and not getattr(result, "cancelled", False):
        checkpoints.redo_stack.append(left)
    return result


async def redo(session: Any) -> Any:
    """``/redo``: back to where the last ``/undo`` left, with the files as they were then."""
    checkpoints = _checkpoints(session)
    if not checkpoints.redo_stack or checkpoints.redo_stack[-1] is None:
        raise PiError("Nothing to redo")
    target = checkpoints.redo_stack.pop()
    stack = list(checkpoints.redo_stack)
    result = await session.navigate_tree(target, restore_files=True)
    checkpoints.redo_stack[:] = stack  # navigating does not count as a new prompt
    return result
