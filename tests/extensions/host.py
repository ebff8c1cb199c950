"""A small in-memory ``ExtensionHost`` for runner tests: it records what extensions asked for."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pi_tui.core.messages import JsonValue


class RecordingHost:
    def __init__(self, cwd: Path) -> None:
        self._cwd = cwd
        self.notes: list[tuple[str, str]] = []
        self.sent: list[tuple[dict[str, Any], bool]] = []
        self.entries: list[tuple[str, JsonValue]] = []
        self.name: str | None = None
        self.labels: dict[str, str | None] = {}
        self.active = ["read", "bash"]
        self.compactions: list[str | None] = []
        self.aborted = 0
        self.system_prompt = "BASE PROMPT"

    @property
    def cwd(self) -> Path:
        return self._cwd

    @property
    def session_manager(self) -> Any:
        return "the session manager"

    @property
    def model(self) -> Any:
        return None

    def is_idle(self) -> bool:
        return True

    async def abort(self) -> None:
        self.aborted += 1

    async def compact(self, custom_instructions: str | None = None) -> Any:
        self.compactions.append(custom_instructions)
        return {"summary": "done"}

    def get_context_usage(self) -> Any:
        return {"tokens": 10, "contextWindow": 100, "percent": 10.0}

    def get_system_prompt(self) -> str:
        return self.system_prompt

    def send_message(self, message: dict[str, Any], *, trigger_turn: bool = False) -> None:
        self.sent.append((message, trigger_turn))

    def send_user_message(self, text: str) -> None:
        self.sent.append(({"user": text}, True))

    def append_entry(self, custom_type: str, data: JsonValue) -> str:
        self.entries.append((custom_type, data))
        return f"e{len(self.entries)}"

    def set_session_name(self, name: str) -> None:
        self.name = name

    def get_session_name(self) -> str | None:
        return self.name

    def set_label(self, entry_id: str, label: str | None) -> None:
        self.labels[entry_id] = label

    def get_active_tools(self) -> list[str]:
        return list(self.active)

    def get_all_tools(self) -> list[str]:
        return ["read", "bash", "edit", "write"]

    def set_active_tools(self, names: Sequence[str]) -> None:
        self.active = list(names)

    def notify(self, message: str, level: str) -> None:
        self.notes.append((message, level))
