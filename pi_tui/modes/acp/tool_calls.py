"""pi-tui tool calls as ACP tool calls: kind, title, locations and content (live and replayed).

* kind: ``read`` → read; ``edit``/``write`` → edit; ``bash`` → execute; ``grep``/``find``/``ls``
  → search; anything else (extension tools) → other.
* locations: the absolute path a file tool works on (with the first line a ``read`` shows or an
  ``edit`` changed), so the editor can follow along.
* content: ``edit`` and ``write`` as diffs (``{type: "diff", path, oldText, newText}``): the
  whole file before and after when we could read it before the change (live), else each
  ``edits[]`` entry's old and new text (a replayed session: the file has moved on since); other
  tools as the text of their result. Text is sent as it is: the protocol stays lossless, and
  ``encode_frame`` escapes control characters so nothing drives a terminal.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pi_tui.tools.paths import resolve_to_cwd

KINDS = {"read": "read", "edit": "edit", "write": "edit", "bash": "execute",
         "grep": "search", "find": "search", "ls": "search"}
READ_ONLY_TOOLS = ("read", "grep", "find", "ls")
"""The tools known to change nothing. Every other tool asks permission first (``permissions.py``):
``edit``, ``write``, ``bash``, and any extension's tool, whose effects pi-tui cannot know."""


def asks_permission(name: str) -> bool:
    return name not in READ_ONLY_TOOLS
TITLE_LIMIT = 200


def tool_kind(name: str) -> str:
    return KINDS.get(name, "other")


def _path(args: dict[str, Any], cwd: Path) -> str | None:
    raw = args.get("path")
    if not isinstance(raw, str) or not raw:
        return None
    return str(resolve_to_cwd(raw, cwd))


def tool_title(name: str, args: dict[str, Any]) -> str:
    """What the call does, in one line: ``read src/app.py``, ``bash: `make test` ``."""
    if name == "bash":
        command = " ".join(str(args.get("command", "")).split())
        title = f"`{command}`" if command else "bash"
    elif name in ("read", "edit", "write", "ls"):
        title = f"{name} {args.get('path', '')}".strip()
    elif name in ("grep", "find"):
        title = f"{name} {args.get('pattern', '')}".strip()
        if isinstance(args.get("path"), str):
            title += f" in {args['path']}"
    elif name == "task":
        title = f"task ({args.get('subagent_type') or 'general'}): {args.get('description', '')}".strip()
    else:
        title = name
    return title if len(title) <= TITLE_LIMIT else title[: TITLE_LIMIT - 1] + "…"


def tool_locations(name: str, args: dict[str, Any], cwd: Path, *, line: int | None = None) -> list[dict[str, Any]]:
    path = _path(args, cwd)
    if path is None:
        return []
    location: dict[str, Any] = {"path": path}
    if line is None and name == "read" and isinstance(args.get("offset"), (int, float)):
        line = int(args["offset"])
    if line is not None and line >= 1:
        location["line"] = line
    return [location]


def text_content(text: str) -> dict[str, Any]:
    return {"type": "content", "content": {"type": "text", "text": text}}


def result_text(result: Any) -> str:
    """The text blocks of a tool result (``{content: [...]}``) joined; images are left out."""
    content = result.get("content") if isinstance(result, dict) else None
    if not isinstance(content, list):
        return ""
    return "\n".join(str(block.get("text", "")) for block in content
                     if isinstance(block, dict) and block.get("type") == "text")


def fragment_diffs(name: str, args: dict[str, Any], cwd: Path) -> list[dict[str, Any]]:
    """Diff content from the arguments alone: each ``edits[]`` entry, or a ``write``'s content."""
    path = _path(args, cwd)
    if path is None:
        return []
    if name == "write" and isinstance(args.get("content"), str):
        return [{"type": "diff", "path": path, "oldText": None, "newText": args["content"]}]
    if name != "edit":
        return []
    edits = args.get("edits")
    if not isinstance(edits, list):
        old, new = args.get("oldText"), args.get("newText")  # pi's legacy single-edit shape
        edits = [{"oldText": old, "newText": new}] if isinstance(old, str) and isinstance(new, str) else []
    return [{"type": "diff", "path": path, "oldText": e["oldText"], "newText": e["newText"]}
            for e in edits if isinstance(e, dict) and isinstance(e.get("oldText"), str)
            and isinstance(e.get("newText"), str)]


def tool_call_start(call_id: str, name: str, args: dict[str, Any], cwd: Path, *, status: str,
                    content: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """A ``tool_call`` update."""
    update: dict[str, Any] = {
        "sessionUpdate": "tool_call", "toolCallId": call_id, "title": tool_title(name, args),
        "kind": tool_kind(name), "status": status, "locations": tool_locations(name, args, cwd),
        "rawInput": args,
    }
    if content:
        update["content"] = content
    return update


def first_changed_line(result: Any) -> int | None:
    details = result.get("details") if isinstance(result, dict) else None
    line = details.get("firstChangedLine") if isinstance(details, dict) else None
    return line if isinstance(line, int) else None


def finished_content(name: str, args: dict[str, Any], result: Any, is_error: bool, cwd: Path, *,
                     diffs: list[dict[str, Any]] | None) -> list[dict[str, Any]] | None:
    """The content of the final ``tool_call_update``; None keeps what the client has (the diff
    of a successful edit, a client terminal)."""
    text = result_text(result)
    if is_error:
        return [text_content(text or "Tool failed")]
    if name in ("edit", "write"):
        return None if diffs else fragment_diffs(name, args, cwd) or None
    return [text_content(text)] if text else []


def tool_call_end(call_id: str, name: str, args: dict[str, Any], result: Any, is_error: bool, cwd: Path, *,
                  diffs: list[dict[str, Any]] | None = None, keep_content: bool = False) -> dict[str, Any]:
    update: dict[str, Any] = {"sessionUpdate": "tool_call_update", "toolCallId": call_id,
                              "status": "failed" if is_error else "completed"}
    content = None if keep_content else finished_content(name, args, result, is_error, cwd, diffs=diffs)
    if content is not None:
        update["content"] = content
    line = first_changed_line(result)
    if line is not None:
        update["locations"] = tool_locations(name, args, cwd, line=line)
    update["rawOutput"] = result
    return update
