"""The project trust dialog: once per project that holds code, before any of it runs.

It names the folder and exactly what would run (``resources.trust.ProjectCode``), says what
stays loaded without trust, and takes ``t`` (trust) or ``n``/Esc (not now). Enter does nothing
here on purpose: an Enter typed ahead while pi-tui starts must not trust a repository.
"""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static


def trust_text(trust: Any, trust_file: str) -> tuple[str, str]:
    """The dialog's body and footnote for a ``ProjectTrust`` (plain text, used as is)."""
    new = {item.key() for item in getattr(trust, "new_code", [])}
    lines = [
        trust.project,
        "",
        "This folder contains code that pi-tui would run on your computer, with your permissions, or "
        "settings that reach outside it:",
        "",
    ]
    for item in trust.code:
        mark = "(new) " if item.key() in new else ""
        lines.append(f"  • {mark}{item.describe()}")
    lines += [
        "",
        "Trust it only if you know who wrote it. A repository you cloned can be hostile, and once "
        "trusted this code runs without asking again.",
        "",
        "Not now: these are skipped. The project's AGENTS.md, SYSTEM.md, prompts and skills still "
        "load — they are text, not code, but they can still steer the model.",
    ]
    note = f"t trust this project   n / esc not now      (remembered in {trust_file}; /trust changes it)"
    return "\n".join(lines), note


class ProjectTrustScreen(ModalScreen[bool]):
    """Ask whether the project's code may run; dismisses with True (trust) or False."""

    CSS_PATH = "trust.tcss"
    BINDINGS = [  # noqa: RUF012
        Binding("t", "answer(True)", "Trust", id="trust.yes"),
        Binding("n,escape", "answer(False)", "Not now", id="trust.no"),
    ]

    def __init__(self, trust: Any, *, trust_file: str) -> None:
        super().__init__()
        self._body, self._note = trust_text(trust, trust_file)

    def compose(self) -> ComposeResult:
        with Vertical(id="trust-dialog"):
            yield Static("Trust the code in this project?", id="trust-title")
            yield Static(Content(self._body), id="trust-body")
            yield Static(Content(self._note), id="trust-help")

    def action_answer(self, trusted: bool) -> None:
        self.dismiss(trusted)
