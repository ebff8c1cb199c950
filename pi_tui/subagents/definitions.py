"""Agent definitions: what a ``task`` call's ``subagent_type`` names.

Markdown files with YAML frontmatter, body = the child's system prompt, read from (first wins
on a name): ``<cwd>/.pi/agents/*.md``, ``<cwd>/.claude/agents/*.md`` (Claude Code's files,
unchanged), ``<agentDir>/agents/*.md``; then the built-ins ``general`` and ``explore`` (a file
of the same name replaces a built-in).

Frontmatter keys honoured: ``name`` (default: the file name), ``description`` (shown to the
model in the tool's description), ``tools`` (a list or a comma-separated string; Claude Code's
names ``Read``, ``Write``, ``Edit``, ``MultiEdit``, ``Bash``, ``Grep``, ``Glob``, ``LS`` map to
ours; absent = the parent's tools), ``model`` (``provider/id``; Claude Code's ``inherit``,
``sonnet``, ``opus``, ``haiku`` mean the parent's model), ``thinking`` (off … xhigh). Other keys
(``color``, ``permissionMode``, ``hooks`` …) are ignored. Project definitions are text, like
prompt templates: no trust is needed, and a definition never grants a tool the parent lacks
(``child_tool_names``). A bad file is skipped with a diagnostic naming the file and line.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pi_tui.core.regular_files import read_text_file
from pi_tui.resources.diagnostics import ResourceDiagnostic
from pi_tui.resources.frontmatter import FrontmatterError, normalize_newlines, parse_frontmatter
from pi_tui.resources.scan import list_markdown_files

MAX_DEFINITION_BYTES = 256 * 1024
THINKING_LEVELS = ("off", "minimal", "low", "medium", "high", "xhigh")
CLAUDE_TOOL_NAMES = {"read": "read", "write": "write", "edit": "edit", "multiedit": "edit", "bash": "bash",
                     "grep": "grep", "glob": "find", "ls": "ls", "find": "find"}
PARENT_MODEL_ALIASES = frozenset({"inherit", "sonnet", "opus", "haiku"})
READ_ONLY_TOOLS = ("read", "grep", "find", "ls")
"""Search tools that reveal nothing ``read`` cannot: a child may have them whenever the parent
can read, even if the parent has them switched off (pi's default tool set lacks them)."""
_NAME = re.compile(r"^[^\x00-\x1f\x7f]{1,64}$")
"""Any single line up to 64 characters: Claude Code files in the wild use names like
``"Code Reviewer 👀"``; the model passes the name back as ``subagent_type``."""


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentDefinition:
    name: str
    description: str
    system_prompt: str | None
    """The body; None = the parent's system prompt (built for the child's tools)."""
    tools: tuple[str, ...] | None
    """Our tool names; None = the parent's tools."""
    model: str | None = None
    """``provider/id``; None = the parent's model."""
    thinking: str | None = None
    path: Path | None = None
    """The file; None for a built-in."""
    ignored_tools: tuple[str, ...] = ()
    """Names in ``tools`` pi-tui has no tool for (Claude Code's WebFetch …)."""
    read_only: bool = False
    """The child's permission mode is ``plan`` whatever the parent's: bash in the read-only
    sandbox without network, edits refused (without a permission gate it gets no bash)."""


GENERAL = AgentDefinition(
    name="general",
    description="General-purpose agent for research and multi-step tasks: searches, reads, runs commands and "
                "reports back. Has your tools except task.",
    system_prompt=None,
    tools=None,
)
EXPLORE = AgentDefinition(
    name="explore",
    description="Fast read-only exploration: finds files, searches and reads code to answer a question about the "
                "codebase; cannot change anything. Say how thorough to be.",
    system_prompt=(
        "You are an exploration agent working for another agent. Find and read what is needed to answer the "
        "question you are given, using read, grep, find and ls, and bash for read-only commands (git log, "
        "git grep, listing, running a script that prints). You cannot modify anything: bash runs in a "
        "read-only sandbox without network.\n"
        "Be efficient: search before reading, read only the parts that matter.\n"
        "Your final message is the only thing the other agent receives: answer completely and concisely, "
        "citing file paths (and line numbers where useful)."
    ),
    tools=(*READ_ONLY_TOOLS, "bash"),
    read_only=True,
)
BUILTIN_AGENTS: tuple[AgentDefinition, ...] = (GENERAL, EXPLORE)


@dataclass(frozen=True, slots=True)
class LoadedAgents:
    agents: tuple[AgentDefinition, ...]
    diagnostics: tuple[ResourceDiagnostic, ...]

    def get(self, name: str) -> AgentDefinition | None:
        return next((a for a in self.agents if a.name == name), None)


def agent_directories(cwd: Path, agent_dir: Path) -> list[Path]:
    return [cwd / ".pi" / "agents", cwd / ".claude" / "agents", agent_dir / "agents"]


def load_agents(cwd: Path, agent_dir: Path) -> LoadedAgents:
    diagnostics: list[ResourceDiagnostic] = []
    found: dict[str, AgentDefinition] = {}
    for directory in agent_directories(cwd, agent_dir):
        if not directory.is_dir():
            continue
        for path in list_markdown_files(directory, diagnostics):
            definition = load_agent_file(path, diagnostics)
            if definition is None:
                continue
            if definition.name in found:
                winner = found[definition.name].path
                diagnostics.append(ResourceDiagnostic(
                    "collision", f"agent '{definition.name}' is also defined in {winner}; that one is used", path))
                continue
            found[definition.name] = definition
    for builtin in BUILTIN_AGENTS:
        found.setdefault(builtin.name, builtin)
    return LoadedAgents(tuple(found.values()), tuple(diagnostics))


def load_agent_file(path: Path, diagnostics: list[ResourceDiagnostic]) -> AgentDefinition | None:
    try:
        text = normalize_newlines(read_text_file(path, MAX_DEFINITION_BYTES, "agent definitions"))
    except ValueError as exc:
        diagnostics.append(ResourceDiagnostic("warning", f"agent definition not loaded: {exc}", path))
        return None
    except OSError as exc:
        diagnostics.append(ResourceDiagnostic("warning", f"cannot read agent definition: {exc.strerror or exc}", path))
        return None
    try:
        parsed = parse_frontmatter(text)
    except FrontmatterError as exc:
        diagnostics.append(ResourceDiagnostic("error", f"agent definition not loaded: invalid frontmatter: {exc}", path))
        return None
    meta = parsed.frontmatter

    def bad(key: str, problem: str) -> None:
        diagnostics.append(ResourceDiagnostic(
            "error", f"agent definition not loaded: '{key}' {problem} at line {_key_line(text, key)}", path))

    name = meta.get("name", path.name[: -len(".md")])
    if not isinstance(name, str) or not _NAME.match(name.strip()):
        bad("name", f"must be one line of at most 64 characters, got {name!r}")
        return None
    description = meta.get("description")
    if description is not None and not isinstance(description, str):
        bad("description", f"must be text, got {type(description).__name__}")
        return None
    if not parsed.body.strip():
        diagnostics.append(ResourceDiagnostic("error", "agent definition not loaded: the body (the agent's system "
                                              "prompt) is empty", path))
        return None
    tools = _tools(meta.get("tools"))
    if isinstance(tools, str):
        bad("tools", tools)
        return None
    model = meta.get("model")
    if model is not None and not isinstance(model, str):
        bad("model", f"must be 'provider/id' or 'inherit', got {type(model).__name__}")
        return None
    thinking = meta.get("thinking")
    if thinking is not None and thinking not in THINKING_LEVELS:
        bad("thinking", f"must be one of {', '.join(THINKING_LEVELS)}, got {thinking!r}")
        return None
    known, ignored = tools if tools is not None else (None, ())
    if ignored:
        diagnostics.append(ResourceDiagnostic(
            "warning", f"agent '{name}': no such tool in pi-tui, ignored: {', '.join(ignored)} "
                       f"(line {_key_line(text, 'tools')})", path))
    model_ref = None if model is None or model.strip().lower() in PARENT_MODEL_ALIASES else model.strip()
    return AgentDefinition(
        name=name.strip(),
        description=(description or _first_line(parsed.body)).strip(),
        system_prompt=parsed.body,
        tools=known,
        model=model_ref,
        thinking=thinking,
        path=path,
        ignored_tools=ignored,
    )


def _tools(value: Any) -> tuple[tuple[str, ...], tuple[str, ...]] | str | None:
    """(our names, names we have no tool for), or a problem text, or None (absent = parent's)."""
    if value is None:
        return None
    if isinstance(value, str):
        names = [part.strip() for part in value.split(",")]
    elif isinstance(value, list) and all(isinstance(v, str) for v in value):
        names = [str(v).strip() for v in value]
    else:
        return f"must be a list of tool names or a comma-separated string, got {type(value).__name__}"
    known: list[str] = []
    ignored: list[str] = []
    for raw in filter(None, names):
        ours = CLAUDE_TOOL_NAMES.get(raw.lower()) if raw not in ("task", "todo") else raw
        if ours is None:
            ignored.append(raw)
        elif ours not in known:
            known.append(ours)
    return tuple(known), tuple(ignored)


def _key_line(text: str, key: str) -> int:
    for number, line in enumerate(text.split("\n"), start=1):
        if line.startswith(f"{key}:"):
            return number
    return 1


def _first_line(body: str) -> str:
    return next((line.strip() for line in body.split("\n") if line.strip()), "")


def child_tool_names(definition: AgentDefinition, parent_active: Sequence[str], *, allow_task: bool) -> list[str]:
    """The child's tools: the definition's wish (or the parent's tools), limited to what the
    parent may use; ``task`` only while the depth allows it."""
    allowed = list(parent_active)
    if "read" in allowed:
        allowed += [name for name in READ_ONLY_TOOLS if name not in allowed]
    wanted: Iterable[str] = definition.tools if definition.tools is not None else parent_active
    return [name for name in dict.fromkeys(wanted) if name in allowed and (allow_task or name != "task")]


SUBAGENT_NOTE = ("You are working as a subagent: another agent gave you this task and receives only your final "
                 "message. Nobody can answer questions while you work; finish the task as well as you can, then end "
                 "with a complete, self-contained answer.")


def child_system_resources(resources: Any, definition: AgentDefinition) -> Any:
    """The parent's resources with the definition's body as the system prompt (replacing pi's
    default one; context files, skills, date and cwd stay) and the subagent note appended."""
    if not dataclasses.is_dataclass(resources) or isinstance(resources, type):
        return resources
    current = getattr(resources, "append_system_prompt", None)
    appended = f"{current}\n\n{SUBAGENT_NOTE}" if current else SUBAGENT_NOTE
    changes: dict[str, Any] = {"append_system_prompt": appended}
    if definition.system_prompt is not None:
        changes["custom_prompt"] = definition.system_prompt
    return dataclasses.replace(resources, **changes)
