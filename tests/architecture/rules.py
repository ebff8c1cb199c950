"""The rooms of pi_tui and what each may import (/work/shared/design/ARCHITECTURE.md,
docs/internals.md "Rooms"), as data the checks in import_graph.py read."""

from __future__ import annotations

from tests.architecture.import_graph import Rooms

BASE = frozenset({"core"})
WIRES = frozenset({"agent", "providers", "tools", "resources"})
"""Siblings: none imports another (a tool talks to no provider, the loop to no tool file)."""
WAVE3 = frozenset({"checkpoints", "permissions", "mcp", "subagents"})
"""Rooms for what lands in wave 3: each may use the wires and core, never the session, the SDK,
the modes, the extensions, the fakes nor each other. What one needs from above (a child session,
asking the user) it receives as a Protocol or a callable defined in the room."""
BELOW_WAVE3 = BASE | WIRES

PI_TUI_ROOMS = Rooms(
    may_import={
        "core": frozenset(),
        **dict.fromkeys(WIRES, BASE),
        **dict.fromkeys(WAVE3, BELOW_WAVE3),
        "extensions": BELOW_WAVE3 | WAVE3,
        "session": BELOW_WAVE3 | WAVE3 | {"extensions"},
        "sdk": BELOW_WAVE3 | WAVE3 | {"extensions", "session"},
        "modes": BELOW_WAVE3 | WAVE3 | {"extensions", "session", "sdk"},
        # cli, __main__, demo: entries, above everything
        "testing": BELOW_WAVE3,
    },
    only_importers={
        "textual": ("pi_tui.modes.interactive",),
        "litellm": ("pi_tui.providers.litellm_",),
    },
    stdlib_only=frozenset({"core"}),
    # core's own optional speed-ups, each imported lazily with a stdlib fallback: orjson parses
    # session files, tiktoken gives /context its closer token count; pydantic per ARCHITECTURE.md.
    allowed_third_party=frozenset({"pydantic", "orjson", "tiktoken"}),
)

TESTING_MAY_BE_IMPORTED_BY = ("pi_tui.demo",)
"""The only product-tree module that imports the fakes: ``make demo``'s entry (not in the wheel)."""

MODULE_LINE_LIMIT = 500
