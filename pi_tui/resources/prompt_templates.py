"""Prompt templates: ``/name args`` expands a markdown file (pi-behaviour.md §6.1, §12, §13.6).

Sources in pi's order, first one wins on a name collision (reported as ``name "/<name>"
collision``): ``--prompt-template`` paths, the project settings' ``prompts[]``,
``<cwd>/.pi/prompts/``, the global settings' ``prompts[]``, ``<agentDir>/prompts/``, extension
paths, then the built-in ``prompts/`` folder, which any of the others overrides without a
collision (``.pi/prompts/review.md`` replacing the built-in ``/review`` is a feature).
Directories are scanned non-recursively.

Arguments are parsed as pi 0.73.1 does (space/tab separated, quotes group, no escapes); the
substitution is the newer upstream's single regex pass, which adds ``${N:-default}`` and never
re-expands a value that itself contains ``$1``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pi_tui.core.regular_files import read_text_file
from pi_tui.resources.builtin import builtin_prompts_dir
from pi_tui.resources.diagnostics import ResourceDiagnostic
from pi_tui.resources.frontmatter import FrontmatterError, parse_frontmatter
from pi_tui.resources.locations import project_dir
from pi_tui.resources.scan import FirstWins, list_markdown_files

TemplateSource = Literal["path", "project", "user", "settings", "builtin", "extension"]
DESCRIPTION_FALLBACK_CHARS = 60
PROMPT_TEMPLATE_MAX_BYTES = 1024 * 1024
"""Like a skill file: a template is sent whole when used, and read at every start."""


@dataclass(frozen=True, slots=True)
class PromptTemplate:
    name: str
    description: str
    content: str
    file_path: Path
    source: TemplateSource
    argument_hint: str | None = None


@dataclass(slots=True)
class TemplateLoadResult:
    templates: list[PromptTemplate] = field(default_factory=list)
    diagnostics: list[ResourceDiagnostic] = field(default_factory=list)


def _fallback_description(body: str) -> str:
    for line in body.split("\n"):
        line = line.strip()
        if line:
            if len(line) > DESCRIPTION_FALLBACK_CHARS:
                return line[:DESCRIPTION_FALLBACK_CHARS] + "..."
            return line
    return ""


def load_template_file(
    path: Path, source: TemplateSource, diagnostics: list[ResourceDiagnostic]
) -> PromptTemplate | None:
    try:
        text = read_text_file(path, PROMPT_TEMPLATE_MAX_BYTES, "prompt templates")
    except ValueError as exc:
        diagnostics.append(ResourceDiagnostic("warning", f"prompt template not loaded: {exc}", path))
        return None
    except OSError as exc:
        diagnostics.append(ResourceDiagnostic("warning", f"cannot read prompt template: {exc}", path))
        return None
    try:
        parsed = parse_frontmatter(text)
    except FrontmatterError as exc:
        diagnostics.append(ResourceDiagnostic("warning", f"invalid frontmatter: {exc}", path))
        return None
    meta = parsed.frontmatter
    description = meta.get("description")
    hint = meta.get("argument-hint")
    return PromptTemplate(
        name=path.name[: -len(".md")],
        description=str(description).strip() if description else _fallback_description(parsed.body),
        content=parsed.body,
        file_path=path,
        source=source,
        argument_hint=str(hint) if hint not in (None, "") else None,
    )


def _template_files(path: Path, diagnostics: list[ResourceDiagnostic]) -> list[Path]:
    if path.is_dir():
        return list_markdown_files(path, diagnostics)
    if path.is_file():
        if path.suffix != ".md":
            diagnostics.append(ResourceDiagnostic("warning", "prompt template must be a .md file", path))
            return []
        return [path]
    if path.is_symlink():
        diagnostics.append(ResourceDiagnostic("warning", "broken symlink skipped", path))
    else:
        diagnostics.append(ResourceDiagnostic("warning", "prompt template path does not exist", path))
    return []


def load_prompt_templates(
    cwd: Path,
    agent_dir: Path,
    *,
    explicit_paths: Sequence[Path] = (),
    project_settings_paths: Sequence[Path] = (),
    user_settings_paths: Sequence[Path] = (),
    extension_paths: Sequence[Path] = (),
    include_defaults: bool = True,
    include_builtin: bool = True,
) -> TemplateLoadResult:
    """All templates in priority order; ``include_defaults=False`` is ``--no-prompt-templates``
    (explicit ``--prompt-template`` paths still load)."""
    result = TemplateLoadResult()
    sources: list[tuple[Path, TemplateSource, bool]] = [(p, "path", True) for p in explicit_paths]
    if include_defaults:
        sources.extend((p, "settings", True) for p in project_settings_paths)
        sources.append((project_dir(cwd) / "prompts", "project", False))
        sources.extend((p, "settings", True) for p in user_settings_paths)
        sources.append((agent_dir / "prompts", "user", False))
        sources.extend((p, "extension", True) for p in extension_paths)
        if include_builtin:
            sources.append((builtin_prompts_dir(), "builtin", False))
    collected: FirstWins[PromptTemplate] = FirstWins(
        "prompt", lambda name: f'name "/{name}" collision', result.diagnostics
    )
    for location, source, must_exist in sources:
        if not must_exist and not location.is_dir():
            continue
        for file in _template_files(location, result.diagnostics):
            if not collected.first_visit(file):
                continue
            template = load_template_file(file, source, result.diagnostics)
            if template is not None:
                collected.add(template.name, file, template, overridable=source == "builtin")
    result.templates = collected.items
    return result


# --------------------------------------------------------------------------- arguments


def parse_command_args(text: str) -> list[str]:
    """Split like pi: spaces/tabs separate, ``"…"``/``'…'`` group (no escapes), empty quotes vanish."""
    args: list[str] = []
    current = ""
    quote: str | None = None
    for ch in text:
        if quote is not None:
            if ch == quote:
                quote = None
            else:
                current += ch
        elif ch in "\"'":
            quote = ch
        elif ch in " \t":
            if current:
                args.append(current)
                current = ""
        else:
            current += ch
    if current:
        args.append(current)
    return args


_PLACEHOLDER = re.compile(r"\$\{(\d+):-([^}]*)\}|\$\{@:(\d+)(?::(\d+))?\}|\$(ARGUMENTS|@|\d+)")


def substitute_args(content: str, args: Sequence[str]) -> str:
    """Replace ``$1``, ``$@``, ``$ARGUMENTS``, ``${N:-default}``, ``${@:N}``, ``${@:N:L}`` in one pass."""

    def replace(match: re.Match[str]) -> str:
        default_index, default_value, slice_start, slice_len, simple = match.groups()
        if default_index is not None:
            index = int(default_index) - 1
            value = args[index] if 0 <= index < len(args) else ""
            return value if value != "" else default_value
        if slice_start is not None:
            start = max(int(slice_start) - 1, 0)
            end = start + int(slice_len) if slice_len is not None else len(args)
            return " ".join(args[start:end])
        if simple in ("ARGUMENTS", "@"):
            return " ".join(args)
        index = int(simple) - 1
        return args[index] if 0 <= index < len(args) else ""

    return _PLACEHOLDER.sub(replace, content)


def split_command(text: str) -> tuple[str, str] | None:
    """``/name rest`` → ``(name, rest)``; the name ends at the first space (pi 0.73.1)."""
    if not text.startswith("/"):
        return None
    space = text.find(" ")
    if space == -1:
        return text[1:], ""
    return text[1:space], text[space + 1 :]


def expand_prompt_template(text: str, templates: Iterable[PromptTemplate]) -> str | None:
    """The expanded text when ``text`` is ``/name args`` for a known template, else None
    (the caller then sends the text as it is)."""
    command = split_command(text)
    if command is None:
        return None
    name, rest = command
    for template in templates:
        if template.name == name:
            return substitute_args(template.content, parse_command_args(rest))
    return None
