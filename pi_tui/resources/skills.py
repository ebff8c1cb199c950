"""Skills: ``SKILL.md`` files the model reads on demand (pi-behaviour.md §5.3, §6.2, §13.6).

Discovery order, pi's resource loader's (the first skill of a name wins; a ``collision``
diagnostic names both files): ``--skill`` paths, the project settings' ``skills[]``,
``<cwd>/.pi/skills``, ``.agents/skills`` in the cwd and its ancestors up to the git root, the
global settings' ``skills[]``, ``<agentDir>/skills``, ``~/.agents/skills``, extension paths, and the
built-in ``skills/`` folder (a built-in skill another source overrides is no collision: that is
what overriding means). A folder holding ``SKILL.md`` is one skill (no recursion). In
pi-style folders the top-level ``*.md`` files are skills too; below the top only ``SKILL.md``
counts. ``.agents/skills`` folders contribute ``SKILL.md`` files only. Dotfiles, ``node_modules``
and paths matched by ``.gitignore``/``.ignore``/``.fdignore`` are skipped.

Validation follows pi's rules and warning texts exactly; only a missing description (or a
frontmatter that does not parse) keeps a skill from loading.

Bounds (pi has none: a 5 MB description went into every request's system prompt): a description
longer than pi's 1,024-character limit is cut to it in the prompt (with a second warning saying
so); a skill file over ``SKILL_FILE_MAX_BYTES`` (1 MB), a binary one, a FIFO or a device is not
loaded (warning), and ``/skill:`` refuses one that became so.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pi_tui.core.regular_files import read_text_file
from pi_tui.resources.builtin import builtin_skills_dir
from pi_tui.resources.diagnostics import ResourceDiagnostic
from pi_tui.resources.frontmatter import FrontmatterError, parse_frontmatter, strip_frontmatter
from pi_tui.resources.ignore_rules import IgnoreRules
from pi_tui.resources.locations import project_dir
from pi_tui.resources.scan import FirstWins

SkillSource = Literal["path", "project", "user", "settings", "extension", "builtin"]
MAX_NAME_LENGTH = 64
MAX_DESCRIPTION_LENGTH = 1024
SKILL_FILE_MAX_BYTES = 1024 * 1024
_NAME_CHARS = re.compile(r"^[a-z0-9-]+$")
SKILL_FILE = "SKILL.md"


@dataclass(frozen=True, slots=True)
class Skill:
    name: str
    description: str
    file_path: Path
    base_dir: Path
    source: SkillSource
    disable_model_invocation: bool = False


@dataclass(slots=True)
class SkillLoadResult:
    skills: list[Skill] = field(default_factory=list)
    diagnostics: list[ResourceDiagnostic] = field(default_factory=list)


# --------------------------------------------------------------------------- validation


def validate_name(name: str, parent_dir_name: str) -> list[str]:
    problems: list[str] = []
    if name != parent_dir_name:
        problems.append(f'name "{name}" does not match parent directory "{parent_dir_name}"')
    if len(name) > MAX_NAME_LENGTH:
        problems.append(f"name exceeds {MAX_NAME_LENGTH} characters ({len(name)})")
    if not _NAME_CHARS.match(name):
        problems.append("name contains invalid characters (must be lowercase a-z, 0-9, hyphens only)")
    if name.startswith("-") or name.endswith("-"):
        problems.append("name must not start or end with a hyphen")
    if "--" in name:
        problems.append("name must not contain consecutive hyphens")
    return problems


def validate_description(description: Any) -> list[str]:
    if not isinstance(description, str) or not description.strip():
        return ["description is required"]
    if len(description) > MAX_DESCRIPTION_LENGTH:
        return [f"description exceeds {MAX_DESCRIPTION_LENGTH} characters ({len(description)})"]
    return []


def read_skill_text(path: Path) -> str:
    """A skill file's text, bounded; ``ValueError`` / ``OSError`` say why it cannot be used."""
    return read_text_file(path, SKILL_FILE_MAX_BYTES, "skills")


def load_skill_file(path: Path, source: SkillSource, diagnostics: list[ResourceDiagnostic]) -> Skill | None:
    """One skill file, or None (with a diagnostic) when it cannot be used."""
    try:
        text = read_skill_text(path)
    except ValueError as exc:
        diagnostics.append(ResourceDiagnostic("warning", f"skill not loaded: {exc}", path))
        return None
    except OSError as exc:
        diagnostics.append(ResourceDiagnostic("warning", f"cannot read skill: {exc.strerror or exc}", path))
        return None
    try:
        meta = parse_frontmatter(text).frontmatter
    except FrontmatterError as exc:
        diagnostics.append(ResourceDiagnostic("warning", str(exc), path))
        return None
    base_dir = path.parent
    raw_name = meta.get("name")
    name = str(raw_name) if raw_name not in (None, "") else base_dir.name
    description = meta.get("description")
    if isinstance(description, (int, float)) and not isinstance(description, bool):
        description = str(description)
    problems = validate_name(name, base_dir.name) + validate_description(description)
    for problem in problems:
        diagnostics.append(ResourceDiagnostic("warning", problem, path))
    if "description is required" in problems:
        return None
    assert isinstance(description, str)
    if len(description) > MAX_DESCRIPTION_LENGTH:
        description = description[: MAX_DESCRIPTION_LENGTH - 1] + "…"
        diagnostics.append(ResourceDiagnostic(
            "warning", f"only the first {MAX_DESCRIPTION_LENGTH} characters of the description are sent to the model", path
        ))
    return Skill(
        name=name,
        description=description,
        file_path=path,
        base_dir=base_dir,
        source=source,
        disable_model_invocation=meta.get("disable-model-invocation") is True,
    )


# --------------------------------------------------------------------------- discovery


SKILL_SEARCH_MAX_DEPTH = 16
SKILL_SEARCH_MAX_FOLDERS = 2000
"""A skills folder is walked once per real folder, at most this deep and this many folders: a
cloned repository's ``.pi/skills`` may hold a link to ``/`` or a link loop (a real skills tree
has a few dozen folders)."""


@dataclass(slots=True)
class _Walk:
    """What one search for skill files has seen: real folders (by device and inode) and how many."""

    seen: set[tuple[int, int]] = field(default_factory=set)
    folders: int = 0
    cut: bool = False


def _skill_files(
    directory: Path,
    *,
    top_level_markdown: bool,
    rules: IgnoreRules,
    diagnostics: list[ResourceDiagnostic],
    top: bool = True,
    walk: _Walk | None = None,
    depth: int = 0,
) -> list[Path]:
    walk = walk if walk is not None else _Walk()
    try:
        info = directory.stat()
    except OSError:
        return []
    if (info.st_dev, info.st_ino) in walk.seen:
        return []  # a link back to a folder already searched
    if depth > SKILL_SEARCH_MAX_DEPTH or walk.folders >= SKILL_SEARCH_MAX_FOLDERS:
        if not walk.cut:
            walk.cut = True
            diagnostics.append(ResourceDiagnostic(
                "warning", f"stopped looking for skills here after {walk.folders} folders "
                f"(limits: {SKILL_SEARCH_MAX_FOLDERS} folders, {SKILL_SEARCH_MAX_DEPTH} deep; a link to / or a loop?)",
                directory))
        return []
    walk.seen.add((info.st_dev, info.st_ino))
    walk.folders += 1
    rules = rules.with_directory(directory)
    root_skill = directory / SKILL_FILE
    if root_skill.is_file():
        return [root_skill]
    try:
        entries = sorted(os.scandir(directory), key=lambda e: e.name)
    except OSError as exc:
        diagnostics.append(ResourceDiagnostic("warning", f"cannot list directory: {exc.strerror}", directory))
        return []
    found: list[Path] = []
    for entry in entries:
        if entry.name.startswith(".") or entry.name == "node_modules":
            continue
        path = Path(entry.path)
        if entry.is_symlink() and not path.exists():
            diagnostics.append(ResourceDiagnostic("warning", "broken symlink skipped", path))
            continue
        is_dir = path.is_dir()
        if rules.ignored(path, is_dir=is_dir):
            continue
        if is_dir:
            found.extend(_skill_files(path, top_level_markdown=top_level_markdown, rules=rules,
                                      diagnostics=diagnostics, top=False, walk=walk, depth=depth + 1))
        elif top and top_level_markdown and entry.name.endswith(".md") and path.is_file():
            found.append(path)
    return found


def _agents_skill_dirs(cwd: Path) -> list[Path]:
    """``.agents/skills`` in the cwd and each ancestor up to the git root (or the filesystem root)."""
    dirs: list[Path] = []
    for folder in (cwd, *cwd.parents):
        dirs.append(folder / ".agents" / "skills")
        if (folder / ".git").exists():
            break
    return dirs


def load_skills(
    cwd: Path,
    agent_dir: Path,
    *,
    explicit_paths: Sequence[Path] = (),
    project_settings_paths: Sequence[Path] = (),
    user_settings_paths: Sequence[Path] = (),
    extension_paths: Sequence[Path] = (),
    include_defaults: bool = True,
    include_builtin: bool = True,
    home: Path | None = None,
) -> SkillLoadResult:
    """Every skill in priority order; ``include_defaults=False`` is ``--no-skills`` (explicit
    ``--skill`` paths still load). ``*_settings_paths``: the ``skills[]`` of the project's and
    the global settings file."""
    home = home if home is not None else Path.home()
    # (location, source, top-level *.md are skills, missing location is worth a warning)
    sources: list[tuple[Path, SkillSource, bool, bool]] = [(p, "path", True, True) for p in explicit_paths]
    if include_defaults:
        # pi ranks what a settings file names above what is found in the folder it configures,
        # and the project above the user.
        sources.extend((p, "settings", True, True) for p in project_settings_paths)
        sources.append((project_dir(cwd) / "skills", "project", True, False))
        sources.extend((d, "project", False, False) for d in _agents_skill_dirs(cwd))
        sources.extend((p, "settings", True, True) for p in user_settings_paths)
        sources.append((agent_dir / "skills", "user", True, False))
        sources.append((home / ".agents" / "skills", "user", False, False))
        sources.extend((p, "extension", True, True) for p in extension_paths)
        if include_builtin:
            sources.append((builtin_skills_dir(), "builtin", True, False))
    result = SkillLoadResult()
    collected: FirstWins[Skill] = FirstWins("skill", lambda name: f'name "{name}" collision', result.diagnostics)
    for location, source, top_level_markdown, must_exist in sources:
        if location.is_dir():
            files = _skill_files(
                location, top_level_markdown=top_level_markdown, rules=IgnoreRules(), diagnostics=result.diagnostics
            )
        elif location.is_file():
            files = [location]
        else:
            if must_exist:
                result.diagnostics.append(ResourceDiagnostic("warning", "skill path does not exist", location))
            continue
        for file in files:
            # The same file reached twice (symlink, overlapping paths) loads once, silently.
            if not collected.first_visit(file):
                continue
            skill = load_skill_file(file, source, result.diagnostics)
            if skill is not None:
                collected.add(skill.name, file, skill, overridable=source == "builtin")
    result.skills = collected.items
    return result


# --------------------------------------------------------------------------- use


_XML_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;"})


def _xml(value: str) -> str:
    # Not xml.sax.saxutils.escape: importing it pulls in urllib.request, http.client and email
    # (~12 ms of every start) for five replacements.
    return value.translate(_XML_ESCAPES)


def format_skills_for_prompt(skills: Iterable[Skill]) -> str:
    """The system prompt's skills block (§5.3); empty when no skill may be invoked by the model."""
    visible = [s for s in skills if not s.disable_model_invocation]
    if not visible:
        return ""
    lines = [
        "\n\nThe following skills provide specialized instructions for specific tasks.",
        "Use the read tool to load a skill's file when the task matches its description.",
        "When a skill file references a relative path, resolve it against the skill directory "
        "(parent of SKILL.md / dirname of the path) and use that absolute path in tool commands.",
        "",
        "<available_skills>",
    ]
    for skill in visible:
        lines.append("  <skill>")
        lines.append(f"    <name>{_xml(skill.name)}</name>")
        lines.append(f"    <description>{_xml(skill.description)}</description>")
        lines.append(f"    <location>{_xml(str(skill.file_path))}</location>")
        lines.append("  </skill>")
    lines.append("</available_skills>")
    return "\n".join(lines)


SKILL_COMMAND_PREFIX = "/skill:"


def expand_skill_command(
    text: str, skills: Iterable[Skill], *, on_error: Callable[[str], None] | None = None
) -> str | None:
    """``/skill:<name> [args]`` → the skill block the model sees (§6.2); None when ``text`` is not
    a command for a known skill, or the file cannot be read (``on_error`` gets the message)."""
    if not text.startswith(SKILL_COMMAND_PREFIX):
        return None
    space = text.find(" ")
    name = text[len(SKILL_COMMAND_PREFIX) : space if space != -1 else len(text)]
    args = text[space + 1 :].strip() if space != -1 else ""
    skill = next((s for s in skills if s.name == name), None)
    if skill is None:
        return None
    try:
        body = strip_frontmatter(read_skill_text(skill.file_path)).strip()
    except (OSError, ValueError) as exc:
        if on_error is not None:
            on_error(f"cannot read skill {name!r} at {skill.file_path}: {exc}")
        return None
    block = (
        f'<skill name="{skill.name}" location="{skill.file_path}">\n'
        f"References are relative to {skill.base_dir}.\n\n{body}\n</skill>"
    )
    return f"{block}\n\n{args}" if args else block


SKILL_BLOCK_PATTERN = re.compile(r'^<skill name="([^"]+)" location="([^"]+)">\n([\s\S]*?)\n</skill>(?:\n\n([\s\S]+))?$')
"""How a UI recognizes an expanded skill in a user message (name, location, body, user text)."""
