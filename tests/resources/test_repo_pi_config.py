"""The repository's own ``.pi/`` (its configuration for working on pi-tui with pi-tui or pi),
loaded through the real settings and resource loaders as a session started in the repo would."""

from __future__ import annotations

from pathlib import Path

from pi_tui.resources.loader import ResourceOptions, load_resources
from pi_tui.resources.prompt_templates import expand_prompt_template
from pi_tui.resources.settings import load_settings
from pi_tui.resources.template_command import parse_template_command

REPO = Path(__file__).resolve().parents[2]


def test_the_repo_config_loads_cleanly(agent_dir: Path) -> None:
    settings = load_settings(REPO, agent_dir)
    resources = load_resources(REPO, agent_dir, ResourceOptions(settings=settings))
    assert settings.diagnostics == []
    assert [d for d in resources.diagnostics if ".pi" in str(d)] == []
    assert settings.context_strategy() == "pi" and settings.enable_skill_commands is True
    project = {t.name: t for t in resources.prompt_templates if t.source == "project"}
    assert set(project) == {"check", "land"}
    for template in project.values():
        assert template.file_path.parent == REPO / ".pi" / "prompts"
        assert template.description and template.argument_hint
        assert "$ARGUMENTS" in template.content


def test_the_repo_prompts_expand_with_arguments(agent_dir: Path) -> None:
    templates = load_resources(REPO, agent_dir, ResourceOptions()).prompt_templates
    checked = expand_prompt_template("/check tests/modes/rpc", templates)
    assert checked is not None and checked.endswith("What to test, if I named something: tests/modes/rpc")
    assert "make lint" in checked and "make typecheck" in checked
    landed = expand_prompt_template("/land the RPC clone command", templates)
    assert landed is not None and "Context from me: the RPC clone command" in landed
    assert "merge --ff-only" in landed
    command = parse_template_command("/template land the RPC clone command", templates)
    assert command is not None and command.rewritten == "/land the RPC clone command"


def test_the_repo_config_has_no_extensions() -> None:
    """Project extensions run code and need the user's trust; the repo ships text only."""
    shipped = {p.relative_to(REPO / ".pi").as_posix() for p in (REPO / ".pi").rglob("*") if p.is_file()}
    assert shipped == {"settings.json", "prompts/check.md", "prompts/land.md"}
