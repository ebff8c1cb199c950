from __future__ import annotations

import argparse
import datetime as dt
from pathlib import Path

from pi_tui.cli import build_parser
from pi_tui.resources.loader import ResourceOptions, load_resources
from pi_tui.resources.settings import load_settings


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
