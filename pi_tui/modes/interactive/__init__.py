"""The interactive mode: ``run_interactive(args)`` builds the session and runs the Textual app.

Startup is tuned for the first frame: nothing heavy is imported before the app draws. litellm
(seconds to import) is warmed in a daemon thread after the first frame, only when the chosen model
needs it. Because a thread still importing would hold up interpreter exit, the process ends with
``os._exit`` once the terminal is restored, so quitting is immediate.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any


def _session_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    if getattr(args, "no_tools", False):
        tools_allow: list[str] | None = []
    elif getattr(args, "tools", None):
        tools_allow = [t.strip() for t in args.tools.split(",") if t.strip()]
    else:
        tools_allow = None
    kwargs: dict[str, Any] = {
        "model": getattr(args, "model", None),
        "provider_name": getattr(args, "provider", None),
        "thinking_level": getattr(args, "thinking", None),
        "api_key": getattr(args, "api_key", None),
        "session": getattr(args, "session", None),
        "session_dir": getattr(args, "session_dir", None),
        "continue_session": bool(getattr(args, "continue_session", False)),
        "no_session": bool(getattr(args, "no_session", False)),
        "load_extensions": not getattr(args, "no_extensions", False),
        "extension_paths": list(getattr(args, "extensions", []) or []),
    }
    if tools_allow is not None:
        kwargs["active_tools"] = tools_allow
    return kwargs


def _needs_litellm(model: Any) -> bool:
    if model is None:
        return False
    if os.environ.get("PI_TUI_FORCE_LITELLM"):
        return True
    return not (getattr(model, "api", "") == "openai-completions" and getattr(model, "base_url", None))


def _warm_litellm() -> None:
    from pi_tui.providers.litellm_provider import preload

    preload()


def build_app(session: Any, *, cwd: Path, agent_dir: Path | None, notices: list[str] | None = None,
              messages: list[str] | None = None, warm: bool = True) -> Any:
    from pi_tui.modes.interactive.app import PiApp

    model = getattr(getattr(session, "state", None), "model", None)
    theme = None
    settings = getattr(session, "settings", None)
    if settings is not None and hasattr(settings, "get"):
        theme = settings.get("theme", None)
    return PiApp(
        session, cwd=cwd, agent_dir=agent_dir, startup_notices=notices or [], initial_messages=messages or [],
        warm_up=_warm_litellm if warm and _needs_litellm(model) else None, theme=theme,
    )


def run_interactive(args: argparse.Namespace) -> int:
    from pi_tui.core.errors import PiError
    from pi_tui.resources.locations import agent_dir as default_agent_dir
    from pi_tui.sdk import create_agent_session

    cwd = Path.cwd()
    agent = default_agent_dir()
    notices: list[str] = []
    try:
        session = create_agent_session(cwd=cwd, agent_dir=agent, **_session_kwargs(args))
    except PiError as err:
        message = str(err)
        if "model" not in message.lower():
            print(f"pi-tui: {message}", file=sys.stderr)
            return 1
        # No usable model: start anyway and show the first-run screen instead of failing.
        notices.append(message)
        session = create_agent_session(cwd=cwd, agent_dir=agent, **{**_session_kwargs(args), "model": None})
    app = build_app(session, cwd=cwd, agent_dir=agent, notices=notices, messages=list(args.messages or []))
    code = app.run()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code if isinstance(code, int) else 0)
