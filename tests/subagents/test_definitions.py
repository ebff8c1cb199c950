"""Agent definitions: our files, Claude Code's files unchanged, built-ins, bad files reported
by file and line, and what a definition does to a real child run."""

from __future__ import annotations

import shutil
from pathlib import Path

from pi_tui.subagents.definitions import child_tool_names, load_agents
from tests.subagents.conftest import child_requests

DATA = Path(__file__).parent / "data"


def test_builtins_and_a_real_claude_code_agent_file(project: Path, agent_dir: Path) -> None:
    (project / ".claude" / "agents").mkdir(parents=True)
    shutil.copy(DATA / "code-reviewer.md", project / ".claude" / "agents" / "code-reviewer.md")
    loaded = load_agents(project, agent_dir)
    assert [a.name for a in loaded.agents] == ["code-reviewer", "general", "explore"]
    reviewer = loaded.get("code-reviewer")
    assert reviewer is not None and reviewer.tools == ("read", "grep", "find", "bash")
    assert reviewer.model is None  # inherit: the parent's model
    assert reviewer.system_prompt is not None and reviewer.system_prompt.startswith("You are a senior code reviewer")
    assert reviewer.description.startswith("Expert code review specialist.")
    assert loaded.diagnostics == ()


def test_project_files_win_over_the_agent_dir_and_replace_builtins(project: Path, agent_dir: Path) -> None:
    (project / ".pi" / "agents").mkdir(parents=True)
    (agent_dir / "agents").mkdir()
    (project / ".pi" / "agents" / "explore.md").write_text(
        "---\ndescription: my explorer\ntools: [read]\nthinking: low\nmodel: fake/cheap\n---\nExplore my way.\n")
    (agent_dir / "agents" / "explore.md").write_text("---\ndescription: global one\n---\nGlobal.\n")
    loaded = load_agents(project, agent_dir)
    explore = loaded.get("explore")
    assert explore is not None and explore.description == "my explorer" and explore.tools == ("read",)
    assert explore.thinking == "low" and explore.model == "fake/cheap"
    (collision,) = loaded.diagnostics
    assert collision.type == "collision" and collision.path == agent_dir / "agents" / "explore.md"


def test_bad_frontmatter_is_reported_by_file_and_line(project: Path, agent_dir: Path) -> None:
    folder = project / ".pi" / "agents"
    folder.mkdir(parents=True)
    (folder / "broken.md").write_text("---\nname: broken\ndescription: a: b\n---\nBody\n")
    (folder / "tools.md").write_text("---\nname: tools\ndescription: d\ntools: 42\n---\nBody\n")
    (folder / "think.md").write_text("---\ndescription: d\n\nthinking: extreme\n---\nBody\n")
    (folder / "empty.md").write_text("---\ndescription: nothing\n---\n")
    (folder / "web.md").write_text("---\ndescription: web\ntools: Read, WebFetch\n---\nFetch.\n")
    loaded = load_agents(project, agent_dir)
    by_file = {d.path.name: str(d) for d in loaded.diagnostics if d.path is not None}
    assert by_file["broken.md"].endswith("invalid frontmatter: mapping values are not allowed here at line 3, column 15")
    assert by_file["tools.md"].endswith("'tools' must be a list of tool names or a comma-separated string, got int at line 4")
    assert "'thinking' must be one of off, minimal, low, medium, high, xhigh, got 'extreme' at line 4" in by_file["think.md"]
    assert "body" in by_file["empty.md"]
    assert "WebFetch" in by_file["web.md"] and "line 3" in by_file["web.md"]
    assert str(folder / "broken.md") in by_file["broken.md"]
    assert [a.name for a in loaded.agents] == ["web", "general", "explore"]
    assert loaded.get("web").tools == ("read",)  # type: ignore[union-attr]


def test_a_definition_never_grants_more_than_the_parent_has(project: Path, agent_dir: Path) -> None:
    loaded = load_agents(project, agent_dir)
    explore, general = loaded.get("explore"), loaded.get("general")
    assert explore is not None and general is not None
    assert child_tool_names(explore, ["read", "bash", "edit", "write", "task"], allow_task=False) == [
        "read", "grep", "find", "ls", "bash"]  # bash in plan mode (explore is read_only)
    assert explore.read_only and not general.read_only
    assert child_tool_names(explore, ["bash"], allow_task=False) == ["bash"]  # no read: no search tools either
    assert child_tool_names(general, ["read", "bash", "task", "todo"], allow_task=False) == ["read", "bash", "todo"]
    assert child_tool_names(general, ["read", "task"], allow_task=True) == ["read", "task"]


async def test_the_agent_list_is_in_the_tool_description_not_the_system_prompt(make_parent, project: Path) -> None:
    (project / ".claude" / "agents").mkdir(parents=True)
    shutil.copy(DATA / "code-reviewer.md", project / ".claude" / "agents" / "code-reviewer.md")
    session, provider, _ = make_parent([
        {"when": {"last_user_contains": "PARENT"}, "tool_calls": [{"id": "t1", "name": "task", "arguments": {
            "description": "review", "prompt": "CHILD-R: review the diff", "subagent_type": "code-reviewer"}}]},
        {"when": {"last_user_contains": "CHILD-R"}, "text": "Looks fine."},
        {"when": {"last_user_contains": "PARENT"}, "text": "ok"},
    ])
    await session.prompt("PARENT: review")
    first = provider.requests[0]
    task = next(t for t in first.tools if t.name == "task")
    assert "- code-reviewer: Expert code review specialist." in task.description
    assert "code-reviewer" not in first.system_prompt
    (child,) = child_requests(provider)
    assert child.system_prompt.startswith("You are a senior code reviewer")
    assert sorted(t.name for t in child.tools) == ["bash", "find", "grep", "read"]


async def test_an_unknown_model_runs_on_the_parents_and_says_so(make_parent, project: Path) -> None:
    (project / ".pi" / "agents").mkdir(parents=True)
    (project / ".pi" / "agents" / "cheap.md").write_text("---\ndescription: d\nmodel: nowhere/none\n---\nBe cheap.\n")
    session, _provider, _ = make_parent([
        {"when": {"last_user_contains": "PARENT"}, "tool_calls": [{"id": "t1", "name": "task", "arguments": {
            "description": "x", "prompt": "CHILD-C: go", "subagent_type": "cheap"}}]},
        {"when": {"last_user_contains": "CHILD-C"}, "text": "done"},
        {"when": {"last_user_contains": "PARENT"}, "text": "ok"},
    ])
    await session.prompt("PARENT: go")
    result = next(m for m in session.messages if m.get("role") == "toolResult")
    assert result["isError"] is False
    assert "nowhere/none" in result["details"]["notes"][0]
    assert result["details"]["model"] == "fake/fake-model"
