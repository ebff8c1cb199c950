"""MCP prompts as slash commands: ``/mcp__<server>__<prompt> ARGS`` (the TUI's completion lists
them). ARGS are ``name=value`` pairs or plain words taken in the prompt's argument order
(quotes group words, as in a shell); the prompt's messages' text becomes the user's message."""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pi_tui.mcp.connection import PromptSpec


def argument_hint(spec: PromptSpec) -> str:
    """``<city> [state]``: required arguments in angle brackets, optional ones in square ones."""
    parts = []
    for argument in spec.arguments:
        name = str(argument.get("name", ""))
        if name:
            parts.append(f"<{name}>" if argument.get("required") else f"[{name}]")
    return " ".join(parts)


def parse_arguments(spec: PromptSpec, text: str) -> dict[str, str]:
    """The prompt's arguments from what was typed after the command; ``ValueError`` says what is
    wrong (unbalanced quotes, an unknown name, a missing required argument, one word too many)."""
    names = [str(a.get("name", "")) for a in spec.arguments if a.get("name")]
    try:
        words = shlex.split(text)
    except ValueError as error:
        raise ValueError(f"/{spec.name}: {error}") from None
    found: dict[str, str] = {}
    positional = iter(names)
    for word in words:
        key, eq, value = word.partition("=")
        if eq and key in names:
            found[key] = value
            continue
        name = next((n for n in positional if n not in found), None)
        if name is None:
            raise ValueError(f"/{spec.name} takes {argument_hint(spec) or 'no arguments'}; "
                             f"'{word}' is one too many")
        found[name] = word
    missing = [str(a["name"]) for a in spec.arguments if a.get("required") and a.get("name") not in found]
    if missing:
        raise ValueError(f"/{spec.name} needs {', '.join(missing)} ({argument_hint(spec)})")
    return found
