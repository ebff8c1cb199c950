"""``/export`` and ``pi-tui --export``: the current branch of a session as one HTML file.

The file is self-contained on purpose: inline CSS, no script, no font or image fetched from
anywhere (its Content-Security-Policy forbids both, in case text ever escaped its escaping), so it can be mailed, attached to an issue or opened offline years later. Every text
from the session is HTML-escaped; Markdown stays as preformatted text (rendering it would need a
Markdown library in this layer, and the raw text is what the model saw anyway). Long tool output
and thinking are folded in ``<details>`` so the page stays readable.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from datetime import datetime
from html import escape
from pathlib import Path
from typing import Any

from pi_tui.core.errors import PiError

FOLD_LINES = 20
"""Tool output longer than this many lines (or ``FOLD_CHARS``) is folded in ``<details>``."""
FOLD_CHARS = 2000

CSP = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"
"""Defence in depth behind the escaping: should a session's text ever reach the page as markup,
the browser still runs no script and fetches nothing (no frames, images, styles or refreshes
from anywhere); only the inline stylesheet applies."""

CSS = """
:root { color-scheme: light dark; --bg: #fdfdfc; --fg: #1f2328; --muted: #6b7280; --line: #d8dce1;
  --user: #eef4ff; --assistant: #ffffff; --tool: #f6f8fa; --summary: #fff8e6; --error: #b42318; }
@media (prefers-color-scheme: dark) { :root { --bg: #15171a; --fg: #e6e6e6; --muted: #9aa3ad;
  --line: #30363d; --user: #1b2533; --assistant: #1b1d21; --tool: #202429; --summary: #2b2616;
  --error: #ff7b72; } }
body { background: var(--bg); color: var(--fg); margin: 0 auto; max-width: 960px; padding: 24px;
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; }
header { border-bottom: 1px solid var(--line); margin-bottom: 20px; padding-bottom: 12px; }
h1 { font-size: 1.4em; margin: 0 0 6px; }
dl.meta { display: grid; grid-template-columns: max-content 1fr; gap: 2px 14px; margin: 0;
  color: var(--muted); font-size: 0.9em; }
dl.meta dt { font-weight: 600; } dl.meta dd { margin: 0; word-break: break-all; }
section.entry { border: 1px solid var(--line); border-radius: 8px; margin: 12px 0; padding: 10px 14px; }
section.user { background: var(--user); } section.assistant { background: var(--assistant); }
section.tool, section.bash { background: var(--tool); }
section.summary { background: var(--summary); border-style: dashed; }
section.meta { border: none; color: var(--muted); font-size: 0.85em; padding: 0 14px; margin: 4px 0; }
.role { font-weight: 700; font-size: 0.8em; letter-spacing: 0.04em; text-transform: uppercase;
  color: var(--muted); margin-bottom: 4px; }
pre { white-space: pre-wrap; word-wrap: break-word; margin: 6px 0;
  font: 13px/1.45 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
pre.text { font: inherit; }
details > summary { cursor: pointer; color: var(--muted); }
.call { border-left: 3px solid var(--line); margin: 8px 0; padding-left: 10px; }
.error, .is-error > .role { color: var(--error); }
.muted { color: var(--muted); font-size: 0.85em; }
"""


def export_session_html(session_manager: Any, path: Path | str | None = None) -> Path:
    """Write the current branch of ``session_manager`` as HTML and return the file written.

    ``path`` defaults to ``<session-stem>.html`` in the current directory (the session id when
    the session has no file yet); a relative path is taken from the current directory.
    """
    header = dict(getattr(session_manager, "header", None) or {})
    branch = list(session_manager.get_branch())
    session_file = getattr(session_manager, "session_file", None)
    stem = Path(session_file).stem if session_file else str(getattr(session_manager, "session_id", "") or "session")
    name = getattr(session_manager, "session_name", None)
    target = Path(path) if path is not None else Path(f"{stem}.html")
    if not target.is_absolute():
        target = Path.cwd() / target
    if target.is_dir():
        target = target / f"{stem}.html"
    document = render_session_html(header, branch, title=name or stem, session_file=session_file)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(document, encoding="utf-8")
    return target


class _LoadedBranch:
    """A session file read without a lock (``load_session_readonly``), shaped like the manager."""

    def __init__(self, path: Path) -> None:
        from pi_tui.core.session.loading import load_session_readonly
        from pi_tui.core.session.tree import index_entries, path_to

        loaded = load_session_readonly(path)
        self.warnings = loaded.warnings
        self.header = loaded.header
        self.session_file = path
        self.session_id = str(loaded.header.get("id", ""))
        by_id = index_entries(loaded.entries)
        leaf = loaded.entries[-1].get("id") if loaded.entries else None
        self._branch = path_to(by_id, leaf) if leaf else []
        names = [e.get("name") for e in self._branch if e.get("type") == "session_info"]
        self.session_name = names[-1] if names and names[-1] else None

    def get_branch(self) -> list[dict[str, Any]]:
        return list(self._branch)


def run_export(args: argparse.Namespace) -> int:
    """``pi-tui --export SESSION.jsonl [OUT.html]``: prints the file written; exit 2 on bad input."""
    values = list(args.export or [])
    if not values or len(values) > 2:
        print("pi-tui: --export takes SESSION.jsonl and optionally OUT.html", file=sys.stderr)
        return 2
    source = Path(values[0]).expanduser()
    try:
        loaded = _LoadedBranch(source)
        out = export_session_html(loaded, Path(values[1]).expanduser() if len(values) > 1 else None)
    except (OSError, PiError, ValueError) as err:
        print(f"pi-tui: cannot export {source}: {err}", file=sys.stderr)
        return 2
    for warning in loaded.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    print(out)
    return 0


# --------------------------------------------------------------------------- rendering


def render_session_html(header: Mapping[str, Any], branch: Sequence[Mapping[str, Any]], *, title: str,
                        session_file: Any = None) -> str:
    """The whole document for ``branch`` (root → leaf entries)."""
    results = {str(m.get("toolCallId")): m for m in _messages(branch) if m.get("role") == "toolResult"}
    shown: set[str] = set()
    body: list[str] = []
    for entry in branch:
        body.append(_entry_html(entry, results, shown))
    meta = [
        ("Session", str(header.get("id", ""))),
        ("File", str(session_file or "(in memory)")),
        ("Directory", str(header.get("cwd", ""))),
        ("Model", _model_of(branch) or "unknown"),
        ("Started", _date(header.get("timestamp"))),
        ("Exported", datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")),
    ]
    rows = "".join(f"<dt>{escape(k)}</dt><dd>{escape(v)}</dd>" for k, v in meta)
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<meta http-equiv=\"Content-Security-Policy\" content=\"{CSP}\">"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        f"<title>{escape(title)} · pi-tui</title><style>{CSS}</style></head><body>\n"
        f"<header><h1>{escape(title)}</h1><dl class=\"meta\">{rows}</dl></header>\n<main>\n"
        + "\n".join(part for part in body if part)
        + "\n</main></body></html>\n"
    )


def _messages(branch: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return [e["message"] for e in branch if e.get("type") == "message" and isinstance(e.get("message"), dict)]


def _model_of(branch: Sequence[Mapping[str, Any]]) -> str | None:
    model = None
    for entry in branch:
        message = entry.get("message") if entry.get("type") == "message" else None
        if entry.get("type") == "model_change":
            model = f"{entry.get('provider')}/{entry.get('modelId')}"
        elif isinstance(message, dict) and message.get("role") == "assistant" and message.get("model"):
            model = f"{message.get('provider')}/{message.get('model')}"
    return model


def _date(value: Any) -> str:
    if not isinstance(value, str):
        return ""
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).strftime("%Y-%m-%d %H:%M UTC")
    except ValueError:
        return value


def _section(kind: str, role: str, inner: str, *, extra_class: str = "") -> str:
    classes = f"entry {kind} {extra_class}".strip()
    return f"<section class=\"{classes}\"><div class=\"role\">{escape(role)}</div>{inner}</section>"


def _pre(text: str, css: str = "") -> str:
    return f"<pre class=\"{css}\">{escape(text)}</pre>" if css else f"<pre>{escape(text)}</pre>"


def _folded(text: str, label: str) -> str:
    lines = text.count("\n") + 1
    if lines <= FOLD_LINES and len(text) <= FOLD_CHARS:
        return _pre(text)
    return f"<details><summary>{escape(label)} ({lines} lines)</summary>{_pre(text)}</details>"


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content or []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            parts.append(str(block.get("text", "")))
        elif block.get("type") == "image":
            parts.append(f"[image: {block.get('mimeType', 'image')}]")
    return "\n".join(parts)


def _entry_html(entry: Mapping[str, Any], results: Mapping[str, Mapping[str, Any]], shown: set[str]) -> str:
    kind = entry.get("type")
    if kind == "message" and isinstance(entry.get("message"), dict):
        return _message_html(entry["message"], results, shown)
    if kind == "compaction":
        tokens = int(entry.get("tokensBefore") or 0)
        inner = (f"<div class=\"muted\">{tokens:,} tokens of earlier history summarized; "
                 f"kept from entry {escape(str(entry.get('firstKeptEntryId', '')))}</div>"
                 + _pre(str(entry.get("summary", "")), "text"))
        return _section("summary compaction", "Compaction summary", inner)
    if kind == "branch_summary":
        inner = (f"<div class=\"muted\">summary of the branch left at entry {escape(str(entry.get('fromId', '')))}"
                 "</div>" + _pre(str(entry.get("summary", "")), "text"))
        return _section("summary branch-summary", "Branch summary", inner)
    if kind == "custom_message":
        return _section("custom", f"[{entry.get('customType', 'custom')}]", _pre(_content_text(entry.get("content")), "text"))
    if kind == "model_change":
        return _section("meta", "model", escape(f"{entry.get('provider')}/{entry.get('modelId')}"))
    if kind == "thinking_level_change":
        return _section("meta", "thinking", escape(str(entry.get("thinkingLevel", ""))))
    if kind == "session_info" and entry.get("name"):
        return _section("meta", "session name", escape(str(entry.get("name"))))
    return ""  # labels, custom entries: bookkeeping, not conversation


def _message_html(message: Mapping[str, Any], results: Mapping[str, Mapping[str, Any]], shown: set[str]) -> str:
    role = message.get("role")
    if role == "user":
        return _section("user", "User", _pre(_content_text(message.get("content")), "text"))
    if role == "assistant":
        return _assistant_html(message, results, shown)
    if role == "toolResult":
        if str(message.get("toolCallId")) in shown:
            return ""  # already shown under its call
        return _section("tool", f"Result · {message.get('toolName', 'tool')}", _result_html(message),
                        extra_class="is-error" if message.get("isError") else "")
    if role == "bashExecution":
        inner = _pre(f"$ {message.get('command', '')}") + _folded(str(message.get("output", "")), "output")
        if message.get("exitCode") not in (None, 0):
            inner += f"<div class=\"error\">exit code {escape(str(message.get('exitCode')))}</div>"
        return _section("bash", "User shell" + (" (not sent)" if message.get("excludeFromContext") else ""), inner)
    if role == "compactionSummary":
        return _section("summary compaction", "Compaction summary", _pre(str(message.get("summary", "")), "text"))
    if role == "branchSummary":
        return _section("summary branch-summary", "Branch summary", _pre(str(message.get("summary", "")), "text"))
    if role == "custom":
        return _section("custom", f"[{message.get('customType', 'custom')}]", _pre(_content_text(message.get("content")), "text"))
    return ""


def _assistant_html(message: Mapping[str, Any], results: Mapping[str, Mapping[str, Any]], shown: set[str]) -> str:
    parts: list[str] = []
    for block in message.get("content") or []:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text" and str(block.get("text", "")).strip():
            parts.append(_pre(str(block["text"]), "text"))
        elif kind == "thinking" and str(block.get("thinking", "")).strip():
            parts.append(f"<details class=\"thinking\"><summary>Thinking</summary>{_pre(str(block['thinking']), 'text')}"
                         "</details>")
        elif kind == "toolCall":
            parts.append(_call_html(block, results, shown))
    stop = message.get("stopReason")
    if stop == "error":
        parts.append(f"<div class=\"error\">Error: {escape(str(message.get('errorMessage', 'unknown error')))}</div>")
    elif stop == "aborted":
        parts.append("<div class=\"error\">Aborted</div>")
    model = f"{message.get('provider', '')}/{message.get('model', '')}".strip("/")
    label = f"Assistant · {model}" if model else "Assistant"
    return _section("assistant", label, "".join(parts) or "<div class=\"muted\">(no content)</div>")


def _call_html(block: Mapping[str, Any], results: Mapping[str, Mapping[str, Any]], shown: set[str]) -> str:
    call_id = str(block.get("id", ""))
    arguments = json.dumps(block.get("arguments") or {}, indent=2, ensure_ascii=False)
    html = f"<div class=\"call\"><div class=\"role\">Tool call · {escape(str(block.get('name', '?')))}</div>"
    html += _pre(arguments)
    result = results.get(call_id)
    if result is not None:
        shown.add(call_id)
        status = "error" if result.get("isError") else "result"
        css = " class=\"error\"" if result.get("isError") else ""
        html += f"<div{css}>{status}:</div>" + _result_html(result)
    html += "</div>"
    return html


def _result_html(result: Mapping[str, Any]) -> str:
    return _folded(_content_text(result.get("content")), "output")
