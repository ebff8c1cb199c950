"""Reading, locking and scoped state of one settings file (see ``settings.py`` for the policy)."""

from __future__ import annotations

import contextlib
import copy
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from pi_tui.core.regular_files import read_text_file
from pi_tui.resources import settings_schema as schema
from pi_tui.resources.diagnostics import ResourceDiagnostic
from pi_tui.resources.settings_schema import MISSING, JsonDict

LOCK_TRIES = 10
LOCK_WAIT_S = 0.02
STALE_LOCK_S = 10.0
SETTINGS_FILE_MAX_BYTES = 1024 * 1024
"""A settings file is a few KB; a bigger one (a cloned repository's trap) is not read."""

Scope = Literal["global", "project"]


class SettingsFile:
    """One settings file: its raw text as parsed (for writing) and a sanitized copy (for reading)."""

    def __init__(self, path: Path, scope: Scope) -> None:
        self.path = path
        self.scope = scope
        self.raw: JsonDict = {}
        self.effective: JsonDict = {}
        self.unparseable = False
        self.modified: dict[tuple[str, ...], Any] = {}

    def load(self, diagnostics: list[ResourceDiagnostic]) -> None:
        data, problem = read_settings_file(self.path)
        self.unparseable = problem is not None
        if problem is not None:
            diagnostics.append(ResourceDiagnostic("error", problem, self.path))
        self.raw = data
        self.effective = copy.deepcopy(data)
        schema.migrate(self.effective)
        for parts, value in self.modified.items():  # unsaved changes survive a reload
            schema.assign(self.effective, parts, value)
        for key in schema.EXPECTED_TYPES:
            parts = schema.split_path(key)
            value = schema.lookup(self.effective, parts)
            if value is MISSING:
                continue
            why = schema.type_problem(key, value)
            if why is not None:
                diagnostics.append(ResourceDiagnostic("warning", f"{why}; using the default", self.path))
                _remove(self.effective, parts)


def _remove(data: JsonDict, parts: tuple[str, ...]) -> None:
    node = schema.lookup(data, parts[:-1]) if len(parts) > 1 else data
    if isinstance(node, dict):
        node.pop(parts[-1], None)


def read_settings_file(path: Path) -> tuple[JsonDict, str | None]:
    """``(data, problem)``: a missing file is ``{}`` with no problem."""
    try:
        # Bounded and never blocking: a cloned repository's .pi/settings.json may be a FIFO (which
        # hung startup) or a huge file.
        text = read_text_file(path, SETTINGS_FILE_MAX_BYTES, "settings files")
    except FileNotFoundError:
        return {}, None
    except ValueError as exc:
        return {}, f"cannot read settings: {exc}; using defaults"
    except OSError as exc:
        return {}, f"cannot read settings: {exc}"
    if not text.strip():
        return {}, None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        return {}, f"invalid JSON in settings ({exc.msg} at line {exc.lineno}, column {exc.colno}); using defaults"
    except RecursionError:  # valid JSON nested deeper than Python's parser can go
        return {}, "invalid JSON in settings (nested too deeply); using defaults"
    if not isinstance(data, dict):
        return {}, f"settings must be a JSON object, got {type(data).__name__}; using defaults"
    return data, None


@contextlib.contextmanager
def file_lock(path: Path) -> Iterator[bool]:
    """Yield True when ``<path>.lock`` was acquired (created exclusively); always cleaned up."""
    lock = path.with_name(path.name + ".lock")
    acquired = False
    for _ in range(LOCK_TRIES):
        try:
            fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            with contextlib.suppress(OSError):
                if time.time() - lock.stat().st_mtime > STALE_LOCK_S:
                    lock.unlink()  # left behind by a crashed process
                    continue
            time.sleep(LOCK_WAIT_S)
            continue
        os.close(fd)
        acquired = True
        break
    try:
        yield acquired
    finally:
        if acquired:
            with contextlib.suppress(OSError):
                lock.unlink()
