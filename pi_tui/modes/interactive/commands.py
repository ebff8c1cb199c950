"""Slash commands: the built-ins (pi-behaviour.md §8.1) and the completion sources.

Completion lists built-in commands, extension commands, prompt templates (with description and
argument hint), skills (``/skill:name``) and the MCP servers' prompts (``/mcp__server__prompt``,
run by ``mcp_flow``), in that order. Templates, skills and extension commands
are *not* run here: the session expands them in ``prompt()`` (§6.1), so typing them is the same as
sending them from print or RPC mode.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

CommandSource = Literal["builtin", "template", "skill", "extension", "mcp"]


@dataclass(frozen=True, slots=True)
class SlashCommand:
    name: str
    """Without the leading slash (``compact``, ``review``, ``skill:pdf``)."""
    description: str = ""
    argument_hint: str = ""
    source: CommandSource = "builtin"


BUILTIN_COMMANDS: tuple[SlashCommand, ...] = (
    SlashCommand("compact", "Manually compact the session context", "[focus instructions]"),
    SlashCommand("context", "What the model receives next, part by part, with token counts"),
    SlashCommand("tree", "Navigate the session tree (switch branches)"),
    SlashCommand("fork", "Branch into a new session from an earlier message"),
    SlashCommand("new", "Start a new session"),
    SlashCommand("resume", "Resume another session"),
    SlashCommand("session", "Session info: file, ids, messages, tokens, cost"),
    SlashCommand("name", "Set the session display name", "<name>"),
    SlashCommand("model", "Select a model", "[search]"),
    SlashCommand("settings", "Thinking level, theme, auto-compaction, context strategy"),
    SlashCommand("export", "Export the session to HTML", "[file]"),
    SlashCommand("copy", "Copy the last assistant answer to the clipboard"),
    SlashCommand("hotkeys", "List the keyboard shortcuts"),
    SlashCommand("reload", "Reload settings, prompt templates, skills and context files"),
    SlashCommand("template", "Pick a prompt template, or run one: /template NAME args", "[name] [args]"),
    SlashCommand("mcp", "MCP servers: state, tools and their token cost, errors, log; reconnect, enable/disable"),
    SlashCommand("trust", "Review this project's code (extensions, shell settings) and whether it may run"),
    SlashCommand("subagent", "Open a subagent's session read-only (the last task's, or the Nth)", "[N]"),
    SlashCommand("undo", "Go back to before the last prompt, files included"),
    SlashCommand("redo", "Return to where the last /undo left, files included"),
    SlashCommand("quit", "Quit pi-tui"),
)
BUILTIN_NAMES = frozenset(c.name for c in BUILTIN_COMMANDS)


def parse_slash(text: str) -> tuple[str, str] | None:
    """``/name rest`` → (``name``, ``rest``); None when the text is not a slash command."""
    if not text.startswith("/") or text.startswith("//"):
        return None
    body = text[1:]
    name, _, rest = body.partition(" ")
    if not name or "\n" in name:
        return None
    return name, rest.strip()


def _attr(obj: Any, *names: str, default: Any = "") -> Any:
    for name in names:
        if isinstance(obj, dict) and name in obj:
            return obj[name]
        if hasattr(obj, name):
            return getattr(obj, name)
    return default


def _one_line(text: Any) -> str:
    return " ".join(str(text or "").split())


def template_commands(templates: Iterable[Any]) -> list[SlashCommand]:
    return [
        SlashCommand(
            str(_attr(t, "name")),
            _one_line(_attr(t, "description")),
            _one_line(_attr(t, "argument_hint", "argumentHint", "argument-hint")),
            "template",
        )
        for t in templates
        if _attr(t, "name")
    ]


def skill_commands(skills: Iterable[Any]) -> list[SlashCommand]:
    return [
        SlashCommand(f"skill:{_attr(s, 'name')}", _one_line(_attr(s, "description")), "[args]", "skill")
        for s in skills
        if _attr(s, "name")
    ]


def extension_commands(commands: Iterable[Any]) -> list[SlashCommand]:
    out: list[SlashCommand] = []
    for c in commands:
        name = _attr(c, "invocation_name", "name")
        if name:
            out.append(SlashCommand(str(name), _one_line(_attr(c, "description")), "", "extension"))
    return out


def mcp_prompt_commands(session: Any) -> list[SlashCommand]:
    """The connected MCP servers' prompts as ``/mcp__server__prompt`` (run by ``mcp_flow``)."""
    manager = getattr(session, "mcp", None)
    if manager is None:
        return []
    from pi_tui.mcp.prompts import argument_hint

    return [SlashCommand(name, _one_line(prompt.description) or f"MCP prompt of {connection.name}",
                         argument_hint(prompt), "mcp")
            for name, (connection, prompt) in manager.prompt_commands().items()]


def collect_commands(session: Any) -> list[SlashCommand]:
    """Every command the editor can complete for this session (built-ins first, no duplicates).

    Reads the session's loaded resources defensively: a part that is missing (no extensions,
    resources still loading) simply contributes nothing.
    """
    resources = getattr(session, "resources", None)
    templates = _attr(resources, "prompt_templates", "templates", default=()) or ()
    skills = _attr(resources, "skills", default=()) or ()
    ext_source = getattr(session, "extension_commands", None) or getattr(session, "extensions", None)
    ext = _attr(ext_source, "commands", default=()) if ext_source is not None else ()
    if callable(ext):
        ext = ext()
    if isinstance(ext, dict):
        ext = list(ext.values())
    seen: set[str] = set()
    out: list[SlashCommand] = []
    for command in [*BUILTIN_COMMANDS, *extension_commands(ext or ()), *template_commands(templates),
                    *skill_commands(skills), *mcp_prompt_commands(session)]:
        if command.name not in seen:
            seen.add(command.name)
            out.append(command)
    return out


def complete_slash(prefix: str, commands: Iterable[SlashCommand], *, limit: int = 12) -> list[SlashCommand]:
    """Commands whose name starts with ``prefix``, then those containing it (case-insensitive)."""
    needle = prefix.lower()
    starts = [c for c in commands if c.name.lower().startswith(needle)]
    contains = [c for c in commands if needle in c.name.lower() and c not in starts] if needle else []
    return (starts + contains)[:limit]
