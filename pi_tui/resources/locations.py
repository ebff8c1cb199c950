"""Where pi-tui finds its files (pi-behaviour.md §0, §1.1, §13.1).

The agent dir is shared with pi on purpose: one ``~/.pi/agent`` configures both programs.
"""

from __future__ import annotations

import os
from pathlib import Path

CONFIG_DIR_NAME = ".pi"
AGENT_DIR_ENV = "PI_CODING_AGENT_DIR"
SESSION_DIR_ENV = "PI_CODING_AGENT_SESSION_DIR"


def expand_home(value: str) -> Path:
    """Expand a leading ``~`` or ``~/`` (only those, as pi does)."""
    if value == "~":
        return Path.home()
    if value.startswith("~/"):
        return Path.home() / value[2:]
    return Path(value)


def normalized_path(base: Path, path: Path) -> Path:
    """``path`` against ``base``, with ``.``/``..`` folded lexically as pi's ``path.resolve`` does
    (symlinks stay as written: the location a skill is shown at is the one the user named)."""
    return Path(os.path.normpath(base / path))


def agent_dir() -> Path:
    """``$PI_CODING_AGENT_DIR`` or ``~/.pi/agent``."""
    env = os.environ.get(AGENT_DIR_ENV)
    if env:
        return expand_home(env)
    return Path.home() / CONFIG_DIR_NAME / "agent"


def project_dir(cwd: Path) -> Path:
    """The project config dir ``<cwd>/.pi``."""
    return cwd / CONFIG_DIR_NAME


def encode_cwd(cwd: str) -> str:
    """``/Users/a/proj`` → ``--Users-a-proj--`` (drop one leading separator, map / \\ : to -)."""
    if cwd[:1] in ("/", "\\"):
        cwd = cwd[1:]
    for ch in "/\\:":
        cwd = cwd.replace(ch, "-")
    return f"--{cwd}--"


def sessions_root() -> Path:
    return agent_dir() / "sessions"


def default_session_dir(cwd: Path, *, setting: str | None = None, flag: str | None = None) -> Path:
    """The session dir for a cwd: ``--session-dir``, then the env var, then the setting, then
    ``<agentDir>/sessions/--<encoded cwd>--/``."""
    if flag:
        return expand_home(flag)
    env = os.environ.get(SESSION_DIR_ENV)
    if env:
        return expand_home(env)
    if setting:
        return expand_home(setting)
    return sessions_root() / encode_cwd(str(cwd))
