"""Tool names the model sees: ``mcp__<server>__<tool>``, as Claude Code names them.

Providers accept ``[A-Za-z0-9_-]{1,64}`` (OpenAI's limit; Anthropic allows more), so other
characters become ``_`` and a name over 64 characters is cut and ends with a hash of the whole
original, which keeps two long names apart and the same name the same from run to run.
"""

from __future__ import annotations

import hashlib
import re

PREFIX = "mcp__"
MAX_NAME = 64
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def sanitize(part: str) -> str:
    return _UNSAFE.sub("_", part) or "_"


def tool_name(server: str, tool: str) -> str:
    name = f"{PREFIX}{sanitize(server)}__{sanitize(tool)}"
    if len(name) <= MAX_NAME:
        return name
    digest = hashlib.sha256(f"{server}\0{tool}".encode()).hexdigest()[:8]
    return f"{name[: MAX_NAME - 9]}_{digest}"


def prompt_command(server: str, prompt: str) -> str:
    """The slash command of an MCP prompt (``/mcp__server__prompt``), without the slash."""
    return tool_name(server, prompt)
