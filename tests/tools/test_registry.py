from __future__ import annotations

from pi_tui.tools.registry import ALL_BUILTIN_TOOLS, DEFAULT_ACTIVE_TOOLS, builtin_tools


def test_builtin_tools_and_defaults():
    tools = builtin_tools()
    assert tuple(tools) == ALL_BUILTIN_TOOLS == ("read", "bash", "edit", "write", "grep", "find", "ls")
    assert DEFAULT_ACTIVE_TOOLS == ("read", "bash", "edit", "write")
    for name, tool in tools.items():
        assert tool.name == name
        assert tool.parameters["type"] == "object"
        assert tool.description and tool.label
        assert tool.execution_mode == "parallel"
    assert tools["read"].prompt_snippet == "Show a file's text (or an image) with line windows"
    assert tools["bash"].prompt_snippet == "Run shell commands (ls, rg, git, tests, builds …)"
    assert tools["edit"].prompt_guidelines[0] .startswith("Make targeted changes with edit")
    assert tools["write"].prompt_guidelines == ("Reserve write for new files and full rewrites; change existing files with edit.",)
    assert tools["edit"].parameters["required"] == ["path", "edits"]
    assert tools["edit"].parameters["additionalProperties"] is False


def test_each_call_returns_fresh_instances():
    assert builtin_tools()["read"] is not builtin_tools()["read"]
