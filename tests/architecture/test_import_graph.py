"""pi_tui's file-level import graph obeys ARCHITECTURE.md: no cycles, no product module importing
the fakes, each room importing only the rooms below it, modules under 500 lines.

Every import counts (module level, inside functions, under TYPE_CHECKING): see import_graph.py.
The same checks fail on planted violations in test_planted_violations.py.
"""

from __future__ import annotations

from pathlib import Path

from tests.architecture.import_graph import (
    build_graph,
    describe_cycle,
    find_cycles,
    forbidden_importers,
    long_modules,
    room_violations,
)
from tests.architecture.rules import (
    MODULE_LINE_LIMIT,
    PI_TUI_ROOMS,
    TESTING_MAY_BE_IMPORTED_BY,
    WAVE3,
)

PACKAGE = Path(__file__).resolve().parents[2] / "pi_tui"
GRAPH = build_graph(PACKAGE)


def test_the_graph_sees_every_kind_of_import() -> None:
    """Guards the checker itself: a function-level import (the chat screen's slash runner, built
    after the first frame) and a TYPE_CHECKING one (the key actions' ports) are edges."""
    assert "pi_tui.modes.interactive.slash_runner" in GRAPH.modules["pi_tui.modes.interactive.chat_screen"].internal
    assert "pi_tui.modes.interactive.screen_port" in GRAPH.modules["pi_tui.modes.interactive.key_actions"].internal
    assert len(GRAPH.modules) > 200


def test_no_import_cycles_between_files() -> None:
    cycles = [describe_cycle(cycle) for cycle in find_cycles(GRAPH.edges())]
    assert cycles == [], "import cycles (break them by moving the shared piece down, messages up, " \
        "or a Protocol defined below):\n" + "\n".join(cycles)


def test_no_product_module_imports_the_fakes() -> None:
    """pi_tui/testing is for tests, bench, examples and the demo entry only."""
    assert forbidden_importers(GRAPH, "testing", TESTING_MAY_BE_IMPORTED_BY) == []


def test_each_room_imports_only_what_it_may() -> None:
    """core → stdlib; the wires don't import each other; wave-3 rooms only the wires and core;
    only modes/interactive imports textual and only providers/litellm_* import litellm."""
    assert room_violations(GRAPH, PI_TUI_ROOMS) == []


def test_the_wave3_rooms_exist_as_packages() -> None:
    for room in sorted(WAVE3):
        init = PACKAGE / room / "__init__.py"
        assert init.is_file(), f"pi_tui/{room}/ is a package (issue 18)"
        assert init.read_text(encoding="utf-8").lstrip().startswith('"""'), f"{init} says what the room is"


def test_modules_stay_under_500_lines() -> None:
    assert long_modules(GRAPH, MODULE_LINE_LIMIT) == []
