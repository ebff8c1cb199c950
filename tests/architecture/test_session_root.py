"""``AgentSession`` is a composition root (issue 18): no mixins, and its collaborators never import
it — nor each other in a circle. Imports are read from the source with ``ast``: every import
counts, at module level, under ``TYPE_CHECKING`` and inside functions."""

from __future__ import annotations

import ast
from pathlib import Path

from pi_tui.session.agent_session import AgentSession
from tests.architecture.private_access import private_reaches

SESSION = Path(__file__).resolve().parents[2] / "pi_tui" / "session"
ROOT = "pi_tui.session.agent_session"


def imported_modules(source: str) -> set[str]:
    """Every ``pi_tui`` module the source imports, wherever the import statement is."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {name for name in found if name.startswith("pi_tui.")}


def session_graph(folder: Path) -> dict[str, set[str]]:
    modules = {f"pi_tui.session.{p.stem}": p for p in folder.glob("*.py") if p.stem != "__init__"}
    return {name: imported_modules(path.read_text()) & set(modules) - {name} for name, path in modules.items()}


def cycle_in(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as a path (first module repeated at the end), or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for target in sorted(graph.get(node, ())):
            if state.get(target) == 1:
                return [*stack[stack.index(target):], target]
            if target not in state and (found := visit(target)) is not None:
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)) is not None:
            return found
    return None


def test_agent_session_has_no_mixin_bases() -> None:
    assert AgentSession.__bases__ == (object,)
    mixins = [p.name for p in SESSION.glob("*.py") if "Mixin(" in p.read_text()]
    assert mixins == []


def test_no_collaborator_imports_the_composition_root() -> None:
    importers = sorted(name for name, targets in session_graph(SESSION).items() if ROOT in targets)
    assert importers == []


def test_no_import_cycle_inside_session() -> None:
    assert cycle_in(session_graph(SESSION)) is None


def test_the_checks_catch_a_planted_violation_wherever_the_import_hides(tmp_path: Path) -> None:
    (tmp_path / "agent_session.py").write_text("from pi_tui.session.runs import Runs\n")
    (tmp_path / "runs.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from pi_tui.session.agent_session import AgentSession\n"
    )
    (tmp_path / "lifecycle.py").write_text("def later():\n    from pi_tui.session import agent_session\n")
    graph = session_graph(tmp_path)
    assert sorted(name for name, targets in graph.items() if ROOT in targets) == [
        "pi_tui.session.lifecycle", "pi_tui.session.runs",
    ]
    assert cycle_in(graph) == [ROOT, "pi_tui.session.runs", ROOT]


def test_no_module_reaches_into_another_ones_private_attributes() -> None:
    """A collaborator uses the session's public seams (``session.sandbox``, ``session.background``,
    the runner's ``guarded``/``require_key``...), never ``session._state`` or ``runner._signal``:
    a leading underscore is the defining module's own (private_access.py)."""
    assert private_reaches(SESSION.parent) == []
