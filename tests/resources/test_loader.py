from __future__ import annotations

import argparse
import datetime as dt
from pathlib import Path

from pi_tui.cli import build_parser
from pi_tui.resources.loader import ResourceOptions, load_resources
from pi_tui.resources.settings import load_settings
from pi_tui.tools.read import ReadTool


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_discovers_everything_from_agent_dir_and_project(project: Path, agent_dir: Path) -> None:
    write(agent_dir / "AGENTS.md", "global rules")
    write(project / "AGENTS.md", "project rules")
    write(agent_dir / "skills" / "s1" / "SKILL.md", "---\ndescription: one\n---\nx")
    write(agent_dir / "prompts" / "p1.md", "Prompt $1")
    write(project / ".pi" / "SYSTEM.md", "project system")
    write(agent_dir / "SYSTEM.md", "global system")
    write(project / ".pi" / "APPEND_SYSTEM.md", "project append")
    loaded = load_resources(project, agent_dir, ResourceOptions(include_builtin=False))
    assert [f.content for f in loaded.context_files] == ["global rules", "project rules"]
    assert [s.name for s in loaded.skills] == ["s1"]
    assert [t.name for t in loaded.prompt_templates] == ["p1"]
    assert loaded.custom_prompt == "project system"
    assert loaded.custom_prompt_path == project / ".pi" / "SYSTEM.md"
    assert loaded.append_system_prompt == "project append"
    assert loaded.diagnostics == []
    prompt = loaded.build_system_prompt([], today=dt.date(2026, 1, 2))
    assert prompt.startswith("project system\n\nproject append\n\n# Project Context")


def test_global_system_files_are_the_fallback(project: Path, agent_dir: Path) -> None:
    write(agent_dir / "SYSTEM.md", "global system")
    write(agent_dir / "APPEND_SYSTEM.md", "global append")
    loaded = load_resources(project, agent_dir)
    assert (loaded.custom_prompt, loaded.append_system_prompt) == ("global system", "global append")


def test_flags_text_or_file_and_append_replaces_files(project: Path, agent_dir: Path) -> None:
    write(project / ".pi" / "APPEND_SYSTEM.md", "file append")
    write(project / "prompt.txt", "system from file")
    write(project / "extra.md", "append from file")
    args = build_parser().parse_args([
        "--system-prompt", "prompt.txt", "--append-system-prompt", "literal text",
        "--append-system-prompt", "extra.md", "--no-context-files",
    ])
    write(project / "AGENTS.md", "ignored")
    loaded = load_resources(project, agent_dir, ResourceOptions.from_args(args))
    assert loaded.custom_prompt == "system from file"
    assert loaded.append_system_prompt == "literal text\n\nappend from file"
    assert loaded.context_files == []
    literal = load_resources(project, agent_dir, ResourceOptions(system_prompt="Be brief."))
    assert literal.custom_prompt == "Be brief." and literal.custom_prompt_path is None


def test_no_skills_and_no_templates_keep_explicit_paths(project: Path, agent_dir: Path, tmp_path: Path) -> None:
    write(agent_dir / "skills" / "auto" / "SKILL.md", "---\ndescription: a\n---\n")
    write(agent_dir / "prompts" / "auto.md", "a")
    write(tmp_path / "mine" / "SKILL.md", "---\ndescription: mine\n---\n")
    write(tmp_path / "mine.md", "mine")
    options = ResourceOptions(
        no_skills=True, skill_paths=[str(tmp_path / "mine")],
        no_prompt_templates=True, prompt_template_paths=[str(tmp_path / "mine.md")],
    )
    loaded = load_resources(project, agent_dir, options)
    assert [s.name for s in loaded.skills] == ["mine"]
    assert [t.name for t in loaded.prompt_templates] == ["mine"]


def test_settings_and_extension_paths(project: Path, agent_dir: Path, tmp_path: Path) -> None:
    write(agent_dir / "settings.json", '{"prompts": ["extra-prompts"], "skills": ["extra-skills"]}')
    write(agent_dir / "extra-prompts" / "fromsettings.md", "s")
    write(agent_dir / "extra-skills" / "from-settings" / "SKILL.md", "---\ndescription: s\n---\n")
    write(tmp_path / "ext" / "fromext.md", "e")
    settings = load_settings(project, agent_dir)
    loaded = load_resources(project, agent_dir, ResourceOptions(
        settings=settings, extra_prompt_paths=[tmp_path / "ext"], include_builtin=False))
    assert [t.name for t in loaded.prompt_templates] == ["fromsettings", "fromext"]
    assert [s.name for s in loaded.skills] == ["from-settings"]


def test_problems_become_diagnostics_not_exceptions(project: Path, agent_dir: Path) -> None:
    write(agent_dir / "skills" / "broken" / "SKILL.md", "---\nname: [x\n---\n")
    write(agent_dir / "prompts" / "bad.md", "---\ndescription: [x\n---\n")
    loaded = load_resources(project, agent_dir, ResourceOptions(include_builtin=False,
                                                                skill_paths=["missing-dir"]))
    assert len(loaded.diagnostics) == 3
    assert all(d.path is not None for d in loaded.diagnostics)


def test_reload_picks_up_changes(project: Path, agent_dir: Path) -> None:
    first = load_resources(project, agent_dir)
    write(project / "AGENTS.md", "new instructions")
    second = load_resources(project, agent_dir)
    assert first.context_files == [] and second.context_files[0].content == "new instructions"


def test_from_args_defaults() -> None:
    options = ResourceOptions.from_args(argparse.Namespace())
    assert options == ResourceOptions()


def _skill_file(folder: Path, name: str, description: str) -> Path:
    return write(folder / name / "SKILL.md", f"---\nname: {name}\ndescription: {description}\n---\nBody of {description}\n")


def test_skills_and_templates_load_in_pis_order_with_clean_paths(project: Path, agent_dir: Path,
                                                                 isolated_home: Path) -> None:
    """pi 0.73.1 on this layout (checked side by side): the project settings' ``skills[]`` and
    ``prompts[]`` first, then ``.pi/``, then the global settings', then the agent dir; settings paths
    normalized (``.pi/../.claude`` is sent as ``.claude``); a link to a skill already loaded is
    skipped silently and the location shown is the one reached first."""
    (project / ".git").mkdir()
    claude_alpha = _skill_file(project / ".claude" / "skills", "alpha", "alpha named by the project settings")
    _skill_file(project / ".pi" / "skills", "alpha", "alpha found in .pi/skills")
    _skill_file(project / ".pi" / "skills", "beta", "beta")
    (project / ".pi" / "skills" / "alpha-link").symlink_to(claude_alpha.parent)
    _skill_file(project / ".agents" / "skills", "gamma", "gamma")
    _skill_file(agent_dir / "skills", "delta", "delta")
    _skill_file(isolated_home / "mine", "eps", "eps named by the global settings")
    _skill_file(isolated_home / ".agents" / "skills", "zeta", "zeta")
    write(project / "tpl" / "x.md", "x from the project settings")
    write(project / ".pi" / "prompts" / "x.md", "x from .pi/prompts")
    write(isolated_home / "tpl" / "y.md", "y from the global settings")
    write(agent_dir / "prompts" / "y.md", "y from the agent dir")
    write(project / ".pi" / "settings.json", '{"skills": ["../.claude/skills"], "prompts": ["../tpl"]}')
    write(agent_dir / "settings.json", f'{{"skills": ["{isolated_home}/mine"], "prompts": ["{isolated_home}/./tpl"]}}')
    loaded = load_resources(project, agent_dir, ResourceOptions(settings=load_settings(project, agent_dir),
                                                                include_builtin=False))
    assert [(s.name, s.file_path) for s in loaded.skills] == [
        ("alpha", project / ".claude" / "skills" / "alpha" / "SKILL.md"),
        ("beta", project / ".pi" / "skills" / "beta" / "SKILL.md"),
        ("gamma", project / ".agents" / "skills" / "gamma" / "SKILL.md"),
        ("eps", isolated_home / "mine" / "eps" / "SKILL.md"),
        ("delta", agent_dir / "skills" / "delta" / "SKILL.md"),
        ("zeta", isolated_home / ".agents" / "skills" / "zeta" / "SKILL.md"),
    ]
    prompt = loaded.build_system_prompt([ReadTool()], today=dt.date(2026, 1, 2))
    assert "/.pi/../" not in prompt and f"<location>{claude_alpha}</location>" in prompt
    assert [(t.name, t.content.strip()) for t in loaded.prompt_templates] == [
        ("x", "x from the project settings"), ("y", "y from the global settings")]
    # The two real clashes are reported, the link to a skill already loaded is not.
    assert sorted((d.type, str(d.path)) for d in loaded.diagnostics) == sorted([
        ("collision", str(project / ".pi" / "skills" / "alpha" / "SKILL.md")),
        ("collision", str(project / ".pi" / "prompts" / "x.md")),
        ("collision", str(agent_dir / "prompts" / "y.md")),
    ])


def test_overriding_a_builtin_is_not_a_collision(project: Path, agent_dir: Path) -> None:
    """docs/prompt-templates.md offers ``.pi/prompts/review.md`` as the way to change ``/review``;
    two of the user's own files of one name are still a collision."""
    write(project / ".pi" / "prompts" / "review.md", "Review my way")
    write(agent_dir / "prompts" / "review.md", "Review the user's way")
    write(agent_dir / "prompts" / "commit.md", "Commit my way")
    _skill_file(agent_dir / "skills", "git-bisect", "my own bisect")
    loaded = load_resources(project, agent_dir)
    templates = {t.name: t for t in loaded.prompt_templates}
    assert templates["review"].content.strip() == "Review my way"
    assert templates["commit"].source == "user"
    assert next(s for s in loaded.skills if s.name == "git-bisect").source == "user"
    assert [(d.type, d.path) for d in loaded.diagnostics] == [("collision", agent_dir / "prompts" / "review.md")]
