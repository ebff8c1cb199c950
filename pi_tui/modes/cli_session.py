"""From parsed CLI flags to an ``AgentSession`` and the initial messages (shared by the print,
JSON and RPC modes)."""

from __future__ import annotations

import argparse
import base64
import sys
from pathlib import Path
from typing import Any

from pi_tui.core.errors import ConfigError
from pi_tui.core.messages import ImageContent
from pi_tui.sdk import create_agent_session
from pi_tui.session.agent_session import AgentSession

IMAGE_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif", ".webp": "image/webp"}


def session_from_args(args: argparse.Namespace, *, cwd: Path | None = None, **overrides: Any) -> AgentSession:
    """The session the CLI flags describe (``--model``, ``--session``, ``--tools``, …), for
    ``cwd`` (default: the process's; ACP mode: the folder the editor names)."""
    from pi_tui.resources.loader import ResourceOptions
    from pi_tui.resources.locations import agent_dir
    from pi_tui.resources.settings import load_settings

    cwd = cwd if cwd is not None else Path.cwd()
    settings = load_settings(cwd, agent_dir())
    active: list[str] | None = None
    if getattr(args, "no_tools", False):
        active = []
    elif getattr(args, "tools", None):
        active = [name.strip() for name in args.tools.split(",") if name.strip()]
    options = {
        "cwd": cwd,
        "model": getattr(args, "model", None),
        "provider_name": getattr(args, "provider", None),
        "thinking_level": getattr(args, "thinking", None),
        "api_key": getattr(args, "api_key", None),
        "active_tools": active,
        "session": getattr(args, "session", None),
        "session_dir": getattr(args, "session_dir", None),
        "continue_session": bool(getattr(args, "continue_session", False)),
        "no_session": bool(getattr(args, "no_session", False)),
        "settings": settings,
        "resource_options": ResourceOptions.from_args(args, settings),
        "load_extensions": not getattr(args, "no_extensions", False),
        "extension_paths": tuple(getattr(args, "extensions", None) or ()),
        "trust_project": True if getattr(args, "trust_project", False) else None,
        "permissions": permission_options(args),
        "mcp_config": tuple(getattr(args, "mcp_config", None) or ()),
    }
    if getattr(args, "fork", None):
        from pi_tui.sdk import apply_project_trust, fork_session_arg

        apply_project_trust(cwd, agent_dir(), settings, True if getattr(args, "trust_project", False) else None)
        options["session_manager"] = fork_session_arg(args.fork, cwd, settings, getattr(args, "session_dir", None))
    options.update(overrides)
    session = create_agent_session(**options)
    _say_if_the_cwd_is_gone(session, cwd)
    mcp_names = session.mcp is not None  # MCP tools are known only once their servers connect
    unknown = [name for name in active or [] if name not in session.get_all_tools()
               and not (mcp_names and (name == "mcp" or name.startswith("mcp__")))]
    if unknown:
        raise ConfigError(f"Unknown tool{'s' if len(unknown) > 1 else ''} in --tools: {', '.join(unknown)} "
                          f"(available: {', '.join(session.get_all_tools())})")
    if getattr(args, "no_builtin_tools", False):
        builtin = {"read", "bash", "edit", "write", "grep", "find", "ls"}
        session.set_active_tools([n for n in session.get_active_tools() if n not in builtin])
    return session


def permission_options(args: argparse.Namespace, *, ask: bool = False, ask_timeout_s: float | None = None,
                       headless_reason: str = "print mode: nobody is there to answer") -> Any:
    """``--permission-mode`` / ``--yolo``, and whether questions go to the session's dialogs
    (``ask``: TUI, RPC) or are denials (print/JSON)."""
    from pi_tui.permissions.options import PermissionOptions

    yolo = bool(getattr(args, "yolo", False))
    return PermissionOptions(mode="bypassPermissions" if yolo else getattr(args, "permission_mode", None),
                             mode_source="--yolo" if yolo else "--permission-mode", ask_through_session=ask,
                             ask_timeout_s=ask_timeout_s, headless_reason=headless_reason)


def _say_if_the_cwd_is_gone(session: AgentSession, cwd: Path) -> None:
    from pi_tui.core.terminal_text import printable
    from pi_tui.modes.session_cwd import missing_cwd_warning, missing_session_cwd

    stored = missing_session_cwd(session)
    if stored is not None:
        warning = missing_cwd_warning(stored, session.session_manager.session_file, cwd)
        print(printable(warning), file=sys.stderr)


def initial_prompts(args: argparse.Namespace, *, stdin_text: str | None) -> tuple[list[str], list[ImageContent]]:
    """The messages to send: piped stdin first, ``@file`` arguments inlined into the first
    message (text as ``<file name="…">``, images as attachments), then the rest in order."""
    texts: list[str] = []
    file_text = ""
    images: list[ImageContent] = []
    for item in getattr(args, "messages", None) or []:
        if item.startswith("@") and len(item) > 1:
            path = Path(item[1:]).expanduser().absolute()
            file_text += _file_block(path, images)
        else:
            texts.append(item)
    if stdin_text is not None and stdin_text.strip():
        texts.insert(0, stdin_text.rstrip("\n"))
    if file_text:
        if texts:
            texts[0] = file_text + texts[0]
        else:
            texts.append(file_text)
    return texts, images


def _file_block(path: Path, images: list[ImageContent]) -> str:
    try:
        data = path.read_bytes()
    except OSError as err:
        raise ConfigError(f"Cannot read @{path}: {err.strerror}") from err
    mime = IMAGE_TYPES.get(path.suffix.lower())
    if mime is not None:
        images.append({"type": "image", "data": base64.b64encode(data).decode("ascii"), "mimeType": mime})
        return f'<file name="{path}"></file>\n'
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ConfigError(f"@{path} is not a text file") from err
    return f'<file name="{path}">\n{text}\n</file>\n'


def read_piped_stdin() -> str | None:
    if sys.stdin is None or sys.stdin.isatty():
        return None
    try:
        return sys.stdin.read()
    except (OSError, ValueError):
        return None
