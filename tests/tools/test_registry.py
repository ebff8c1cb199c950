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
    assert tools["read"].prompt_snippet == "Read file contents"
    assert tools["bash"].prompt_snippet == "Execute bash commands (ls, grep, find, etc.)"
    assert tools["edit"].prompt_guidelines[0] == "Use edit for precise changes (edits[].oldText must match exactly)"
    assert tools["write"].prompt_guidelines == ("Use write only for new files or complete rewrites.",)
    assert tools["edit"].parameters["required"] == ["path", "edits"]
    assert tools["edit"].parameters["additionalProperties"] is False


def test_each_call_returns_fresh_instances():
    assert builtin_tools()["read"] is not builtin_tools()["read"]
