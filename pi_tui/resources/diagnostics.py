"""Problems found while loading resources (pi's ``ResourceDiagnostic``).

Loading never stops at a bad file: the file is skipped (or loaded with a warning) and a diagnostic
names it, so the program still starts and the user can see what to fix.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

DiagnosticType = Literal["warning", "error", "collision"]


@dataclass(frozen=True, slots=True)
class Collision:
    resource_type: Literal["skill", "prompt", "extension"]
    name: str
    winner_path: Path
    loser_path: Path


@dataclass(frozen=True, slots=True)
class ResourceDiagnostic:
    type: DiagnosticType
    message: str
    path: Path | None = None
    collision: Collision | None = None

    def __str__(self) -> str:
        where = f"{self.path}: " if self.path is not None else ""
        return f"{where}{self.message}"
