"""Gather everything that shapes a session from disk (pi's resource loader, §5.1, §6).

``load_resources`` is called at startup and again on ``/reload``; it never raises for bad
files: each problem becomes a ``ResourceDiagnostic`` and the rest still loads. The session keeps
the ``LoadedResources`` and rebuilds the system prompt from it whenever the active tools change.
"""

from __future__ import annotations

import argparse
import datetime as _dt
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pi_tui.core.tool import Tool
from pi_tui.resources.context_files import (
    APPEND_SYSTEM_FILE,
    SYSTEM_FILE,
    ContextFile,
    context_budget_bytes,
    discover_context_files,
    fit_context_files,
    links_out_of_project,
    read_context_file,
)
from pi_tui.resources.diagnostics import ResourceDiagnostic
from pi_tui.resources.locations import agent_dir as default_agent_dir
from pi_tui.resources.locations import expand_home, normalized_path, project_dir
from pi_tui.resources.prompt_templates import PromptTemplate, load_prompt_templates
from pi_tui.resources.settings import SettingsManager
from pi_tui.resources.skills import Skill, load_skills
from pi_tui.resources.system_prompt import (
    SystemPromptOptions,
    build_system_prompt,
    options_for_tools,
)

__all__ = ["APPEND_SYSTEM_FILE", "SYSTEM_FILE", "LoadedResources", "ResourceOptions", "load_resources"]


@dataclass(frozen=True, slots=True)
class ResourceOptions:
    """The CLI flags and extra paths that steer loading (all optional)."""

    system_prompt: str | None = None
    """``--system-prompt``: literal text, or a file whose content is used."""
    append_system_prompts: Sequence[str] = ()
    """``--append-system-prompt`` values (text or files); given, they replace APPEND_SYSTEM.md."""
    no_context_files: bool = False
    skill_paths: Sequence[str] = ()
    no_skills: bool = False
    prompt_template_paths: Sequence[str] = ()
    no_prompt_templates: bool = False
    extra_skill_paths: Sequence[Path] = ()
    """From extensions' ``resources_discover`` results."""
    extra_prompt_paths: Sequence[Path] = ()
    settings: SettingsManager | None = None
    """For the ``skills[]`` / ``prompts[]`` settings; None skips them. Its ``project_trusted``
    also decides whether the project's links out of it (``links_out_of_project``) are read;
    without settings they are not."""
    include_builtin: bool = True
    """Load the built-in ``prompts/`` and ``skills/`` folders."""

    @classmethod
    def from_args(cls, args: argparse.Namespace, settings: SettingsManager | None = None) -> ResourceOptions:
        return cls(
            system_prompt=getattr(args, "system_prompt", None),
            append_system_prompts=tuple(getattr(args, "append_system_prompt", None) or ()),
            no_context_files=bool(getattr(args, "no_context_files", False)),
            skill_paths=tuple(getattr(args, "skills", None) or ()),
            no_skills=bool(getattr(args, "no_skills", False)),
            prompt_template_paths=tuple(getattr(args, "prompt_templates", None) or ()),
            no_prompt_templates=bool(getattr(args, "no_prompt_templates", False)),
            settings=settings,
        )


@dataclass(slots=True)
class LoadedResources:
    cwd: Path
    agent_dir: Path
    context_files: list[ContextFile] = field(default_factory=list)
    custom_prompt: str | None = None
    custom_prompt_path: Path | None = None
    append_system_prompt: str | None = None
    skills: list[Skill] = field(default_factory=list)
    prompt_templates: list[PromptTemplate] = field(default_factory=list)
    diagnostics: list[ResourceDiagnostic] = field(default_factory=list)

    append_system_prompt_path: Path | None = None

    def project_prompt_notes(self) -> list[str]:
        """Say so when the project's own files shape the system prompt: text, not code, so they
        load without trust, but a cloned repository's SYSTEM.md replaces pi-tui's instructions."""
        notes: list[str] = []
        base = project_dir(self.cwd)
        if self.custom_prompt_path is not None and self.custom_prompt_path == base / SYSTEM_FILE:
            notes.append(f"The system prompt is replaced by this project's {self.custom_prompt_path} "
                         "(text from the repository; read it if you did not write it).")
        if self.append_system_prompt_path is not None and self.append_system_prompt_path == base / APPEND_SYSTEM_FILE:
            notes.append(f"This project's {self.append_system_prompt_path} is appended to the system prompt.")
        return notes

    context_budget: int | None = None
    """The byte budget the context files were last fitted to (``apply_context_budget``)."""

    def apply_context_budget(self, context_window: int | None) -> None:
        """Fit the context files to the model's window (a fifth of it, at most 128 KB; see
        ``context_files``). Each file cut gets a warning in ``diagnostics``, once."""
        budget = context_budget_bytes(context_window)
        if budget == self.context_budget:
            return
        self.context_budget = budget
        self.context_files, notes = fit_context_files(self.context_files, budget)
        self.diagnostics.extend(note for note in notes if note not in self.diagnostics)

    def system_prompt_options(self, tools: Sequence[Tool]) -> SystemPromptOptions:
        return options_for_tools(
            tools,
            cwd=self.cwd,
            skills=self.skills,
            context_files=self.context_files,
            custom_prompt=self.custom_prompt,
            append_system_prompt=self.append_system_prompt,
        )

    def build_system_prompt(self, tools: Sequence[Tool], *, today: _dt.date | None = None) -> str:
        """The base system prompt for these active tools (in their order)."""
        return build_system_prompt(self.system_prompt_options(tools), today=today)


def _resolve_path(value: str, cwd: Path) -> Path:
    return normalized_path(cwd, expand_home(value))


def _text_or_file(value: str, cwd: Path, diagnostics: list[ResourceDiagnostic]) -> tuple[str | None, Path | None]:
    """A flag value that names an existing file means that file's content."""
    try:
        path = _resolve_path(value, cwd)
        is_file = path.is_file()
    except (OSError, ValueError):  # a long prompt text can be an invalid path name
        return value, None
    if not is_file:
        return value, None
    try:
        return path.read_text(encoding="utf-8"), path
    except (OSError, UnicodeDecodeError) as exc:
        diagnostics.append(ResourceDiagnostic("error", f"cannot read prompt file: {exc}", path))
        return None, path


def _first_file(paths: Sequence[Path], diagnostics: list[ResourceDiagnostic],
                skip: Collection[Path]) -> tuple[str | None, Path | None]:
    """The first of ``paths`` that exists and is text (bounded like a context file; a FIFO, a
    device or a binary file is reported and the next one is tried)."""
    for path in paths:
        if path in skip or not path.exists():
            continue
        file = read_context_file(path, diagnostics, "system prompt file")
        if file is not None:
            return file.content, path
    return None, None


def load_resources(
    cwd: Path, agent_dir: Path | None = None, options: ResourceOptions | None = None
) -> LoadedResources:
    options = options or ResourceOptions()
    agent = agent_dir if agent_dir is not None else default_agent_dir()
    cwd = cwd.absolute()
    loaded = LoadedResources(cwd=cwd, agent_dir=agent)
    diagnostics = loaded.diagnostics
    settings = options.settings
    trusted = bool(settings is not None and settings.project_trusted)
    links_out = set() if trusted else {path for path, _real in links_out_of_project(cwd)}

    if not options.no_context_files:
        loaded.context_files = discover_context_files(cwd, agent, diagnostics, skip=links_out)

    if options.system_prompt is not None:
        loaded.custom_prompt, loaded.custom_prompt_path = _text_or_file(options.system_prompt, cwd, diagnostics)
    else:
        candidates = [project_dir(cwd) / SYSTEM_FILE, agent / SYSTEM_FILE]
        loaded.custom_prompt, loaded.custom_prompt_path = _first_file(candidates, diagnostics, links_out)

    if options.append_system_prompts:
        parts = [_text_or_file(v, cwd, diagnostics)[0] for v in options.append_system_prompts]
        loaded.append_system_prompt = "\n\n".join(p for p in parts if p) or None
    else:
        loaded.append_system_prompt, loaded.append_system_prompt_path = _first_file(
            [project_dir(cwd) / APPEND_SYSTEM_FILE, agent / APPEND_SYSTEM_FILE], diagnostics, links_out
        )

    skill_result = load_skills(
        cwd,
        agent,
        explicit_paths=[_resolve_path(p, cwd) for p in options.skill_paths],
        project_settings_paths=settings.resource_paths("skills", "project") if settings else (),
        user_settings_paths=settings.resource_paths("skills", "global") if settings else (),
        extension_paths=options.extra_skill_paths,
        include_defaults=not options.no_skills,
        include_builtin=options.include_builtin,
    )
    loaded.skills = skill_result.skills
    diagnostics.extend(skill_result.diagnostics)

    template_result = load_prompt_templates(
        cwd,
        agent,
        explicit_paths=[_resolve_path(p, cwd) for p in options.prompt_template_paths],
        project_settings_paths=settings.resource_paths("prompts", "project") if settings else (),
        user_settings_paths=settings.resource_paths("prompts", "global") if settings else (),
        extension_paths=options.extra_prompt_paths,
        include_defaults=not options.no_prompt_templates,
        include_builtin=options.include_builtin,
    )
    loaded.prompt_templates = template_result.templates
    diagnostics.extend(template_result.diagnostics)
    return loaded
