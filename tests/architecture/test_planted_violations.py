"""Each architecture rule fails on a violation planted in a throwaway package (the issue's
"show it"): the checks of test_import_graph.py, run over tmp_path instead of pi_tui."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.architecture.import_graph import (
    build_graph,
    describe_cycle,
    find_cycles,
    forbidden_importers,
    long_modules,
    room_violations,
)
from tests.architecture.private_access import private_reaches
from tests.architecture.rules import MODULE_LINE_LIMIT, PI_TUI_ROOMS, TESTING_MAY_BE_IMPORTED_BY


def _plant(root: Path, files: dict[str, str]) -> Path:
    package = root / "pi_tui"
    for name, text in {"__init__.py": '"""planted"""\n', **files}.items():
        path = package / name
        path.parent.mkdir(parents=True, exist_ok=True)
        for parent in path.relative_to(package).parents:
            init = package / parent / "__init__.py"
            if not init.exists():
                init.write_text('"""planted"""\n')
        path.write_text(text)
    return package


CLEAN = {
    "core/messages.py": "import json\n",
    "providers/http.py": "from pi_tui.core.messages import json\n",
    "session/agent_session.py": "from pi_tui.providers import http\n",
    "modes/interactive/app.py": "import textual\nfrom pi_tui.session.agent_session import x\n",
    "subagents/task.py": "from pi_tui.providers.http import x\n",
    "testing/scripted.py": "from pi_tui.providers.http import x\n",
    "demo.py": "from pi_tui.testing.scripted import ScriptedProvider\n",
}


def test_a_clean_planted_tree_passes_every_check(tmp_path: Path) -> None:
    graph = build_graph(_plant(tmp_path, CLEAN))
    assert find_cycles(graph.edges()) == []
    assert forbidden_importers(graph, "testing", TESTING_MAY_BE_IMPORTED_BY) == []
    assert room_violations(graph, PI_TUI_ROOMS) == []
    assert long_modules(graph, MODULE_LINE_LIMIT) == []


@pytest.mark.parametrize("hidden", ["top level", "in a function", "under TYPE_CHECKING", "relative"])
def test_a_cycle_is_found_however_the_import_is_hidden(tmp_path: Path, hidden: str) -> None:
    back = {
        "top level": "from pi_tui.modes.interactive.app import PiApp\n",
        "in a function": "def f():\n    from pi_tui.modes.interactive import app\n",
        "under TYPE_CHECKING": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                               "    from pi_tui.modes.interactive.app import PiApp\n",
        "relative": "from .app import PiApp\n",
    }[hidden]
    graph = build_graph(_plant(tmp_path, {
        **CLEAN,
        "modes/interactive/app.py": "from pi_tui.modes.interactive.chat_screen import ChatScreen\n",
        "modes/interactive/chat_screen.py": "from pi_tui.modes.interactive import slash_runner\n",
        "modes/interactive/slash_runner.py": back,
    }))
    cycles = [describe_cycle(cycle) for cycle in find_cycles(graph.edges())]
    assert cycles == ["pi_tui.modes.interactive.app → pi_tui.modes.interactive.chat_screen → "
                      "pi_tui.modes.interactive.slash_runner → pi_tui.modes.interactive.app"]


def test_a_product_module_importing_the_fakes_is_named(tmp_path: Path) -> None:
    graph = build_graph(_plant(tmp_path, {
        **CLEAN, "sdk.py": "def make():\n    from pi_tui.testing.scripted import ScriptedProvider\n"}))
    assert forbidden_importers(graph, "testing", TESTING_MAY_BE_IMPORTED_BY) == [
        "pi_tui.sdk imports pi_tui.testing.scripted"]


@pytest.mark.parametrize(("path", "text", "expected"), [
    ("permissions/rules.py", "from pi_tui.session.agent_session import AgentSession\n",
     "pi_tui.permissions.rules (permissions) imports pi_tui.session.agent_session (session)"),
    ("mcp/manager.py", "from pi_tui.subagents import task\n",
     "pi_tui.mcp.manager (mcp) imports pi_tui.subagents.task (subagents)"),
    ("checkpoints/store.py", "from pi_tui.testing import scripted\n",
     "pi_tui.checkpoints.store (checkpoints) imports pi_tui.testing.scripted (testing)"),
    ("subagents/task.py", "from pi_tui.modes.interactive import app\n",
     "pi_tui.subagents.task (subagents) imports pi_tui.modes.interactive.app (modes)"),
    ("tools/bash.py", "from pi_tui.providers import http\n",
     "pi_tui.tools.bash (tools) imports pi_tui.providers.http (providers)"),
    ("core/tokens.py", "import requests\n", "pi_tui.core.tokens (core) imports requests, outside the standard library"),
    ("core/events.py", "from pi_tui.session import agent_session\n",
     "pi_tui.core.events (core) imports pi_tui.session.agent_session (session)"),
    ("session/view.py", "import textual\n", "pi_tui.session.view imports textual (only pi_tui.modes.interactive may)"),
    ("providers/openai_http.py", "import litellm\n",
     "pi_tui.providers.openai_http imports litellm (only pi_tui.providers.litellm_ may)"),
])
def test_a_room_breaking_its_rule_is_named(tmp_path: Path, path: str, text: str, expected: str) -> None:
    graph = build_graph(_plant(tmp_path, {**CLEAN, path: text}))
    assert expected in room_violations(graph, PI_TUI_ROOMS)


def test_a_501_line_module_is_named(tmp_path: Path) -> None:
    graph = build_graph(_plant(tmp_path, {**CLEAN, "tools/huge.py": "x = 1\n" * 501,
                                          "tools/fine.py": "x = 1\n" * 500}))
    assert long_modules(graph, MODULE_LINE_LIMIT) == ["huge.py (pi_tui.tools.huge): 501 lines"]


@pytest.mark.parametrize(("how", "text"), [
    ("a literal name", 'import importlib\ndef f():\n    return importlib.import_module("pi_tui.testing.scripted")\n'),
    ("a bare import_module", 'from importlib import import_module\nx = import_module("pi_tui.testing.scripted")\n'),
    ("a name built at run time", 'import importlib\ndef f(n):\n    return importlib.import_module(f"pi_tui.testing.{n}")\n'),
    ("__import__", 'x = __import__("pi_tui.testing.scripted")\n'),
])
def test_an_import_by_name_is_an_edge_too(tmp_path: Path, how: str, text: str) -> None:
    graph = build_graph(_plant(tmp_path, {**CLEAN, "sdk.py": text}))
    assert forbidden_importers(graph, "testing", TESTING_MAY_BE_IMPORTED_BY) == [
        "pi_tui.sdk imports pi_tui.testing.scripted"], how


def test_an_import_by_name_closes_a_cycle(tmp_path: Path) -> None:
    graph = build_graph(_plant(tmp_path, {
        **CLEAN, "core/messages.py": 'import importlib\nm = importlib.import_module("pi_tui.providers.http")\n'}))
    assert [describe_cycle(c) for c in find_cycles(graph.edges())] == [
        "pi_tui.core.messages → pi_tui.providers.http → pi_tui.core.messages"]


def test_a_reach_into_another_objects_private_state_is_named(tmp_path: Path) -> None:
    package = _plant(tmp_path, {
        **CLEAN,
        "session/agent_session.py": "class AgentSession:\n    def __init__(self):\n        self._state = 1\n"
                                    "    @classmethod\n    def make(cls):\n        s = cls()\n        s._state = 2\n",
        "session/permission_hooks.py": "def attach(session, child):\n    session._state.sandbox = 1\n"
                                       "    child.hooks._gates.append(2)\n    import os\n    os._exit(0)\n",
    })
    assert private_reaches(package) == ["pi_tui/session/permission_hooks.py:2: session._state",
                                        "pi_tui/session/permission_hooks.py:3: child.hooks._gates"]
