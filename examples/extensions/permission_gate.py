"""Ask before dangerous shell commands (pi's permission-gate example, with ``ctx.ui.confirm``).

Before the ``bash`` tool runs a command that matches one of ``DANGEROUS`` (``rm -rf``, ``sudo``,
``git push --force``), the person is asked. If they refuse — or cancel, or let the dialog time
out — the call is blocked and the model receives the reason as the tool's error. Where nobody can
be asked (print and JSON mode, ``ctx.has_ui`` false) such commands are blocked, and the reason
says why.

Load it with ``pi-tui -e examples/extensions/permission_gate.py`` or copy it to
``~/.pi/agent/extensions/``.
"""

from __future__ import annotations

import re
from typing import Any

DANGEROUS = {
    # rm with a recursive and a force flag, in any spelling: -rf, -fr, -rfv, -r -f, --recursive --force
    "rm -rf": re.compile(r"\brm\s+(?=(?:[^;&|\n]*\s)?(?:-[a-zA-Z]*[rR]|--recursive\b))"
                         r"(?=(?:[^;&|\n]*\s)?(?:-[a-zA-Z]*f|--force\b))"),
    "sudo": re.compile(r"(^|[\s;&|(])sudo\b"),
    "git push --force": re.compile(r"\bgit\s+push\b.*\s(--force|-f|--force-with-lease)\b"),
}
"""What makes a command dangerous, by the name the question shows."""
ANSWER_WITHIN_S = 120.0
"""An unanswered question counts as a refusal after this long."""


def dangerous_parts(command: str) -> list[str]:
    return [name for name, pattern in DANGEROUS.items() if pattern.search(command)]


def register(pi: Any) -> None:
    @pi.on("tool_call")
    async def gate(event: dict[str, Any], ctx: Any) -> dict[str, Any] | None:
        if event["toolName"] != "bash":
            return None
        command = str(event["input"].get("command", ""))
        found = dangerous_parts(command)
        if not found:
            return None
        what = ", ".join(found)
        if not ctx.has_ui:
            return {"block": True, "reason": f"Dangerous command ({what}) blocked: no UI to ask for permission"}
        allowed = await ctx.ui.confirm(
            f"Allow a dangerous command ({what})?", command, timeout_s=ANSWER_WITHIN_S
        )
        if allowed:
            return None
        ctx.ui.notify(f"Blocked: {command}", "warning")
        return {"block": True, "reason": f"Blocked by user: the command uses {what}"}
