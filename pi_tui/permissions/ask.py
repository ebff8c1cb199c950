"""Asking the user through the session's dialogs (``AgentSession.ask_user``): the TUI's select
dialog, RPC's ``extension_ui_request`` (select), ACP's client. The room never imports a mode:
it receives the ``ask_user`` callable.

For an escalation (running outside the sandbox, writing outside the writable roots, reading a
hidden path) the first option — what Enter picks — is *Deny*: approving takes a deliberate move.
Closing the dialog (Esc) or a timeout denies and stops the turn (nobody approved the model's
next steps either). *Deny with a note…* asks for a line (``ask_text``: the input dialog) that
reaches the model with the denial, and the turn goes on; closing that line denies without a note.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

from pi_tui.core.terminal_text import printable
from pi_tui.permissions.gate import Asker, PermissionAnswer, PermissionRequest

AskUser = Callable[..., Awaitable[str | None]]
AskText = Callable[..., Awaitable[str | None]]
"""``(title, placeholder, *, timeout_s)``: one line of text, None when closed."""
ALLOW_ONCE = "Allow once"
DENY = "Deny"
STOP = "Deny and stop the turn"
DENY_NOTE = "Deny with a note to the model…"
NOTE_TITLE = "Deny, and tell the model (it reads this with the denial):"


def always_user(rule: str) -> str:
    return f"Always allow {rule} (you, every project)"


def always_project(rule: str) -> str:
    return f"Always allow {rule} (this project, .pi/settings.json)"


def question(request: PermissionRequest) -> str:
    lines = [f"Permission: {request.tool}", f"  {request.summary}", f"  in {request.folder}",
             f"  why: {request.reason}"]
    if request.justification:
        lines.append(f"  the model says: {request.justification}")
    return printable("\n".join(lines))


def options_for(request: PermissionRequest, *, note: bool = False) -> list[str]:
    """``note``: offer *Deny with a note…* (there is a way to ask for the line)."""
    extra = [DENY_NOTE] if note else []
    if request.escalation:
        return [DENY, ALLOW_ONCE, STOP, *extra]
    options = [ALLOW_ONCE]
    if request.rule is not None:
        options += [always_user(request.rule), always_project(request.rule)]
    return [*options, DENY, STOP, *extra]


def answer_for(choice: str | None, request: PermissionRequest) -> PermissionAnswer:
    if choice == ALLOW_ONCE:
        return PermissionAnswer("once")
    if request.rule is not None and choice == always_user(request.rule):
        return PermissionAnswer("always", "user")
    if request.rule is not None and choice == always_project(request.rule):
        return PermissionAnswer("always", "project")
    if choice == STOP:
        return PermissionAnswer("stop")
    if choice is None:
        return PermissionAnswer("stop", note="(no answer: the dialog was closed or timed out; the turn is stopped)")
    return PermissionAnswer("deny")


def asker_through(ask_user: AskUser, *, ask_text: AskText | None = None, timeout_s: float | None = None) -> Asker:
    async def ask(request: PermissionRequest) -> PermissionAnswer:
        options: Sequence[str] = options_for(request, note=ask_text is not None)
        choice = await ask_user(question(request), list(options), timeout_s=timeout_s)
        if choice == DENY_NOTE and ask_text is not None:
            note = await ask_text(NOTE_TITLE, "e.g. use the test database instead", timeout_s=timeout_s)
            return PermissionAnswer("deny", note=" ".join(printable(note or "").split()))
        return answer_for(choice, request)

    return ask
