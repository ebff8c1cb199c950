"""What a mode tells the SDK about permissions: light, so that a print run can say what it wants
without importing the room (``session/permission_hooks.py`` builds the gate at the first tool call
there)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pi_tui.permissions.gate import Asker


@dataclass(slots=True)
class PermissionOptions:
    """What the mode (CLI, TUI, RPC, ACP) tells the SDK about permissions."""

    mode: str | None = None
    """``--permission-mode`` / ``--yolo`` for this run (None: environment, settings, defaults)."""
    mode_source: str = "--permission-mode"
    asker: Asker | None = None
    """Who answers questions; None: every question is a denial (print/JSON)."""
    ask_through_session: bool = False
    """Ask through the session's dialogs (``AgentSession.ask_user``: TUI, RPC, ACP) when no ``asker``."""
    ask_timeout_s: float | None = None
    """How long a question waits (RPC: then it is a denial); None: as long as the person takes."""
    headless_reason: str = "nobody can answer in this mode"
    notices: list[str] = field(default_factory=list)
    """Filled by ``build_gate``: lines for the user (a warning, the missing sandbox)."""

    @property
    def answered(self) -> bool:
        """Whether someone can answer a question (else the gate may wait for the first tool call)."""
        return self.asker is not None or self.ask_through_session
