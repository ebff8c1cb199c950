from __future__ import annotations

import os
from pathlib import Path

import pytest

from pi_tui.resources.skills import (
    SKILL_BLOCK_PATTERN,
    Skill,
    expand_skill_command,
    format_skills_for_prompt,
    load_skills,
)


def skill(root: Path, folder: str, frontmatter: str | None, body: str = "Body text.") -> Path:
    path = root / folder / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    text = body if frontmatter is None else f"---\n{frontmatter}\n---\n{body}"
    path.write_text(text, encoding="utf-8")
    return path


def load(root: Path, project: Path, agent_dir: Path) -> tuple[dict[str, Skill], list[tuple[str, str]]]:
    result = load_skills(project, agent_dir, explicit_paths=[root], include_defaults=False)
    return {s.name: s for s in result.skills}, [(d.type, d.message) for d in result.diagnostics]


# One folder per validation case, like pi's test fixtures (§11).
CASES = [
    ("valid-skill", "name: valid-skill\ndescription: A valid skill.", [], True),
    ("name-mismatch", "name: different-name\ndescription: d", ['name "different-name" does not match parent directory "name-mismatch"'], True),
    ("long-name", f"name: {'a' * 65}\ndescription: d",
     [f'name "{"a" * 65}" does not match parent directory "long-name"', "name exceeds 64 characters (65)"], True),
    ("Invalid_Name", "description: d", ['name contains invalid characters (must be lowercase a-z, 0-9, hyphens only)'], True),
    ("-leading", "description: d", ["name must not start or end with a hyphen"], True),
    ("trailing-", "description: d", ["name must not start or end with a hyphen"], True),
    ("double--hyphen", "description: d", ["name must not contain consecutive hyphens"], True),
    ("missing-description", "name: missing-description", ["description is required"], False),
    ("blank-description", "name: blank-description\ndescription: '   '", ["description is required"], False),
    ("long-description", "description: " + "d" * 1025, [
        "description exceeds 1024 characters (1025)",  # pi's warning; pi-tui also cuts it (bounded prompt)
        "only the first 1024 characters of the description are sent to the model"], True),
    ("unknown-field", "name: unknown-field\ndescription: d\nauthor: someone\nversion: 2", [], True),
    ("no-frontmatter", None, ["description is required"], False),
]


@pytest.mark.parametrize(("folder", "frontmatter", "warnings", "loads"), CASES, ids=[c[0] for c in CASES])
def test_validation_cases(
    tmp_path: Path, project: Path, agent_dir: Path, folder: str, frontmatter: str | None, warnings: list[str], loads: bool
) -> None:
    root = tmp_path / "skills"
    skill(root, folder, frontmatter)
    skills, diagnostics = load(root, project, agent_dir)
    assert diagnostics == [("warning", w) for w in warnings]
    assert bool(skills) is loads


def test_invalid_yaml_is_skipped_with_parser_message(tmp_path: Path, project: Path, agent_dir: Path) -> None:
    root = tmp_path / "skills"
    skill(root, "invalid-yaml", "name: invalid-yaml\ndescription: [unclosed")
    skills, diagnostics = load(root, project, agent_dir)
    assert skills == {}
    assert len(diagnostics) == 1 and "at line" in diagnostics[0][1]


def test_name_falls_back_to_directory_and_fields_parse(tmp_path: Path, project: Path, agent_dir: Path) -> None:
    root = tmp_path / "skills"
    path = skill(root, "my-skill", "description: |\n  Line one.\n  Line two.\ndisable-model-invocation: true")
    skills, diagnostics = load(root, project, agent_dir)
    s = skills["my-skill"]
    assert diagnostics == []
    assert s.description == "Line one.\nLine two.\n"  # multiline YAML is preserved as written
    assert s.disable_model_invocation is True
    assert (s.file_path, s.base_dir, s.source) == (path, path.parent, "path")


def test_root_skill_md_wins_over_nested_ones(tmp_path: Path, project: Path, agent_dir: Path) -> None:
    root = tmp_path / "outer"
    skill(tmp_path, "outer", "description: outer")
    skill(root, "inner", "description: inner")
    skills, _ = load(root, project, agent_dir)
    assert list(skills) == ["outer"]


def test_top_level_markdown_and_nested_rules(tmp_path: Path, project: Path, agent_dir: Path) -> None:
    root = agent_dir / "skills"
    skill(root, "a-skill", "description: a", body="x")
    (root / "a-skill" / "EFFICIENCY.md").write_text("---\ndescription: ignored\n---\n")
    (root / "a-skill" / "sub").mkdir()
    (root / "loose.md").write_text("---\nname: skills\ndescription: a top-level skill file\n---\nbody")
    skill(root / "deep" / "er", "nested-one", "description: n")
    skill(root, "node_modules", "description: never")
    skill(root, ".hidden", "description: never")
    result = load_skills(project, agent_dir, include_builtin=False)
    assert sorted(s.name for s in result.skills) == ["a-skill", "nested-one", "skills"]
    assert result.diagnostics == []


def test_agents_skills_dirs_only_take_skill_md(tmp_path: Path, project: Path, agent_dir: Path, isolated_home: Path) -> None:
    (project / ".git").mkdir()
    agents = project / ".agents" / "skills"
    skill(agents, "from-agents", "description: a")
    agents.joinpath("top.md").write_text("---\ndescription: top-level md is not a skill here\n---\n")
    skill(project.parent / ".agents" / "skills", "above-git-root", "description: not reached")
    skill(isolated_home / ".agents" / "skills", "home-skill", "description: h")
    result = load_skills(project, agent_dir, include_builtin=False)
    assert [s.name for s in result.skills] == ["from-agents", "home-skill"]


def test_gitignore_is_honoured(tmp_path: Path, project: Path, agent_dir: Path) -> None:
    root = tmp_path / "skills"
    skill(root, "kept", "description: k")
    skill(root, "drafts", "description: d")
    (root / ".gitignore").write_text("drafts/\n")
    skills, _ = load(root, project, agent_dir)
    assert list(skills) == ["kept"]


def test_collision_first_wins_and_same_file_is_silent(tmp_path: Path, project: Path, agent_dir: Path) -> None:
    first = skill(tmp_path / "first", "calendar", "description: first")
    second = skill(tmp_path / "second", "calendar", "description: second")
    result = load_skills(
        project, agent_dir, explicit_paths=[tmp_path / "first", tmp_path / "second", tmp_path / "first"], include_defaults=False
    )
    assert [s.description for s in result.skills] == ["first"]
    (diag,) = result.diagnostics
    assert diag.type == "collision" and "collision" in diag.message and 'name "calendar"' in diag.message
    assert diag.collision is not None
    assert (diag.collision.winner_path, diag.collision.loser_path) == (first, second)


def test_project_wins_over_user(project: Path, agent_dir: Path) -> None:
    skill(agent_dir / "skills", "shared", "description: user")
    skill(project / ".pi" / "skills", "shared", "description: project")
    result = load_skills(project, agent_dir, include_builtin=False)
    assert [s.description for s in result.skills] == ["project"]


def test_missing_path_warns_and_no_skills_keeps_explicit(tmp_path: Path, project: Path, agent_dir: Path) -> None:
    skill(agent_dir / "skills", "auto", "description: a")
    explicit = skill(tmp_path, "explicit", "description: e")
    result = load_skills(project, agent_dir, explicit_paths=[explicit, tmp_path / "gone"], include_defaults=False)
    assert [s.name for s in result.skills] == ["explicit"]
    assert [(d.message, d.path) for d in result.diagnostics] == [("skill path does not exist", tmp_path / "gone")]


def test_broken_symlink_reported(tmp_path: Path, project: Path, agent_dir: Path) -> None:
    root = tmp_path / "skills"
    root.mkdir()
    os.symlink(tmp_path / "nowhere", root / "dangling")
    _, diagnostics = load(root, project, agent_dir)
    assert diagnostics == [("warning", "broken symlink skipped")]


def _skill(name: str, description: str, disabled: bool = False) -> Skill:
    path = Path(f"/skills/{name}/SKILL.md")
    return Skill(name, description, path, path.parent, "user", disabled)


def test_format_skills_for_prompt() -> None:
    text = format_skills_for_prompt([_skill("a", 'Use <x> & "y" \'z\''), _skill("hidden", "h", disabled=True)])
    assert text == (
        "\n\nThe following skills provide specialized instructions for specific tasks.\n"
        "Use the read tool to load a skill's file when the task matches its description.\n"
        "When a skill file references a relative path, resolve it against the skill directory "
        "(parent of SKILL.md / dirname of the path) and use that absolute path in tool commands.\n"
        "\n"
        "<available_skills>\n"
        "  <skill>\n"
        "    <name>a</name>\n"
        "    <description>Use &lt;x&gt; &amp; &quot;y&quot; &apos;z&apos;</description>\n"
        "    <location>/skills/a/SKILL.md</location>\n"
        "  </skill>\n"
        "</available_skills>"
    )
    assert format_skills_for_prompt([_skill("hidden", "h", disabled=True)]) == ""
    assert format_skills_for_prompt([]) == ""


def test_expand_skill_command(tmp_path: Path) -> None:
    path = skill(tmp_path, "deploy", "name: deploy\ndescription: d", body="\nStep one.\nStep two.\n")
    s = Skill("deploy", "d", path, path.parent, "user")
    expected_block = f'<skill name="deploy" location="{path}">\nReferences are relative to {path.parent}.\n\nStep one.\nStep two.\n</skill>'
    assert expand_skill_command("/skill:deploy", [s]) == expected_block
    with_args = expand_skill_command("/skill:deploy  to staging ", [s])
    assert with_args == expected_block + "\n\nto staging"
    match = SKILL_BLOCK_PATTERN.match(with_args or "")
    assert match is not None and match.group(1) == "deploy" and match.group(4) == "to staging"
    assert expand_skill_command("/skill:unknown x", [s]) is None
    assert expand_skill_command("plain text", [s]) is None
    errors: list[str] = []
    path.unlink()
    assert expand_skill_command("/skill:deploy", [s], on_error=errors.append) is None
    assert len(errors) == 1 and str(path) in errors[0]


def test_builtin_skills_are_valid(project: Path, agent_dir: Path) -> None:
    result = load_skills(project, agent_dir)
    builtin = [s for s in result.skills if s.source == "builtin"]
    assert {s.name for s in builtin} >= {"systematic-debugging", "git-bisect"}
    assert result.diagnostics == []
