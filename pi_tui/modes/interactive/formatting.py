"""Small pure formatters shared by the footer, the events pane and the tool panels.

They follow pi's footer conventions (pi-behaviour.md §8.3) so numbers read the same in both programs.
"""

from __future__ import annotations

import os
from pathlib import Path


def format_tokens(count: int | float) -> str:
    """pi's token format: <1000 as is, <10k as ``1.2k``, <1M as ``12k``, <10M as ``1.2M``, else ``12M``."""
    n = int(count)
    if n < 1000:
        return str(n)
    if n < 10_000:
        return f"{n / 1000:.1f}k"
    if n < 1_000_000:
        return f"{round(n / 1000)}k"
    if n < 10_000_000:
        return f"{n / 1_000_000:.1f}M"
    return f"{round(n / 1_000_000)}M"


def format_thousands(count: int | float) -> str:
    """``7412`` → ``7,412`` (exact figures in the events pane)."""
    return f"{int(count):,}"


def format_bytes(count: int) -> str:
    """pi's ``formatSize``: ``NB``, ``x.xKB``, ``x.xMB``."""
    if count < 1024:
        return f"{count}B"
    if count < 1024 * 1024:
        return f"{count / 1024:.1f}KB"
    return f"{count / (1024 * 1024):.1f}MB"


def format_duration(seconds: float) -> str:
    """``0.4s``, ``3.2s``, ``1m05s``."""
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, rest = divmod(int(seconds), 60)
    return f"{minutes}m{rest:02d}s"


def format_cost(dollars: float) -> str:
    return f"${dollars:.3f}" if dollars < 1 else f"${dollars:.2f}"


def tilde_path(path: str | Path) -> str:
    """The path with the home directory shown as ``~`` (as pi's footer does)."""
    text = str(path)
    home = os.path.expanduser("~")
    if home and home != "/" and (text == home or text.startswith(home + os.sep)):
        return "~" + text[len(home):]
    return text


def git_branch(cwd: Path) -> str | None:
    """The current branch from ``.git/HEAD`` without running git (the footer must stay cheap)."""
    for folder in (cwd, *cwd.parents):
        head = folder / ".git" / "HEAD"
        if head.is_file():
            try:
                text = head.read_text(encoding="utf-8").strip()
            except OSError:
                return None
            prefix = "ref: refs/heads/"
            return text[len(prefix):] if text.startswith(prefix) else text[:8]
    return None


def one_line(text: str, limit: int) -> str:
    """Collapse whitespace and cut to ``limit`` characters with an ellipsis."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: max(0, limit - 1)] + "…"


def context_bar(percent: float | None, width: int = 10) -> str:
    """A block bar for the footer: ``▇▇▇▁▁▁▁▁▁▁``; all light when the usage is unknown."""
    if percent is None:
        return "▁" * width
    filled = max(0, min(width, round(percent / 100 * width)))
    return "▇" * filled + "▁" * (width - filled)
