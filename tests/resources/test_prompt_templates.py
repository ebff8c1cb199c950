from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pi_tui.resources.prompt_templates import (
    PromptTemplate,
    expand_prompt_template,
    load_prompt_templates,
    parse_command_args,
    substitute_args,
)


def md(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("template", "args", "expected"),
    [
        ("$1 $2 $3 $4 $5", ["a", "b"], "a b   "),
        ("$1.5", ["a"], "a.5"),
        ("pre$@", ["a", "b"], "prea b"),
        ("$ARGUMENTS", ["$1", "$ARGUMENTS"], "$1 $ARGUMENTS"),
        ("$@", ["$2", "x"], "$2 x"),
        ("${@:2:2}", ["a", "b", "c", "d"], "b c"),
        ("${@:2}", ["a", "b", "c"], "b c"),
        ("${@:0}", ["a", "b"], "a b"),
        ("${@:1:1}", ["a", "b"], "a"),
        ("${@:9}", ["a"], ""),
        ("$0|$1", ["a"], "|a"),
        ("$10", [str(i) for i in range(1, 11)], "10"),
        ("$1", [], ""),
        ("$ARGUMENTS", [], ""),
        ("${1:-fallback}", [], "fallback"),
        ("${1:-fallback}", [""], "fallback"),
        ("${1:-fallback}", ["given"], "given"),
        ("${2:-two} ${1:-one}", ["x"], "two x"),
        ("${1:-$2}", [], "$2"),  # defaults are not re-expanded
        ("${1:-}", [], ""),
        ("\\$100", ["a"], "\\"),
        ("$arguments $Arguments", ["a"], "$arguments $Arguments"),
        ("cost: $ and ${x}", ["a"], "cost: $ and ${x}"),
        ("$1$1", ["ab"], "abab"),
    ],
)
def test_substitution_cases(template: str, args: list[str], expected: str) -> None:
    assert substitute_args(template, args) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('"" " "', [" "]),
        ('"quoted \\"text\\""', ["quoted \\text\\"]),
        ("a\tb  c", ["a", "b", "c"]),
        ("'single quoted' \"double quoted\"", ["single quoted", "double quoted"]),
        ('"line one\nline two"', ["line one\nline two"]),
        ("pre'mid dle'post", ["premid dlepost"]),
        ("", []),
        ("   ", []),
        ('"unterminated rest', ["unterminated rest"]),
    ],
)
def test_parse_command_args(text: str, expected: list[str]) -> None:
    assert parse_command_args(text) == expected


def _template(name: str, content: str) -> PromptTemplate:
    return PromptTemplate(name=name, description="", content=content, file_path=Path(f"/t/{name}.md"), source="user")


def test_expand_prompt_template() -> None:
    templates = [_template("review", "Review $1 focusing on ${2:-correctness}. All: $@")]
    assert expand_prompt_template('/review "src/a b.py"', templates) == "Review src/a b.py focusing on correctness. All: src/a b.py"
    assert expand_prompt_template("/review", templates) == "Review  focusing on correctness. All: "
    assert expand_prompt_template("/unknown x", templates) is None
    assert expand_prompt_template("review x", templates) is None
    # The name ends at the first space (pi 0.73.1): a newline does not end it.
    assert expand_prompt_template("/review\nx", templates) is None


def test_loading_descriptions_hints_and_sources(project: Path, agent_dir: Path) -> None:
    md(agent_dir / "prompts" / "fix.md", "---\ndescription: Fix a bug\nargument-hint: <issue>\n---\nFix $1")
    long_line = "x" * 70
    md(agent_dir / "prompts" / "long.md", f"\n\n{long_line}\nmore")
    md(agent_dir / "prompts" / "short.md", "Short first line\nsecond")
    md(agent_dir / "prompts" / "notes.txt", "ignored")
    md(agent_dir / "prompts" / "sub" / "nested.md", "not scanned: non-recursive")
    md(project / ".pi" / "prompts" / "proj.md", "Project $@")
    result = load_prompt_templates(project, agent_dir, include_builtin=False)
    by_name = {t.name: t for t in result.templates}
    assert set(by_name) == {"fix", "long", "short", "proj"}
    assert by_name["fix"].description == "Fix a bug"
    assert by_name["fix"].argument_hint == "<issue>"
    assert by_name["fix"].content == "Fix $1"
    assert by_name["long"].description == "x" * 60 + "..."
    assert by_name["short"].description == "Short first line"
    assert by_name["proj"].source == "project" and by_name["fix"].source == "user"
    assert result.diagnostics == []


def test_collision_first_wins_with_diagnostic(project: Path, agent_dir: Path) -> None:
    user = md(agent_dir / "prompts" / "same.md", "user version")
    proj = md(project / ".pi" / "prompts" / "same.md", "project version")
    result = load_prompt_templates(project, agent_dir, include_builtin=False)
    assert [t.content for t in result.templates] == ["project version"]
    (diag,) = result.diagnostics
    assert diag.type == "collision" and diag.message == 'name "/same" collision'
    assert diag.collision is not None
    assert (diag.collision.winner_path, diag.collision.loser_path) == (proj, user)


def test_symlinks_followed_and_broken_ones_reported(project: Path, agent_dir: Path, tmp_path: Path) -> None:
    target = md(tmp_path / "elsewhere" / "real.md", "Real body")
    prompts = agent_dir / "prompts"
    prompts.mkdir()
    os.symlink(target, prompts / "linked.md")
    os.symlink(tmp_path / "missing.md", prompts / "broken.md")
    result = load_prompt_templates(project, agent_dir, include_builtin=False)
    assert [t.name for t in result.templates] == ["linked"]
    assert [(d.type, d.path) for d in result.diagnostics] == [("warning", prompts / "broken.md")]


def test_explicit_paths_and_no_prompt_templates(project: Path, agent_dir: Path, tmp_path: Path) -> None:
    md(agent_dir / "prompts" / "auto.md", "auto")
    explicit = md(tmp_path / "one.md", "explicit")
    folder = tmp_path / "folder"
    md(folder / "two.md", "two")
    missing = tmp_path / "nope.md"
    result = load_prompt_templates(
        project, agent_dir, explicit_paths=[explicit, folder, missing], include_defaults=False
    )
    assert [t.name for t in result.templates] == ["one", "two"]
    assert [(d.path, d.message) for d in result.diagnostics] == [(missing, "prompt template path does not exist")]


def test_invalid_frontmatter_is_reported_and_skipped(project: Path, agent_dir: Path) -> None:
    bad = md(agent_dir / "prompts" / "bad.md", "---\ndescription: [oops\n---\nbody")
    result = load_prompt_templates(project, agent_dir, include_builtin=False)
    assert result.templates == []
    assert result.diagnostics[0].path == bad and "at line" in result.diagnostics[0].message


def test_builtin_templates_load_cleanly(project: Path, agent_dir: Path) -> None:
    result = load_prompt_templates(project, agent_dir)
    builtin = [t for t in result.templates if t.source == "builtin"]
    assert 3 <= len(builtin) <= 5
    assert result.diagnostics == []
    for template in builtin:
        assert template.description and not template.description.endswith("...")
        assert template.argument_hint
        assert "$" in template.content  # each one takes arguments


_arg = st.text(alphabet=st.sampled_from(list("ab $@{}:-0123456789ARGUMENTS")), max_size=8)


@given(st.lists(_arg, max_size=5))
def test_values_are_never_expanded_again(args: list[str]) -> None:
    assert substitute_args("$@", args) == " ".join(args)
    assert substitute_args("[$1]", args) == f"[{args[0] if args else ''}]"
    assert substitute_args("${1:-$2}", args) == (args[0] if args and args[0] else "$2")


@given(st.text(max_size=40))
def test_parse_command_args_never_yields_empty_or_separator_only_args(text: str) -> None:
    for arg in parse_command_args(text):
        assert arg != ""
