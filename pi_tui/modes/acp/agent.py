"""The ACP methods pi-tui answers (protocol version 1).

``initialize`` (version negotiation, capabilities, auth methods when nothing is configured),
``authenticate``, ``session/new``, ``session/load`` (pi session files; the branch replayed before
the answer), ``session/list``, ``session/prompt``, ``session/cancel`` (a notification). Every
session is an ``AcpSession`` over its own ``AgentSession`` (the CLI flags apply to each; the
folder is the client's ``cwd``). Session ids are pi's session ids, so the id a client keeps is
the one ``pi-tui --session ID`` resumes in the TUI, and the reverse.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
from pathlib import Path
from typing import Any

from pi_tui import __version__
from pi_tui.core.errors import ConfigError, PiError, ProviderSetupError
from pi_tui.modes.acp.jsonrpc import (
    AUTH_REQUIRED,
    RESOURCE_NOT_FOUND,
    Peer,
    RpcError,
    invalid_params,
)
from pi_tui.modes.acp.replay import replay_updates
from pi_tui.modes.acp.session import AcpSession, ClientCapabilities

PROTOCOL_VERSION = 1
SETUP_METHOD = "pi-tui-setup"


def _str(params: dict[str, Any], name: str, method: str) -> str:
    value = params.get(name)
    if not isinstance(value, str) or not value:
        problem = "is missing" if value is None else "must be a non-empty string"
        raise invalid_params(f"{method}: {name} {problem}")
    return value


def _cwd(params: dict[str, Any], method: str) -> Path:
    raw = _str(params, "cwd", method)
    path = Path(raw)
    if not path.is_absolute():
        raise invalid_params(f"{method}: cwd must be an absolute path, not {raw!r}")
    if not path.is_dir():
        raise invalid_params(f"{method}: cwd {raw} is not a folder")
    return path


def _mcp_servers(params: dict[str, Any], method: str) -> tuple[list[Any], list[str]]:
    """The editor's MCP servers (``pi_tui/mcp``; stdio, http, sse) and what was wrong with any."""
    servers = params.get("mcpServers", [])
    if not isinstance(servers, list):
        raise invalid_params(f"{method}: mcpServers must be a list")
    if not servers:
        return [], []
    from pi_tui.mcp.config import editor_servers

    notes: list[str] = []
    return editor_servers(servers, notes), notes


class AcpAgent:
    def __init__(self, peer: Peer, args: argparse.Namespace) -> None:
        self.peer = peer
        self.args = args
        self.client = ClientCapabilities()
        self.initialized = False
        self.sessions: dict[str, AcpSession] = {}
        peer.requests.update({
            "initialize": self.initialize, "authenticate": self.authenticate,
            "session/new": self.new_session, "session/load": self.load_session,
            "session/list": self.list_sessions, "session/prompt": self.prompt,
        })
        peer.notifications["session/cancel"] = self.cancel

    # ------------------------------------------------------------------ connection

    async def initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        # The spec: answer the client's version if we speak it, else our latest. We speak only 1,
        # so every client gets 1 (and closes the connection if it cannot speak it). Clients from
        # before version 1 sent a date string ("2024-11-05"): answered 1 too, as the SDKs do.
        version = params.get("protocolVersion")
        if not isinstance(version, (int, str)) or isinstance(version, bool):
            raise invalid_params("initialize: protocolVersion must be an integer")
        self.client = ClientCapabilities.from_json(params.get("clientCapabilities"))
        self.initialized = True
        problem = await asyncio.to_thread(self.setup_problem)
        auth = [] if problem is None else [{
            "id": SETUP_METHOD, "name": "Configure a model",
            "description": f"{problem}\nThen choose this again (or restart the agent).",
        }]
        return {
            "protocolVersion": PROTOCOL_VERSION,
            "agentCapabilities": {
                "loadSession": True,
                "promptCapabilities": {"image": True, "audio": False, "embeddedContext": True},
                "mcpCapabilities": {"http": True, "sse": True},
                "sessionCapabilities": {"list": {}},
            },
            "agentInfo": {"name": "pi-tui", "title": "pi-tui", "version": __version__},
            "authMethods": auth,
        }

    def setup_problem(self) -> str | None:
        """What is missing before a prompt could run (no model, no key), or None."""
        from pi_tui.providers.models import ModelRegistry, parse_model_ref
        from pi_tui.resources.locations import agent_dir
        from pi_tui.resources.settings import load_settings

        settings = load_settings(Path.cwd(), agent_dir())
        registry = ModelRegistry.for_agent_dir(agent_dir())
        ref = getattr(self.args, "model", None)
        try:
            model = registry.initial_model(parse_model_ref(ref)[0] if ref else None, getattr(self.args, "provider", None),
                                           default_provider=settings.default_provider,
                                           default_model=settings.default_model)
            registry.require_api_key(model, getattr(self.args, "api_key", None))
        except (ProviderSetupError, ConfigError) as err:
            return str(err)
        return None

    async def authenticate(self, params: dict[str, Any]) -> dict[str, Any]:
        method = _str(params, "methodId", "authenticate")
        if method != SETUP_METHOD:
            raise invalid_params(f"authenticate: unknown methodId {method!r} (pi-tui offers {SETUP_METHOD!r})")
        problem = await asyncio.to_thread(self.setup_problem)
        if problem is not None:
            raise RpcError(AUTH_REQUIRED, "Authentication required", {"details": problem})
        return {}

    def _require_initialized(self, method: str) -> None:
        if not self.initialized:
            raise RpcError(-32600, "Invalid request", {"details": f"{method}: call initialize first"})

    # ------------------------------------------------------------------ sessions

    async def new_session(self, params: dict[str, Any]) -> dict[str, Any]:
        self._require_initialized("session/new")
        cwd = _cwd(params, "session/new")
        mcp, mcp_notes = _mcp_servers(params, "session/new")
        acp_session = await self._open(cwd, None, mcp)
        notes = acp_session.startup_notes() + mcp_notes
        asyncio.get_running_loop().call_soon(acp_session.announce, notes)  # after the answer
        return {"sessionId": acp_session.id}

    async def load_session(self, params: dict[str, Any]) -> dict[str, Any]:
        self._require_initialized("session/load")
        session_id = _str(params, "sessionId", "session/load")
        cwd = _cwd(params, "session/load")
        mcp, mcp_notes = _mcp_servers(params, "session/load")
        existing = self.sessions.pop(session_id, None)
        if existing is not None:  # loaded again: start over from the file
            await existing.close()
        path = self._session_path(session_id, cwd)
        acp_session = await self._open(cwd, path, mcp)
        manager = acp_session.session.session_manager
        for update in replay_updates(list(manager.get_branch()), cwd):
            acp_session.send(update)
        notes = [f"{w} ({manager.session_file})" for w in getattr(manager, "load_warnings", [])]
        notes = acp_session.startup_notes() + notes + mcp_notes
        asyncio.get_running_loop().call_soon(acp_session.announce, notes)
        return {}

    def _session_path(self, session_id: str, cwd: Path) -> Path:
        from pi_tui.resources.locations import default_session_dir
        from pi_tui.resources.settings import load_settings
        from pi_tui.sdk import apply_project_trust, resolve_session_arg

        if any(sep in session_id for sep in ("/", "\\")) or session_id.endswith(".jsonl"):
            raise invalid_params("session/load: sessionId is a session id, not a path")
        settings = load_settings(cwd, _agent_dir())
        apply_project_trust(cwd, _agent_dir(), settings, True if getattr(self.args, "trust_project", False) else None)
        directory = default_session_dir(cwd, setting=settings.session_dir, flag=getattr(self.args, "session_dir", None))
        try:
            path = resolve_session_arg(session_id, directory)
        except ConfigError as err:
            raise RpcError(RESOURCE_NOT_FOUND, "Resource not found", {"uri": session_id, "details": str(err)}) from None
        if path.stem.split("_", 1)[-1] != session_id:
            raise RpcError(RESOURCE_NOT_FOUND, "Resource not found",
                           {"uri": session_id, "details": f"No session with id {session_id} in {directory}"})
        return path

    async def _open(self, cwd: Path, path: Path | None, mcp_servers: list[Any]) -> AcpSession:
        from pi_tui.core.session.manager import SessionManager
        from pi_tui.modes.cli_session import permission_options, session_from_args
        from pi_tui.permissions.gate import PermissionAnswer

        permissions = permission_options(self.args, headless_reason="ACP")
        editor: list[Any] = []  # the AcpSession's question, once it exists

        async def ask_editor(request: Any) -> Any:
            return await editor[0](request) if editor else PermissionAnswer("deny", note="(no editor session yet)")

        permissions.asker = ask_editor
        overrides: dict[str, Any] = {"session": None, "continue_session": False, "mcp_servers": mcp_servers,
                                     "permissions": permissions}
        try:
            if path is not None:
                overrides["session_manager"] = SessionManager.open(path, cwd=cwd)
            session = session_from_args(self.args, cwd=cwd, **overrides)
        except PiError as err:
            manager = overrides.get("session_manager")
            if manager is not None:
                manager.close()
            raise RpcError(-32603, "Internal error", {"details": str(err)}) from None
        if session.model is None:
            problem = await asyncio.to_thread(self.setup_problem)
            session.session_manager.close()
            raise RpcError(AUTH_REQUIRED, "Authentication required", {"details": problem or "No model selected."})
        try:
            await session.start()
        except PiError as err:
            session.add_diagnostic("session", f"start-up failed: {err}")
        acp_session = AcpSession(self.peer, session, self.client)
        editor.append(acp_session.gate.ask_for_room)
        self.sessions[acp_session.id] = acp_session
        return acp_session

    async def list_sessions(self, params: dict[str, Any]) -> dict[str, Any]:
        from pi_tui.core.session.listing import list_all_sessions, list_sessions
        from pi_tui.resources.locations import default_session_dir, sessions_root

        raw = params.get("cwd")
        if raw is not None and not (isinstance(raw, str) and os.path.isabs(raw)):
            raise invalid_params("session/list: cwd must be an absolute path")
        if raw is None:
            found = await asyncio.to_thread(list_all_sessions, sessions_root())
        else:
            directory = default_session_dir(Path(raw), flag=getattr(self.args, "session_dir", None))
            found = await asyncio.to_thread(list_sessions, directory)
        found = sorted(found, key=lambda info: info.modified, reverse=True)
        return {"sessions": [{
            "sessionId": info.id, "cwd": info.cwd, "title": info.name or info.first_message[:80] or None,
            "updatedAt": info.to_json()["modified"],
        } for info in found]}

    # ------------------------------------------------------------------ turns

    def _session(self, params: dict[str, Any], method: str) -> AcpSession:
        session_id = _str(params, "sessionId", method)
        found = self.sessions.get(session_id)
        if found is None:
            raise RpcError(RESOURCE_NOT_FOUND, "Resource not found",
                           {"uri": session_id, "details": f"{method}: no open session {session_id} (session/new or session/load first)"})
        return found

    async def prompt(self, params: dict[str, Any]) -> dict[str, Any]:
        acp_session = self._session(params, "session/prompt")
        return await acp_session.prompt(params.get("prompt"))

    async def cancel(self, params: dict[str, Any]) -> None:
        await self._session(params, "session/cancel").cancel()

    async def abort_running(self) -> None:
        """Stop every running turn (end of input, a signal): the aborts are recorded."""
        for acp_session in list(self.sessions.values()):
            if acp_session.running:
                with contextlib.suppress(TimeoutError):  # bounded; the way out goes on
                    await acp_session.abort()

    async def close(self) -> None:
        for acp_session in list(self.sessions.values()):
            await acp_session.close()
        self.sessions.clear()


def _agent_dir() -> Path:
    from pi_tui.resources.locations import agent_dir

    return agent_dir()


