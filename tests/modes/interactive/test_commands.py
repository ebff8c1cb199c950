from __future__ import annotations

from dataclasses import dataclass

from pi_tui.modes.interactive.commands import (
    BUILTIN_COMMANDS,
    collect_commands,
    complete_slash,
    parse_slash,
)
from pi_tui.modes.interactive.file_complete import fuzzy_files, list_project_files


def test_parse_slash():
    assert parse_slash("/compact keep paths") == ("compact", "keep paths")
    assert parse_slash("/tree") == ("tree", "")
    assert parse_slash("hello /tree") is None
    assert parse_slash("//not a command") is None


@dataclass
class _Template:
    name: str
    description: str
    argument_hint: str = ""


@dataclass
class _Skill:
    name: str
    description: str


@dataclass
class _Resources:
    prompt_templates: list
    skills: list


@dataclass
class _Session:
    resources: _Resources


def test_completion_lists_builtins_templates_with_hints_and_skills():
    session = _Session(_Resources([_Template("review", "Review the diff\n carefully", "<file>")],
                                  [_Skill("pdf", "Work with PDFs")]))
    commands = collect_commands(session)
    names = [c.name for c in commands]
    assert names[: len(BUILTIN_COMMANDS)] == [c.name for c in BUILTIN_COMMANDS]
    review = next(c for c in commands if c.name == "review")
    assert (review.description, review.argument_hint, review.source) == ("Review the diff carefully", "<file>", "template")
    assert any(c.name == "skill:pdf" and c.source == "skill" for c in commands)
    assert [c.name for c in complete_slash("re", commands)] == ["resume", "reload", "redo", "review", "tree"]
    assert [c.name for c in complete_slash("skill:", commands)] == ["skill:pdf"]


def test_file_completion_is_fuzzy_and_skips_noise(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app_main.py").write_text("")
    (tmp_path / "node_modules").mkdir()
    (tmp_path / "node_modules" / "app.js").write_text("")
    (tmp_path / "README.md").write_text("")
    files = list_project_files(tmp_path)
    assert "src/app_main.py" in files and not any("node_modules" in f for f in files)
    assert fuzzy_files("appm", files)[0] == "src/app_main.py"
    assert fuzzy_files("zzz", files) == []
