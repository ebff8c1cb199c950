"""Which files a stretch of conversation read and changed (pi-behaviour.md §2.5).

The file lists are facts the program can extract exactly, so they are not left to the
summarizing model's memory: they are computed from the tool calls and appended to every summary
as ``<read-files>`` / ``<modified-files>``, cumulatively across compactions.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pi_tui.core.messages import AgentMessage


@dataclass(slots=True)
class FileOps:
    read: set[str] = field(default_factory=set)
    written: set[str] = field(default_factory=set)
    edited: set[str] = field(default_factory=set)

    def add_message(self, message: AgentMessage) -> None:
        """Record the ``read``/``write``/``edit`` tool calls of an assistant message."""
        if message.get("role") != "assistant":
            return
        for block in message.get("content", []):  # type: ignore[attr-defined]
            if not isinstance(block, dict) or block.get("type") != "toolCall":
                continue
            arguments = block.get("arguments")
            path = arguments.get("path") if isinstance(arguments, dict) else None
            if not isinstance(path, str):
                continue
            name = block.get("name")
            if name == "read":
                self.read.add(path)
            elif name == "write":
                self.written.add(path)
            elif name == "edit":
                self.edited.add(path)

    def add_messages(self, messages: Iterable[AgentMessage]) -> None:
        for message in messages:
            self.add_message(message)

    def add_details(self, details: Any) -> None:
        """Carry over the lists of an earlier pi-made summary (modified files count as edited)."""
        if not isinstance(details, Mapping):
            return
        for path in _strings(details.get("readFiles")):
            self.read.add(path)
        for path in _strings(details.get("modifiedFiles")):
            self.edited.add(path)

    def lists(self) -> tuple[list[str], list[str]]:
        """``(read_files, modified_files)``: modified = edited ∪ written; read excludes modified."""
        modified = self.edited | self.written
        return sorted(self.read - modified), sorted(modified)


def _strings(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def format_file_operations(read_files: list[str], modified_files: list[str]) -> str:
    """``\\n\\n<read-files>…</read-files>\\n\\n<modified-files>…</modified-files>``, or ``""``."""
    sections = []
    if read_files:
        sections.append("<read-files>\n" + "\n".join(read_files) + "\n</read-files>")
    if modified_files:
        sections.append("<modified-files>\n" + "\n".join(modified_files) + "\n</modified-files>")
    return "\n\n" + "\n\n".join(sections) if sections else ""
