"""The built-in tools by name (pi-behaviour.md §4, §13.4 "Selection").

``read``, ``bash``, ``edit`` and ``write`` are active by default; ``grep``, ``find`` and ``ls``
exist but are enabled only with ``--tools``. Each call builds fresh instances: tools hold no
state between sessions.
"""

from __future__ import annotations

from pi_tui.core.tool import Tool
from pi_tui.tools.bash import BashTool
from pi_tui.tools.edit import EditTool
from pi_tui.tools.find import FindTool
from pi_tui.tools.grep import GrepTool
from pi_tui.tools.ls import LsTool
from pi_tui.tools.read import ReadTool
from pi_tui.tools.write import WriteTool

DEFAULT_ACTIVE_TOOLS: tuple[str, ...] = ("read", "bash", "edit", "write")
ALL_BUILTIN_TOOLS: tuple[str, ...] = ("read", "bash", "edit", "write", "grep", "find", "ls")


def builtin_tools() -> dict[str, Tool]:
    """Every built-in tool, keyed by name, in ``ALL_BUILTIN_TOOLS`` order."""
    tools: list[Tool] = [ReadTool(), BashTool(), EditTool(), WriteTool(), GrepTool(), FindTool(), LsTool()]
    return {tool.name: tool for tool in tools}
