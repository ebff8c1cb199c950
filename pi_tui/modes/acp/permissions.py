"""``session/request_permission`` before the tools that change things (edit, write, bash, and
extension tools: pi-tui cannot know what those change).

The session's ``before_tool_call`` hook (after the extensions' ``tool_call`` handlers):

1. for ``edit`` and ``write``, the change as a whole-file diff (read through the client's
   buffers when it offers ``fs/read_text_file``) with the session's known keys redacted, shown
   in the question and kept in the call;
2. unless ``acp.askPermission`` is false, or an earlier "always" answer for this tool in this
   session decides, the client is asked with four options: allow once, always allow, reject,
   always reject. "Always" is remembered per session and per tool;
3. allowed: the call becomes ``in_progress``; rejected, or the turn cancelled meanwhile
   (``cancelled`` outcome, or ``session/cancel`` while the question is open, answered or not),
   or the client unable to answer: the call is blocked, and the model gets a result saying so
   (never a silent run).

Every wait on the client here ends at ``session/cancel`` (``cancel_pending``), answered or not;
the preview's read is also bounded (``PREVIEW_READ_TIMEOUT``). The question itself has no
bound: a person may take their time.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pi_tui.agent.types import BeforeToolCallResult, ToolCallInfo
from pi_tui.core.tool import FileAccess
from pi_tui.modes.acp.jsonrpc import ConnectionClosed, Peer, RpcError
from pi_tui.modes.acp.tool_calls import (
    asks_permission,
    fragment_diffs,
    tool_kind,
    tool_locations,
    tool_title,
)
from pi_tui.modes.acp.updates import EventMapper
from pi_tui.tools.edit_match import EditSpec
from pi_tui.tools.paths import resolve_to_cwd

PREVIEW_LIMIT = 1_000_000
"""Above this many characters a diff shows the edited pieces instead of the whole file."""
PREVIEW_READ_TIMEOUT = 5.0
"""Seconds the preview waits for the editor's ``fs/read_text_file`` (a buffer it has open answers
in milliseconds); then the question shows the edited pieces rather than wait for good."""
OPTIONS = (("allow_once", "Allow"), ("allow_always", "Always allow {tool}"),
           ("reject_once", "Reject"), ("reject_always", "Always reject {tool}"))
REJECTED = "The user rejected this {tool} call; it did not run."
CANCELLED = "The user cancelled the turn before this {tool} call ran."


class PermissionGate:
    def __init__(self, peer: Peer, session_id: str, mapper: EventMapper, cwd: Path, *,
                 ask: Callable[[], bool], files: FileAccess | None, cancelled: Callable[[], bool],
                 redact: Callable[[str], str]) -> None:
        self.peer = peer
        self.session_id = session_id
        self.mapper = mapper
        self.cwd = cwd
        self.ask = ask
        self.files = files
        self.cancelled = cancelled
        self.redact = redact
        """The session's known keys out of a diff's text: an edit of a ``.env`` or models.json
        must not show the key to the editor (the tool's own result is redacted the same way)."""
        self.always: dict[str, bool] = {}
        """Tool name → True (always allow) / False (always reject), for this session."""
        self._waiting: set[asyncio.Future[Any]] = set()
        self.answered: set[str] = set()
        """Calls the permission room's gate already asked the editor about (not asked twice)."""
        self.gate_always: dict[str, bool] = {}
        """The room's questions answered "always" without a rule to write (an escalation): by
        what was asked, for this session."""

    def cancel_pending(self) -> None:
        """``session/cancel``: stop waiting for the client (open questions, preview reads). The
        client should answer a question ``cancelled`` itself; one that leaves it on screen, or
        never serves a read, must not hold the turn."""
        for waiting in list(self._waiting):
            waiting.cancel()

    async def _wait_or_abandon(self, waiting: asyncio.Future[Any], within_s: float | None = None) -> bool:
        """Whether ``waiting`` finished (with an answer or an error); False when it was abandoned:
        the turn cancelled (before or meanwhile) or ``within_s`` seconds passed."""
        if self.cancelled():
            waiting.cancel()
        self._waiting.add(waiting)
        try:
            await asyncio.wait({waiting}, timeout=within_s)  # never raises for ``waiting`` itself
        finally:
            self._waiting.discard(waiting)
            if not waiting.done():
                waiting.cancel()
        return waiting.done() and not waiting.cancelled()  # a task told to cancel is done later

    async def __call__(self, info: ToolCallInfo) -> BeforeToolCallResult | None:
        call_id, name, args = str(info.tool_call["id"]), str(info.tool_call["name"]), dict(info.args)
        if self.cancelled():
            return BeforeToolCallResult(block=True, reason=CANCELLED.format(tool=name))
        diffs = [self._redacted(d) for d in await self.preview(name, args)] if name in ("edit", "write") else None
        state = self.mapper.calls.get(call_id)
        if state is not None:
            state.diffs = diffs
        if self.cancelled():
            return BeforeToolCallResult(block=True, reason=CANCELLED.format(tool=name))
        if asks_permission(name) and self.ask() and call_id not in self.answered:
            allowed = self.always.get(name)
            if allowed is None:
                answer = await self._question(call_id, name, args, diffs)
                if answer == "cancelled" or self.cancelled():
                    return BeforeToolCallResult(block=True, reason=CANCELLED.format(tool=name))
                allowed = answer.startswith("allow")
                if answer.endswith("always"):
                    self.always[name] = allowed
            if not allowed:
                return BeforeToolCallResult(block=True, reason=REJECTED.format(tool=name))
        if state is None:  # a subagent's call (the hook guards the task tool's children too): not the editor's
            return None
        update: dict[str, Any] = {"sessionUpdate": "tool_call_update", "toolCallId": call_id, "status": "in_progress"}
        if diffs:
            update["content"] = diffs
        self.mapper.send(update)
        return None

    def _redacted(self, diff: dict[str, Any]) -> dict[str, Any]:
        return {**diff, **{key: self.redact(diff[key]) for key in ("oldText", "newText") if isinstance(diff.get(key), str)}}

    async def ask_for_room(self, request: Any) -> Any:
        """The permission room's question (``permissions.gate.PermissionRequest``: a call leaving
        the sandbox, a path outside the writable roots, an ``ask`` rule, a mode that asks) as
        ``session/request_permission`` with the four options. "Always" writes the offered rule
        (the room's ``Bash(…)``/``Edit(…)``), or without one (an escalation) holds for the same
        question in this session. Cancelled, an error or an option not offered: a denial. The
        editor is not asked again for the call by ``__call__``."""
        from pi_tui.permissions.ask import question
        from pi_tui.permissions.gate import PermissionAnswer

        key = request.rule or f"{request.tool}: {request.summary}"
        remembered = self.gate_always.get(key)
        if remembered is not None:
            if remembered:
                self.answered.add(request.call_id)
                return PermissionAnswer("once")
            return PermissionAnswer("deny", note="(rejected always)")
        if self.cancelled():
            return PermissionAnswer("deny", note="(the turn was cancelled)")
        always = f"Always allow {request.rule}" if request.rule else "Always allow this (this session)"
        options = [{"optionId": "allow_once", "name": "Allow once", "kind": "allow_once"},
                   {"optionId": "allow_always", "name": always, "kind": "allow_always"},
                   {"optionId": "reject_once", "name": "Reject", "kind": "reject_once"},
                   {"optionId": "reject_always", "name": "Always reject this", "kind": "reject_always"}]
        content = [{"type": "content", "content": {"type": "text", "text": self.redact(question(request))}}]
        title = f"{tool_title(request.tool, request.args)} — {request.reason}"
        answer = await self._question(request.call_id, request.tool, request.args, content, options=options,
                                      title=title)
        if answer == "cancelled" or self.cancelled():
            return PermissionAnswer("deny", note="(the question was cancelled)")
        allowed = answer.startswith("allow")
        if allowed:
            self.answered.add(request.call_id)
        if answer.endswith("always"):
            if allowed and request.rule:
                return PermissionAnswer("always", "user")
            self.gate_always[key] = allowed
        return PermissionAnswer("once") if allowed else PermissionAnswer("deny")

    async def _question(self, call_id: str, name: str, args: dict[str, Any], diffs: list[dict[str, Any]] | None,
                        *, options: list[dict[str, str]] | None = None, title: str | None = None) -> str:
        """The option the user chose (``allow_once`` …) or ``cancelled``."""
        tool_call: dict[str, Any] = {"toolCallId": call_id, "title": title or tool_title(name, args),
                                     "kind": tool_kind(name), "status": "pending",
                                     "locations": tool_locations(name, args, self.cwd), "rawInput": args}
        if diffs:
            tool_call["content"] = diffs
        if options is None:
            options = [{"optionId": option, "name": label.format(tool=name), "kind": option}
                       for option, label in OPTIONS]
        asking = asyncio.ensure_future(self.peer.request("session/request_permission", {
            "sessionId": self.session_id, "toolCall": tool_call, "options": options}))
        if not await self._wait_or_abandon(asking):
            return "cancelled"
        try:
            answer = asking.result()
        except (RpcError, ConnectionClosed) as err:
            print(f"pi-tui: permission request for {name} failed ({err}); treated as rejected", file=sys.stderr)
            return "reject_once"
        outcome = answer.get("outcome") if isinstance(answer, dict) else None
        if isinstance(outcome, dict) and outcome.get("outcome") == "cancelled":
            return "cancelled"
        chosen = outcome.get("optionId") if isinstance(outcome, dict) and outcome.get("outcome") == "selected" else None
        if chosen not in {option["optionId"] for option in options}:
            print(f"pi-tui: permission answer {answer!r} is not one of the options; treated as rejected", file=sys.stderr)
            return "reject_once"
        return str(chosen)

    async def preview(self, name: str, args: dict[str, Any]) -> list[dict[str, Any]]:
        """The change as whole-file text before and after; the edited pieces when the file cannot
        be read or the edit does not apply (the tool will then say why)."""
        fallback = fragment_diffs(name, args, self.cwd)
        raw = args.get("path")
        if not isinstance(raw, str) or not raw:
            return fallback
        path = resolve_to_cwd(raw, self.cwd)
        old = await self._current_text(path)
        if name == "write":
            new = args.get("content")
            if not isinstance(new, str) or len(new) + len(old or "") > PREVIEW_LIMIT:
                return fallback
            return [{"type": "diff", "path": str(path), "oldText": old, "newText": new}]
        if old is None or len(old) > PREVIEW_LIMIT:
            return fallback
        from pi_tui.core.errors import ToolError
        from pi_tui.tools.edit_diff import plan_edit

        raw_edits = args.get("edits")
        edits: list[Any] = raw_edits if isinstance(raw_edits, list) else []
        specs = [EditSpec(str(e.get("oldText", "")), str(e.get("newText", ""))) for e in edits if isinstance(e, dict)]
        try:
            planned = plan_edit(old.encode("utf-8", "surrogatepass"), specs, raw)
        except ToolError:
            return fallback
        return [{"type": "diff", "path": str(path), "oldText": planned.original, "newText": planned.new_original}]

    async def _current_text(self, path: Path) -> str | None:
        if self.files is None:
            reading: asyncio.Future[str | None] = asyncio.ensure_future(asyncio.to_thread(_disk_text, path))
        else:
            reading = asyncio.ensure_future(self.files.read_text(path))
        if not await self._wait_or_abandon(reading, PREVIEW_READ_TIMEOUT):
            return None
        try:
            return reading.result()
        except (OSError, ValueError, RpcError, ConnectionClosed):
            return None


def _disk_text(path: Path) -> str | None:
    if not path.is_file() or path.stat().st_size > PREVIEW_LIMIT:
        return None
    return path.read_text(encoding="utf-8")
