"""Path arguments as pi reads them (pi-behaviour.md §4 "Paths", §13.4).

Models copy paths from chat text, so the tools forgive what chat does to them: an ``@`` mention
prefix, Unicode spaces pasted in place of plain ones, ``~``. ``read`` also tries the variants
macOS puts in screenshot names (a narrow no-break space before AM/PM, NFD file names, a curly
apostrophe), because a model can only type the plain form.
"""

from __future__ import annotations

import os
import re
import unicodedata
from pathlib import Path

_UNICODE_SPACES = re.compile("[\u00a0\u2000-\u200a\u202f\u205f\u3000]")
_AM_PM = re.compile(r" (AM|PM)\.", re.IGNORECASE)
_NARROW_NO_BREAK_SPACE = "\u202f"


def expand_path(raw: str) -> str:
    """Strip ``@``, normalise Unicode spaces, expand ``~`` / ``~/`` (nothing else)."""
    text = raw[1:] if raw.startswith("@") else raw
    text = _UNICODE_SPACES.sub(" ", text)
    if text == "~":
        return str(Path.home())
    if text.startswith("~/"):
        return str(Path.home()) + text[1:]
    return text


def resolve_to_cwd(raw: str, cwd: Path | str) -> Path:
    """The absolute path for a tool argument; relative paths are taken from ``cwd``."""
    expanded = expand_path(raw)
    joined = expanded if os.path.isabs(expanded) else os.path.join(os.fspath(cwd), expanded)
    return Path(os.path.normpath(joined))


def _read_variants(resolved: str) -> list[str]:
    nfd = unicodedata.normalize("NFD", resolved)
    return [
        _AM_PM.sub(lambda m: f"{_NARROW_NO_BREAK_SPACE}{m.group(1)}.", resolved),
        nfd,
        resolved.replace("'", "\u2019"),
        nfd.replace("'", "\u2019"),
    ]


def resolve_read_path(raw: str, cwd: Path | str) -> Path:
    """Like ``resolve_to_cwd`` but, when that file is missing, try the macOS name variants."""
    resolved = resolve_to_cwd(raw, cwd)
    if resolved.exists():
        return resolved
    text = os.fspath(resolved)
    for variant in _read_variants(text):
        if variant != text and os.path.exists(variant):
            return Path(variant)
    return resolved
