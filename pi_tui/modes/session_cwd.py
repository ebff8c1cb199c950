"""A resumed session whose working directory is gone (pi 0.73.1's ``core/session-cwd.ts``).

pi asks in the TUI whether to continue in the current folder (and exits if not) and refuses in
the other modes. pi-tui asks the same in the TUI; in print, JSON and RPC mode it continues in the
current folder and says so on stderr (nothing to answer there, and refusing would strand the
session)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

PROMPT_TITLE = "Session cwd not found"


def missing_session_cwd(session: Any) -> str | None:
    """The stored cwd of a session opened from an existing file, when that folder is gone."""
    manager = getattr(session, "session_manager", None)
    file = getattr(manager, "session_file", None)
    if manager is None or file is None or not Path(file).is_file():
        return None
    return _gone(manager.header.get("cwd"))


def missing_cwd_of_file(path: Path) -> str | None:
    """The cwd stored in the header (first line) of a session file not yet opened, when that
    folder is gone: the in-app ``/resume`` asks before it switches (pi's ``handleResumeSession``).
    A file without a valid header (empty, corrupt, unreadable) gives None: nothing to ask."""
    from pi_tui.core.session.jsonl import read_header

    header = read_header(Path(path))
    return _gone(header.get("cwd") if header is not None else None)


def _gone(stored: object) -> str | None:
    """``stored`` when it names a folder that no longer exists."""
    if not isinstance(stored, str) or not stored or Path(stored).is_dir():
        return None
    return stored


def missing_cwd_prompt(stored: str, current: Path) -> str:
    """pi's question, word for word."""
    return f"cwd from session file does not exist\n{stored}\n\ncontinue in current cwd\n{current}"


def missing_cwd_warning(stored: str, session_file: Path | None, current: Path) -> str:
    return (f"pi-tui: the session's working directory does not exist: {stored}"
            f"{f' (session file {session_file})' if session_file else ''}; continuing in the current one: {current}")
