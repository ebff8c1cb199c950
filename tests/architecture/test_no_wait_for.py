"""No ``asyncio.wait_for`` in the product: on Python 3.11 it drops a cancel that lands as the
awaited thing finishes (``pi_tui/core/deadline.py`` says why); ``within`` is the time limit."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "pi_tui"


def _root_name(node: ast.expr) -> str | None:
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def wait_for_calls(source: str) -> list[int]:
    """Lines that use ``asyncio.wait_for`` (called, passed along, imported by name, through an
    alias of asyncio or ``asyncio.tasks``)."""
    tree = ast.parse(source)
    aliases = {alias.asname or alias.name for node in ast.walk(tree) if isinstance(node, ast.Import)
               for alias in node.names if alias.name.split(".")[0] == "asyncio"}
    lines = [node.lineno for node in ast.walk(tree)
             if isinstance(node, ast.Attribute) and node.attr == "wait_for" and _root_name(node.value) in aliases]
    lines += [node.lineno for node in ast.walk(tree)
              if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "asyncio"
              and any(alias.name == "wait_for" for alias in node.names)]
    return sorted(lines)


def test_the_check_sees_each_way_of_using_wait_for() -> None:
    planted = ("import asyncio\nimport asyncio as aio\nfrom asyncio.tasks import wait_for\nasync def f(c):\n"
               "    await asyncio.wait_for(c, 1)\n    g = aio.wait_for\n    h = asyncio.tasks.wait_for\n")
    assert wait_for_calls(planted) == [3, 5, 6, 7]
    assert wait_for_calls("async def f(agent):\n    await agent.wait_for_idle()\n") == []


def test_no_module_uses_asyncio_wait_for() -> None:
    found = [f"{path.relative_to(PACKAGE.parent)}:{line}"
             for path in sorted(PACKAGE.rglob("*.py")) for line in wait_for_calls(path.read_text())]
    assert found == [], "use pi_tui.core.deadline.within instead of asyncio.wait_for: " + ", ".join(found)
