"""Asking the user through the session's dialogs (``AgentSession.ask_user``): the TUI's select
dialog, RPC's ``extension_ui_request`` (select), ACP's client. The room never imports a mode:
it receives the ``ask_user`` callable.

For an escalation (running outside the sandbox, writing outside the writable roots, reading a
hidden path) the first option — what Enter picks — is *Deny*: approving takes a deliberate move.
Closing the dialog (Esc), a timeout or no UI at all is a denial.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

from pi_tui.core.terminal_text import printable
from pi_tui.permissions.gate import Asker, PermissionAnswer, PermissionRequest

AskUser = Callable[..., Awaitable[str | None]]
ALLOW_ONCE = "Allow once"
DENY = "Deny"
STOP = "Deny and stop the turn"


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


def options_for(request: PermissionRequest) -> list[str]:
    if request.escalation:
        return [DENY, ALLOW_ONCE, STOP]
    options = [ALLOW_ONCE]
    if request.rule is not None:
        options += [always_user(request.rule), always_project(request.rule)]
    return [*options, DENY, STOP]


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
        return PermissionAnswer("deny", note="(no answer: the dialog was closed, timed out, or there is no UI)")
    return PermissionAnswer("deny")


def asker_through(ask_user: AskUser, *, timeout_s: float | None = None) -> Asker:
    async def ask(request: PermissionRequest) -> PermissionAnswer:
        options: Sequence[str] = options_for(request)
        choice = await ask_user(question(request), list(options), timeout_s=timeout_s)
        return answer_for(choice, request)

    return ask
