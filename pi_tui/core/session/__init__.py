"""The pi-compatible session store (pi-behaviour.md §1): JSONL v3 files, the entry tree,
migrations, context projection and listing. See docs/sessions.md."""

from __future__ import annotations

from pi_tui.core.session.branching import ForkResult
from pi_tui.core.session.entries import CURRENT_SESSION_VERSION, Entry, SessionEntry, SessionHeader
from pi_tui.core.session.listing import (
    SessionInfo,
    find_most_recent_session,
    list_all_sessions,
    list_sessions,
)
from pi_tui.core.session.manager import SessionManager
from pi_tui.core.session.projection import ModelRef, SessionContext, build_session_context
from pi_tui.core.session.tree import TreeNode

__all__ = [
    "CURRENT_SESSION_VERSION",
    "Entry",
    "ForkResult",
    "ModelRef",
    "SessionContext",
    "SessionEntry",
    "SessionHeader",
    "SessionInfo",
    "SessionManager",
    "TreeNode",
    "build_session_context",
    "find_most_recent_session",
    "list_all_sessions",
    "list_sessions",
]
