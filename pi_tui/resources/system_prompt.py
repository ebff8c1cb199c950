"""The system prompt (pi-behaviour.md §5, §13.5): pi's structure, our own default wording.

Order, default body: intro · ``Available tools:`` (active tools that have a one-line snippet) ·
custom-tools line · ``Guidelines:`` · documentation pointers · append text · project context ·
skills block (only when ``read`` is active) · ``Current date:`` / ``Current working directory:``.
A custom prompt (``--system-prompt`` or ``SYSTEM.md``) replaces everything up to the append text.

``SystemPromptState`` holds the base prompt and the per-run override an extension's
``before_agent_start`` may return (seed 000 §3): the override holds for every model call of the
run and the base comes back when the run ends, even if it fails.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pi_tui.core.tool import Tool
from pi_tui.resources.builtin import docs_root
from pi_tui.resources.context_files import ContextFile
from pi_tui.resources.skills import Skill, format_skills_for_prompt

DEFAULT_TOOL_NAMES = ("read", "bash", "edit", "write")
EXPLORATION_TOOLS = ("grep", "find", "ls")

INTRO = (
    "You are a skilled software engineer working as a coding agent inside pi-tui, a terminal "
    "coding harness. You work on the user's project directly: you read files, run commands, edit "
    "code and write new files, and you check your work before you report it."
)
CUSTOM_TOOLS_LINE = "Other tools may be available as well, depending on the project and its extensions."
BASH_ONLY_GUIDELINE = "Explore files with bash (ls, rg, find)"
PREFER_TOOLS_GUIDELINE = "Explore files with the grep, find and ls tools rather than bash: they are faster and skip ignored files"
CLOSING_GUIDELINES = ("Keep answers short and to the point", "Name the files you look at or change by their paths")


@dataclass(frozen=True, slots=True)
class SystemPromptOptions:
    """Everything the prompt is built from; also what ``before_agent_start`` receives as
    ``systemPromptOptions`` (see ``to_event_dict``)."""

    cwd: Path
    skills: Sequence[Skill] = ()
    context_files: Sequence[ContextFile] = ()
    custom_prompt: str | None = None
    append_system_prompt: str | None = None
    selected_tools: Sequence[str] | None = None
    """Active tool names in order; None means "not given" (pi then assumes the defaults)."""
    tool_snippets: Mapping[str, str] = field(default_factory=dict)
    prompt_guidelines: Sequence[str] = ()

    def to_event_dict(self) -> dict[str, object]:
        return {
            "cwd": str(self.cwd),
            "skills": [s.name for s in self.skills],
            "contextFiles": [{"path": str(f.path), "content": f.content} for f in self.context_files],
            "customPrompt": self.custom_prompt,
            "appendSystemPrompt": self.append_system_prompt,
            "selectedTools": list(self.selected_tools) if self.selected_tools is not None else None,
            "toolSnippets": dict(self.tool_snippets),
            "promptGuidelines": list(self.prompt_guidelines),
        }


def one_line(text: str) -> str:
    return " ".join(text.split())


def options_for_tools(
    tools: Sequence[Tool],
    *,
    cwd: Path,
    skills: Sequence[Skill] = (),
    context_files: Sequence[ContextFile] = (),
    custom_prompt: str | None = None,
    append_system_prompt: str | None = None,
) -> SystemPromptOptions:
    """Options from the active tools (in order): snippets collapsed to one line, tools without a
    snippet left out of the list, guidelines trimmed and de-duplicated."""
    snippets: dict[str, str] = {}
    guidelines: list[str] = []
    for tool in tools:
        if tool.prompt_snippet and tool.prompt_snippet.strip():
            snippets[tool.name] = one_line(tool.prompt_snippet)
        for line in tool.prompt_guidelines:
            line = line.strip()
            if line and line not in guidelines:
                guidelines.append(line)
    return SystemPromptOptions(
        cwd=cwd,
        skills=skills,
        context_files=context_files,
        custom_prompt=custom_prompt,
        append_system_prompt=append_system_prompt,
        selected_tools=[t.name for t in tools],
        tool_snippets=snippets,
        prompt_guidelines=guidelines,
    )


def _guidelines(tools: Sequence[str], extra: Sequence[str]) -> list[str]:
    ordered: list[str] = []

    def add(line: str) -> None:
        line = line.strip()
        if line and line not in ordered:
            ordered.append(line)

    if "bash" in tools:
        add(PREFER_TOOLS_GUIDELINE if any(t in tools for t in EXPLORATION_TOOLS) else BASH_ONLY_GUIDELINE)
    for line in extra:
        add(line)
    for line in CLOSING_GUIDELINES:
        add(line)
    return ordered


def _docs_block() -> str:
    root = docs_root()
    return (
        "pi-tui documentation (read it only when the user asks about pi-tui itself: settings, "
        "extensions, skills, prompt templates):\n"
        f"- Overview: {root / 'README.md'}\n"
        f"- Reference: {root / 'docs'} (settings.md, extensions.md, skills.md, prompt-templates.md)\n"
        f"- Extension examples: {root / 'examples' / 'extensions'}"
    )


def _project_context(files: Sequence[ContextFile]) -> str:
    if not files:
        return ""
    parts = ["\n\n# Project Context\n\nProject-specific instructions and guidelines:\n\n"]
    for file in files:
        parts.append(f"## {file.path}\n\n{file.content}\n\n")
    return "".join(parts)


def build_system_prompt(options: SystemPromptOptions, *, today: _dt.date | None = None) -> str:
    """The full system prompt for ``options``; ``today`` defaults to the local date."""
    date = (today or _dt.date.today()).isoformat()
    cwd = str(options.cwd).replace("\\", "/")
    tools = list(options.selected_tools) if options.selected_tools is not None else list(DEFAULT_TOOL_NAMES)
    if options.custom_prompt is not None:
        prompt = options.custom_prompt
        read_active = options.selected_tools is None or "read" in tools
    else:
        listed = [f"- {name}: {options.tool_snippets[name]}" for name in tools if options.tool_snippets.get(name)]
        guidelines = "\n".join(f"- {line}" for line in _guidelines(tools, options.prompt_guidelines))
        prompt = (
            f"{INTRO}\n\nAvailable tools:\n{chr(10).join(listed) if listed else '(none)'}\n\n"
            f"{CUSTOM_TOOLS_LINE}\n\nGuidelines:\n{guidelines}\n\n{_docs_block()}"
        )
        read_active = "read" in tools
    if options.append_system_prompt:
        prompt += "\n\n" + options.append_system_prompt
    prompt += _project_context(options.context_files)
    if read_active:
        prompt += format_skills_for_prompt(options.skills)
    prompt += f"\nCurrent date: {date}"
    prompt += f"\nCurrent working directory: {cwd}"
    return prompt


class SystemPromptState:
    """The base prompt plus an optional override for the current run (§5.4)."""

    def __init__(self, base: str = "") -> None:
        self.base = base
        self._override: str | None = None

    @property
    def current(self) -> str:
        """What every model call uses right now (tool-call continuations included)."""
        return self._override if self._override is not None else self.base

    @property
    def override(self) -> str | None:
        return self._override

    @contextlib.contextmanager
    def run(self, override: str | None) -> Iterator[None]:
        """Apply ``override`` (None or ``""`` = keep the base) for one agent run; always restored."""
        self._override = override or None
        try:
            yield
        finally:
            self._override = None
