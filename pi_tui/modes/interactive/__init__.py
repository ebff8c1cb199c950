"""The interactive mode: ``run_interactive(args)`` builds the session and runs the Textual app.

Startup is tuned for the first frame: nothing heavy is imported before the app draws. litellm
(seconds to import) is warmed in a daemon thread after the first frame, only when the chosen model
needs it. Because a thread still importing would hold up interpreter exit, the process ends with
``os._exit`` once the terminal is restored, so quitting is immediate.
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pi_tui.core.exit_cleanup import exit_now

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable


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
        "mcp_config": tuple(getattr(args, "mcp_config", None) or ()),
        "trust_project": True if getattr(args, "trust_project", False) else None,
        "permissions": _permission_options(args),
    }
    if tools_allow is not None:
        kwargs["active_tools"] = tools_allow
    return kwargs


def _permission_options(args: argparse.Namespace) -> Any:
    from pi_tui.modes.cli_session import permission_options

    return permission_options(args, ask=True)


def _litellm_warm_up(model: Any) -> Callable[[], object] | None:
    """The after-first-frame warm-up for a model litellm carries (None for our own clients):
    litellm's import and its first-call cost, on a thread."""
    from pi_tui.providers.routing import uses_litellm

    if not uses_litellm(model):
        return None

    def warm() -> object:
        from pi_tui.providers.litellm_encode import litellm_name
        from pi_tui.providers.litellm_provider import preload

        return preload(litellm_name(model))

    return warm


def build_app(session: Any, *, cwd: Path, agent_dir: Path | None, notices: list[str] | None = None,
              messages: list[str] | None = None, warm: bool = True) -> Any:
    """An app around an existing session (the demo, tests, benchmarks)."""
    from pi_tui.modes.interactive.app import PiApp

    model = getattr(getattr(session, "state", None), "model", None)
    settings = getattr(session, "settings", None)
    theme = settings.get("theme", None) if settings is not None and hasattr(settings, "get") else None
    return PiApp(
        session, cwd=cwd, agent_dir=agent_dir, startup_notices=notices or [], initial_messages=messages or [],
        warm_up=_litellm_warm_up(model) if warm else None, theme=theme,
    )


def ask_trust_if_undecided(cwd: Path, agent: Path, ask: Callable[[Any], bool]) -> Any:
    """The project trust dialog, once per project: when the project holds code nobody has
    answered for, ``ask(trust)`` shows what would run and the answer is remembered in the agent
    dir (``resources/trust.py``). Returns the settings it read (the session reuses them)."""
    from pi_tui.resources.settings import load_settings
    from pi_tui.resources.trust import TrustStore
    from pi_tui.sdk import project_trust

    settings = load_settings(cwd, agent)
    trust = project_trust(cwd, agent, settings, None)
    if not trust.decided:
        TrustStore(agent).remember(trust.project, bool(ask(trust)), trust.code)
    return settings


def load_session(args: argparse.Namespace, cwd: Path, agent: Path,
                 ask_trust: Callable[[Any], bool] | None = None,
                 ask_continue: Callable[[str], bool] | None = None) -> Any:
    """Build the session as the CLI asks (runs in a thread after the first frame).

    Without a usable model the session is still built (model None) and the first-run notice
    explains what to set; any other configuration error is returned as the startup error.
    ``ask_trust`` is the project trust dialog (asked before anything of the project runs);
    ``ask_continue(question)`` asks, as pi does, whether to go on in ``cwd`` when the resumed
    session's folder is gone (no: the session is closed and nothing is loaded).
    """
    from pi_tui.core.errors import PiError
    from pi_tui.modes.interactive.app import LoadedSession
    from pi_tui.sdk import create_agent_session

    kwargs = _session_kwargs(args)
    if ask_trust is not None and kwargs["trust_project"] is None:
        kwargs["settings"] = ask_trust_if_undecided(cwd, agent, ask_trust)
    notices: list[str] = []
    try:
        session = create_agent_session(cwd=cwd, agent_dir=agent, **kwargs)
    except PiError as err:
        if kwargs.get("model") is None and kwargs.get("provider_name") is None:
            return LoadedSession(None, error=str(err))
        notices.append(str(err))
        try:
            session = create_agent_session(cwd=cwd, agent_dir=agent, **{**kwargs, "model": None, "provider_name": None})
        except PiError as second:
            return LoadedSession(None, notices=notices, error=str(second))
    if ask_continue is not None:
        from pi_tui.modes.session_cwd import missing_cwd_prompt, missing_session_cwd

        stored = missing_session_cwd(session)
        if stored is not None and not ask_continue(missing_cwd_prompt(stored, cwd)):
            session.session_manager.close()
            return LoadedSession(None, error=CWD_REFUSED)
    model = session.state.model
    return LoadedSession(session, notices=notices, warm_up=_litellm_warm_up(model))


CWD_REFUSED = "The session's working directory does not exist; not continued."


def initial_input(args: argparse.Namespace) -> tuple[list[str], list[Any]]:
    """The command line's messages. ``@file`` arguments are inlined into the first one as in
    print mode (text as ``<file name=…>``, an image as an image block sent with it); without
    any, nothing of the engine is imported (the first frame)."""
    messages = list(getattr(args, "messages", None) or [])
    if not any(m.startswith("@") and len(m) > 1 for m in messages):
        return messages, []
    from pi_tui.modes.cli_session import initial_prompts

    return initial_prompts(args, stdin_text=None)


def run_interactive(args: argparse.Namespace) -> int:
    # 30 frames/s instead of Textual's 60: streaming repaints half as often and the loop keeps
    # time for the stream itself (read by textual.constants at import, so set it first).
    os.environ.setdefault("TEXTUAL_FPS", "30")
    # Startup (imports, the session file) makes objects that live as long as the app: the garbage
    # collector would only scan them, again and again. It is off until the session is loaded
    # (PiApp._load_in_thread → settle_gc_after_startup), which turns it back on.
    gc.disable()
    from pi_tui.modes.interactive.app import PiApp
    from pi_tui.resources.locations import agent_dir as default_agent_dir

    cwd = Path.cwd()
    agent = default_agent_dir()
    from pi_tui.core.errors import PiError

    try:
        messages, images = initial_input(args)
    except PiError as err:  # an @file that cannot be read: said before the screen opens
        print(f"pi-tui: {err}", file=sys.stderr)
        return 1
    app = PiApp(None, cwd=cwd, agent_dir=agent, initial_messages=messages, initial_images=images,
                session_loader=lambda: load_session(args, cwd, agent, ask_trust=app.ask_project_trust,
                                                    ask_continue=app.ask_to_continue_here))
    try:
        code = app.run()
    finally:
        from pi_tui.tools.shell import kill_running_process_groups

        kill_running_process_groups()  # however the app ended, no command it started runs on
    # A litellm import still running in its thread would hold interpreter exit for seconds.
    sys.stdout.flush()
    sys.stderr.flush()
    exit_now(code if isinstance(code, int) else 0)
