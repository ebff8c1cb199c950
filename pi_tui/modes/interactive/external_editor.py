"""Ctrl+G: edit the message in ``$VISUAL`` / ``$EDITOR`` (pi-behaviour.md §8.2).

The editor text goes to a temp file, the external editor runs on it with the terminal handed over
(``App.suspend``), and what was saved comes back (one trailing newline dropped, as editors add
one). A failing editor leaves the message as it was.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path


class ExternalEditorError(Exception):
    """Why the external editor could not be used; the message is shown to the user."""


def editor_command(env: Mapping[str, str] | None = None) -> list[str]:
    """``$VISUAL`` else ``$EDITOR``, split like a shell would (``code --wait`` works)."""
    env = os.environ if env is None else env
    for name in ("VISUAL", "EDITOR"):
        value = env.get(name, "").strip()
        if value:
            try:
                return shlex.split(value)
            except ValueError as err:
                raise ExternalEditorError(f"${name} ({value!r}) cannot be parsed: {err}") from err
    raise ExternalEditorError("No external editor: set $VISUAL or $EDITOR (for example EDITOR=nano)")


def edit_text(text: str, command: list[str]) -> str:
    """Run ``command <tempfile>`` on ``text`` and return the saved text."""
    handle, name = tempfile.mkstemp(prefix="pi-tui-message-", suffix=".md")
    path = Path(name)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(text)
        try:
            status = subprocess.run([*command, str(path)], check=False).returncode
        except OSError as err:
            raise ExternalEditorError(f"Could not start {command[0]}: {err}") from err
        if status != 0:
            raise ExternalEditorError(f"{command[0]} exited with status {status}; the message is unchanged")
        saved = path.read_text(encoding="utf-8")
    finally:
        path.unlink(missing_ok=True)
    return saved.removesuffix("\n")
