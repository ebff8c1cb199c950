from __future__ import annotations

import datetime as dt
from pathlib import Path

from pi_tui.core.tool import FunctionTool, ToolResult, text_result
from pi_tui.resources.context_files import ContextFile
from pi_tui.resources.skills import Skill
from pi_tui.resources.system_prompt import (
    SystemPromptOptions,
    SystemPromptState,
    build_system_prompt,
    options_for_tools,
)

TODAY = dt.date(2026, 11, 30)
CWD = Path("/work/proj")


async def _noop(call_id: str, args: dict, ctx: object) -> ToolResult:
    return text_result("")


def tool(name: str, snippet: str | None, guidelines: tuple[str, ...] = ()) -> FunctionTool:
    return FunctionTool(name=name, description=f"{name} tool", parameters={}, run=_noop,
                        prompt_snippet=snippet, prompt_guidelines=guidelines)


DEFAULT_TOOLS = [
    tool("read", "Read file contents", ("Use read to examine files instead of cat or sed.",)),
    tool("bash", "Execute bash commands (ls, grep, find, etc.)"),
    tool("edit", "Make precise file edits with exact text replacement"),
    tool("write", "Create or overwrite files", ("Use write only for new files or complete rewrites.",)),
]
SKILL = Skill("deploy", "Deploy things", Path("/s/deploy/SKILL.md"), Path("/s/deploy"), "user")


def build(tools: list[FunctionTool], **kwargs: object) -> str:
    return build_system_prompt(options_for_tools(tools, cwd=CWD, **kwargs), today=TODAY)  # type: ignore[arg-type]


def test_default_prompt_structure_and_order() -> None:
    prompt = build(
        DEFAULT_TOOLS,
        skills=[SKILL],
        context_files=[ContextFile(Path("/a/AGENTS.md"), "Use tabs.")],
        append_system_prompt="APPENDED",
    )
    assert prompt.startswith("You are ")
    assert (
        "Available tools:\n- read: Read file contents\n- bash: Execute bash commands (ls, grep, find, etc.)\n"
        "- edit: Make precise file edits with exact text replacement\n- write: Create or overwrite files\n"
    ) in prompt
    assert (
        "Guidelines:\n- Explore files with bash (ls, rg, find)\n"
        "- Use read to examine files instead of cat or sed.\n"
        "- Use write only for new files or complete rewrites.\n"
        "- Keep answers short and to the point\n- Name the files you look at or change by their paths\n"
    ) in prompt
    order = [
        prompt.index("Available tools:"),
        prompt.index("Guidelines:"),
        prompt.index("documentation"),
        prompt.index("\n\nAPPENDED"),
        prompt.index("\n\n# Project Context\n\nProject-specific instructions and guidelines:\n\n## /a/AGENTS.md\n\nUse tabs.\n\n"),
        prompt.index("<available_skills>"),
        prompt.index("\nCurrent date: 2026-11-30"),
    ]
    assert order == sorted(order)
    assert prompt.endswith("\nCurrent date: 2026-11-30\nCurrent working directory: /work/proj")


def test_empty_tool_list() -> None:
    prompt = build([])
    assert "Available tools:\n(none)" in prompt
    assert "- Name the files you look at or change by their paths" in prompt
    assert "Use bash" not in prompt


def test_tools_without_snippet_are_omitted_and_snippets_are_one_line() -> None:
    prompt = build([tool("read", "Read\n  files"), tool("secret", None), tool("mine", "Does   mine things")])
    assert "- read: Read files\n- mine: Does mine things" in prompt
    assert "secret" not in prompt


def test_guidelines_trimmed_deduplicated_and_exploration_line() -> None:
    tools = [tool("bash", "b", ("  Same line  ",)), tool("grep", "g", ("Same line", "")), tool("x", "x", ("Other",))]
    prompt = build(tools)
    assert (
        "Guidelines:\n- Explore files with the grep, find and ls tools rather than bash: they are faster and skip ignored files\n"
        "- Same line\n- Other\n- Keep answers short and to the point\n"
    ) in prompt


def test_skills_listed_only_when_read_is_active() -> None:
    assert "<available_skills>" in build(DEFAULT_TOOLS, skills=[SKILL])
    assert "<available_skills>" not in build(DEFAULT_TOOLS[1:], skills=[SKILL])


def test_custom_prompt_replaces_body_but_keeps_the_rest() -> None:
    prompt = build(
        DEFAULT_TOOLS,
        custom_prompt="CUSTOM BODY",
        append_system_prompt="APPENDED",
        skills=[SKILL],
        context_files=[ContextFile(Path("/a/AGENTS.md"), "ctx")],
    )
    assert prompt.startswith("CUSTOM BODY\n\nAPPENDED\n\n# Project Context")
    assert "Available tools" not in prompt and "Guidelines" not in prompt
    assert "<available_skills>" in prompt
    assert prompt.endswith("Current working directory: /work/proj")
    no_read = build(DEFAULT_TOOLS[1:], custom_prompt="C", skills=[SKILL])
    assert "<available_skills>" not in no_read


def test_custom_prompt_without_tool_list_assumes_read() -> None:
    options = SystemPromptOptions(cwd=CWD, custom_prompt="C", skills=[SKILL], selected_tools=None)
    assert "<available_skills>" in build_system_prompt(options, today=TODAY)


def test_no_context_files_means_no_project_context_section() -> None:
    assert "Project Context" not in build(DEFAULT_TOOLS)


def test_windows_cwd_uses_forward_slashes() -> None:
    options = SystemPromptOptions(cwd=Path("C:\\Users\\me"), selected_tools=[])
    assert build_system_prompt(options, today=TODAY).endswith("Current working directory: C:/Users/me")


def test_local_date_by_default() -> None:
    assert build([]).count("Current date: ") == 1
    assert f"Current date: {dt.date.today().isoformat()}" in build_system_prompt(SystemPromptOptions(cwd=CWD))


def test_event_dict_has_pi_keys() -> None:
    options = options_for_tools(DEFAULT_TOOLS, cwd=CWD, skills=[SKILL])
    assert set(options.to_event_dict()) == {
        "cwd", "skills", "contextFiles", "customPrompt", "appendSystemPrompt",
        "selectedTools", "toolSnippets", "promptGuidelines",
    }
    assert options.to_event_dict()["selectedTools"] == ["read", "bash", "edit", "write"]


def test_per_run_override_holds_for_the_run_and_is_restored() -> None:
    state = SystemPromptState("BASE")
    seen: list[str] = []
    with state.run("OVERRIDE"):
        seen.append(state.current)  # first model call
        state.base = "REBUILT BASE"  # tools changed mid-run: the override still holds
        seen.append(state.current)  # tool-call continuation
    assert seen == ["OVERRIDE", "OVERRIDE"]
    assert state.current == "REBUILT BASE"
    try:
        with state.run("AGAIN"):
            raise RuntimeError("run failed")
    except RuntimeError:
        pass
    assert state.current == "REBUILT BASE" and state.override is None
    with state.run(""):  # an empty chained prompt means the base
        assert state.current == "REBUILT BASE"
