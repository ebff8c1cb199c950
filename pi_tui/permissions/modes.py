"""Permission modes and how one run picks its mode (docs/permissions.md).

* ``plan`` — read-only: reads run, edits are refused, bash runs in a read-only sandbox without network.
* ``default`` — edits in the project and sandboxed bash ask first.
* ``acceptEdits`` — edits in the project run; bash asks.
* ``auto`` — edits in the project and sandboxed bash run; only leaving the sandbox asks.
* ``dontAsk`` — as ``auto``, and whatever would ask is denied.
* ``bypassPermissions`` (``--yolo``) — pi's behaviour: no sandbox, no questions (deny rules hold).

The mode of a run, first match wins: ``--permission-mode``/``--yolo`` (this run; in an untrusted
project with one warning line), ``PI_PERMISSION_MODE`` (the same, from the environment: CI
scripts and the test suite), then in a trusted project ``permissions.defaultMode`` (project
file, then the global one), else ``auto`` where the sandbox works and ``default`` where it does
not. An untrusted project gets ``plan`` or ``default`` only: a ``defaultMode`` asking for more is
held back until the project is trusted.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Literal

Mode = Literal["plan", "default", "acceptEdits", "auto", "dontAsk", "bypassPermissions"]
MODES: tuple[Mode, ...] = ("plan", "default", "acceptEdits", "auto", "dontAsk", "bypassPermissions")
CYCLE: tuple[Mode, ...] = ("default", "acceptEdits", "auto", "plan")
"""The TUI's mode key steps through these (bypass and dontAsk only from the command line/settings)."""
UNTRUSTED_MODES: frozenset[Mode] = frozenset({"plan", "default"})
ENV_MODE = "PI_PERMISSION_MODE"
MODE_LABELS: dict[Mode, str] = {"plan": "plan", "default": "ask", "acceptEdits": "accept edits", "auto": "auto",
                                "dontAsk": "don't ask", "bypassPermissions": "bypass"}


class ModeError(ValueError):
    pass


def parse_mode(value: str, where: str) -> Mode:
    for mode in MODES:
        if value.lower() == mode.lower():
            return mode
    raise ModeError(f"{where}: unknown permission mode {value!r} (one of {', '.join(MODES)})")


@dataclass(frozen=True, slots=True)
class ModeChoice:
    """The run's mode and where it came from."""

    mode: Mode
    source: str
    """``--permission-mode``, ``PI_PERMISSION_MODE``, ``permissions.defaultMode in …``, ``default``."""
    warning: str | None = None


def choose_mode(*, flag: str | None, flag_name: str, settings_modes: list[tuple[str, str]], trusted: bool,
                sandbox_ok: bool, environ: dict[str, str] | None = None) -> ModeChoice:
    """The run's mode (see the module docstring). ``settings_modes``: ``(value, source)`` in
    priority order (project first); bad values raise ``ModeError`` naming their place."""
    env = os.environ if environ is None else environ
    for value, source in ((flag, flag_name), (env.get(ENV_MODE) or None, ENV_MODE)):
        if value:
            mode = parse_mode(value, source)
            warning = None
            if not trusted and mode not in UNTRUSTED_MODES and source != ENV_MODE:  # the env: the user's own, every run
                warning = (f"permission mode {mode} from {source} in a project you have not trusted: "
                           "it applies to this run only")
            return ModeChoice(mode, source, warning)
    for value, source in settings_modes:
        mode = parse_mode(value, f"permissions.defaultMode in {source}")
        if trusted or mode in UNTRUSTED_MODES:
            return ModeChoice(mode, f"permissions.defaultMode in {source}")
    if trusted and sandbox_ok:
        return ModeChoice("auto", "the default for a trusted project with a working sandbox")
    reason = "the project is not trusted" if not trusted else "the sandbox cannot run here"
    return ModeChoice("default", f"the default ({reason})")


def next_mode(mode: Mode, *, trusted: bool) -> Mode:
    """The TUI key's next mode; an untrusted project only steps between ``default`` and ``plan``."""
    cycle = CYCLE if trusted else tuple(m for m in CYCLE if m in UNTRUSTED_MODES)
    if mode not in cycle:
        return cycle[0]
    return cycle[(cycle.index(mode) + 1) % len(cycle)]
