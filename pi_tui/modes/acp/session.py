"""One ACP session: a pi-tui ``AgentSession`` wired to the client.

Wiring at creation: session events → ``session/update`` (``updates.EventMapper``); the
permission gate as the session's ``before_tool_call``; the client's files as the file tools'
``FileAccess`` when it offers ``fs``; ``bash`` in a client terminal when it offers ``terminal``.

A prompt turn: the content blocks become text and images (``prompt_input``); ``/compact`` runs
the compaction, anything else goes to ``AgentSession.prompt`` (templates, skills, extension
commands expanded there). The stop reason: ``cancelled`` after ``session/cancel``; ``max_tokens``
when the last answer was cut by the output limit; ``end_turn`` otherwise. A model or provider
error that survived the retries is the turn's JSON-RPC error (-32603, the provider's message);
a missing model or key is -32000 (authentication required), naming what to set.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from pi_tui.core.deadline import within
from pi_tui.core.errors import PiError, ProviderSetupError
from pi_tui.modes.acp.client_io import ClientFiles, ClientTerminalBash
from pi_tui.modes.acp.jsonrpc import AUTH_REQUIRED, INTERNAL_ERROR, INVALID_REQUEST, Peer, RpcError
from pi_tui.modes.acp.permissions import PermissionGate
from pi_tui.modes.acp.prompt_input import (
    available_commands,
    compact_instructions,
    prompt_from_blocks,
)
from pi_tui.modes.acp.updates import EventMapper, notice

if TYPE_CHECKING:
    from pi_tui.session.agent_session import AgentSession

ABORT_TIMEOUT_SECONDS = 10.0
"""The most an abort waits for the run to settle (tools answer an abort at once; a stuck one must
not hold ``session/cancel`` or the way out)."""
PROMPT_SOURCE = "rpc"
"""The extension ``input`` event's ``source`` for ACP prompts: pi knows interactive, rpc and
extension; an editor driving pi-tui over a protocol is the RPC case."""


@dataclass(frozen=True, slots=True)
class ClientCapabilities:
    read_files: bool = False
    write_files: bool = False
    terminal: bool = False

    @classmethod
    def from_json(cls, value: Any) -> ClientCapabilities:
        caps: dict[str, Any] = value if isinstance(value, dict) else {}
        raw = caps.get("fs")
        fs: dict[str, Any] = raw if isinstance(raw, dict) else {}
        return cls(read_files=fs.get("readTextFile") is True, write_files=fs.get("writeTextFile") is True,
                   terminal=caps.get("terminal") is True)


class AcpSession:
    def __init__(self, peer: Peer, session: AgentSession, client: ClientCapabilities) -> None:
        self.peer = peer
        self.session = session
        self.id = session.session_manager.session_id
        self.cwd = session.cwd
        self.mapper = EventMapper(self.send, session.cwd)
        self._unsubscribe = session.subscribe(self.mapper)
        files = None
        if client.read_files or client.write_files:
            files = ClientFiles(peer, self.id, read=client.read_files, write=client.write_files)
            session.file_access = files
        self.gate = PermissionGate(peer, self.id, self.mapper, session.cwd, ask=self._ask_permission, files=files,
                                   cancelled=lambda: self.cancel_requested, redact=session.redactor.redact)
        session.before_tool_call = self.gate
        if client.terminal and "bash" in session.get_all_tools():
            session.replace_tool(ClientTerminalBash(peer, self.id, self.mapper))
        self.cancel_requested = False
        self.running = False
        self._settling: asyncio.Future[None] | None = None

    def send(self, update: dict[str, Any]) -> None:
        self.peer.notify("session/update", {"sessionId": self.id, "update": update})

    def _ask_permission(self) -> bool:
        """``acp.askPermission``, from the global settings only: a
        repository's own ``.pi/settings.json`` cannot switch off the user's questions."""
        files = getattr(self.session.settings, "file_settings", None)
        glob = files("global") if callable(files) else {}
        acp = glob.get("acp") if isinstance(glob, dict) else None
        return not (isinstance(acp, dict) and acp.get("askPermission") is False)

    # ------------------------------------------------------------------ after new/load

    def announce(self, notes: list[str]) -> None:
        """After the new/load answer: the commands, then what the user should know (start-up
        problems, project code skipped or loaded, MCP servers declined)."""
        self.send({"sessionUpdate": "available_commands_update", "availableCommands": available_commands(self.session)})
        for text in notes:
            self.send(notice(text))

    def startup_notes(self) -> list[str]:
        notes = [message for _source, message in self.session.diagnostics()]
        notes += list(self.session.startup_info())
        for note in notes:
            print(f"pi-tui: {note}", file=sys.stderr)
        return notes

    # ------------------------------------------------------------------ a prompt turn

    async def prompt(self, blocks: Any) -> dict[str, Any]:
        text, images = prompt_from_blocks(blocks)
        if self.running or not self.session.is_idle():
            raise RpcError(INVALID_REQUEST, "Invalid request",
                           {"details": "This session is already answering a prompt; cancel it or wait for its end."})
        self.running = True
        self.cancel_requested = False
        before = len(self.session.messages)
        try:
            instructions = compact_instructions(text)
            if instructions is not False and not images:
                await self._compact(instructions if isinstance(instructions, str) else None)
            else:
                await self.session.prompt(text, images=cast(Any, images), source=PROMPT_SOURCE)
            # An extension command's send_user_message (or a trigger_turn message) runs its turn
            # in the background: part of this prompt's answer, never updates after it.
            await self._settle()
        except ProviderSetupError as err:
            raise RpcError(AUTH_REQUIRED, "Authentication required", {"details": str(err)}) from None
        except PiError as err:
            if self.cancel_requested:
                return {"stopReason": "cancelled"}
            raise RpcError(INTERNAL_ERROR, "Internal error", {"details": str(err) or type(err).__name__}) from None
        finally:
            self.running = False
        return {"stopReason": self._stop_reason(before)}

    async def _settle(self) -> None:
        """The session's background work, until it ends or the turn is cancelled."""
        settling = asyncio.ensure_future(self.session.settle_background())
        self._settling = settling
        try:
            await asyncio.wait({settling})
        finally:
            self._settling = None
            settling.cancel()

    async def _compact(self, instructions: str | None) -> None:
        try:
            await self.session.compact(instructions)
        except PiError as err:  # compaction_end carried it when the compaction started
            print(f"pi-tui: /compact: {err}", file=sys.stderr)

    def _stop_reason(self, before: int) -> str:
        if self.cancel_requested:
            return "cancelled"
        answers = [m for m in self.session.messages[before:] if m.get("role") == "assistant"]
        if not answers:
            return "end_turn"
        last: dict[str, Any] = dict(answers[-1])
        reason = last.get("stopReason")
        if reason == "aborted":
            return "cancelled"
        if reason == "length":
            return "max_tokens"
        if reason == "error":
            raise RpcError(INTERNAL_ERROR, "Internal error", {"details": str(last.get("errorMessage") or "The model request failed")})
        return "end_turn"

    async def cancel(self) -> None:
        """``session/cancel``: stop the model call, tool runs, retry waits and compaction now."""
        if not self.running and self.session.is_idle():
            return
        await self.abort()

    async def abort(self) -> None:
        """End the turn (``session/cancel``, a signal, the end of input): what waits for the
        editor (open questions, preview reads) is abandoned first — an editor that never answers
        must not hold the abort —, then the model call, tools, retry waits and compaction stop."""
        self.cancel_requested = True
        self.gate.cancel_pending()
        await within(self.session.abort(), ABORT_TIMEOUT_SECONDS)
        if self._settling is not None:  # a background turn may start after the abort: stop waiting
            self._settling.cancel()

    async def close(self) -> None:
        self._unsubscribe()
        if self.running:
            with contextlib.suppress(TimeoutError):
                await self.abort()
        from pi_tui.session.mcp_tools import close_mcp

        await close_mcp(self.session)
        runner = self.session.extensions
        if runner is not None and runner.has_handlers("session_shutdown"):
            await runner.emit("session_shutdown", {"reason": "quit"})
        self.session.session_manager.close()
