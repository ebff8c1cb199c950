"""Where the built-in ``prompts/`` and ``skills/`` folders live.

The wheel maps the repo-root ``prompts/`` and ``skills/`` to ``pi_tui/_builtin/…`` (pyproject
``force-include``); an editable checkout has no ``_builtin`` folder, so we fall back to the repo
root. Either way the caller gets a directory that may not exist (then nothing is built in).
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent.parent
_REPO_ROOT = _PACKAGE_DIR.parent


def _builtin_dir(name: str) -> Path:
    installed = _PACKAGE_DIR / "_builtin" / name
    if installed.is_dir():
        return installed
    return _REPO_ROOT / name


def builtin_prompts_dir() -> Path:
    return _builtin_dir("prompts")


def builtin_skills_dir() -> Path:
    return _builtin_dir("skills")


def docs_root() -> Path:
    """The project README/docs/examples root, named in the default system prompt."""
    return _REPO_ROOT
