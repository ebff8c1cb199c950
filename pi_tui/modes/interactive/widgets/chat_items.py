"""The blocks of the conversation other than tool calls and assistant text.

User messages, thinking, compaction and branch summaries, ``!`` command output, errors that say
what to do next, and one-line notices. Each block renders from plain data; the global toggles
(ctrl+o expand, ctrl+t thinking) reach them as a method call from the conversation.
"""

from __future__ import annotations

import re

from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Static

from pi_tui.modes.interactive.formatting import format_thousands
from pi_tui.modes.interactive.tool_views.common import tail_preview
from pi_tui.modes.interactive.widgets.markdown_stream import new_markdown

SKILL_BLOCK = re.compile(r'^<skill name="([^"]*)" location="([^"]*)">\n(.*?)\n</skill>(?:\n\n(.*))?$', re.S)

ERROR_ADVICE = {
    "auth": "Check the API key: set the provider's variable (e.g. OPENAI_API_KEY), pass --api-key, "
    "or add apiKey to the provider in <agentDir>/models.json.",
    "rate_limit": "The provider is rate limiting. Wait a moment, then press ↑ and Enter to resend.",
    "context_overflow": "The conversation no longer fits the model's context. Run /compact, "
    "or /tree to continue from an earlier point, then resend.",
    "transient": "A network or server problem. Press ↑ and Enter to resend; retries are automatic "
    "when enabled in /settings.",
    "bad_request": "The provider rejected the request. /model can switch to another model; "
    "/context shows what was sent.",
}


class UserMessageView(Static):
    """What the user sent. A ``/skill:`` expansion shows as the skill's name plus the user's text."""

    DEFAULT_CSS = "UserMessageView { height: auto; }"

    def __init__(self, text: str, *, images: int = 0) -> None:
        skill = SKILL_BLOCK.match(text)
        if skill:
            name, _location, _body, rest = skill.groups()
            content = Content.styled(f"[skill: {name}]", "$accent")
            if rest:
                content = content.append_text("\n" + rest)
        else:
            content = Content(text)
        if images:
            content = content.append_text(f"\n[{images} image{'s' if images > 1 else ''}]", "$text-muted")
        super().__init__(content, classes="user-message")
        self.text = text


class ThinkingBlock(Static):
    """Reasoning text: italic when shown, a one-line "Thinking…" stub when hidden (ctrl+t)."""

    DEFAULT_CSS = "ThinkingBlock { height: auto; }"

    def __init__(self, text: str = "", *, shown: bool = False) -> None:
        super().__init__("", classes="thinking")
        self.thinking = text
        self.shown = shown
        self._dirty = False
        self._render_now()

    def _render_now(self) -> None:
        self._dirty = False
        if self.shown:
            self.update(Content.styled(self.thinking.strip() or "Thinking…", "italic $text-muted"))
        else:
            size = len(self.thinking)
            suffix = f" ({size:,} chars, ctrl+t to show)" if size else " (ctrl+t to show)"
            self.update(Content.styled("▸ Thinking…" + suffix, "italic $text-muted"))

    def append(self, delta: str) -> None:
        self.thinking += delta
        if not self._dirty:
            # Coalesce bursts of deltas into one repaint per frame.
            self._dirty = True
            self.call_after_refresh(self._render_now)

    def set_shown(self, shown: bool) -> None:
        self.shown = shown
        self._render_now()


class SummaryBlock(Vertical):
    """A compaction or branch summary: collapsed to one line, expanded to the Markdown summary."""

    DEFAULT_CSS = """
    SummaryBlock { height: auto; }
    SummaryBlock > Markdown { display: none; }
    SummaryBlock.-expanded > Markdown { display: block; }
    """

    def __init__(self, kind: str, summary: str, *, tokens_before: int | None = None,
                 tokens_after: int | None = None, reason: str = "", expanded: bool = False) -> None:
        super().__init__(classes=f"summary-block {kind}")
        self.kind = kind
        self.summary = summary
        self.tokens_before = tokens_before
        self.tokens_after = tokens_after
        self.reason = reason
        self.set_class(expanded, "-expanded")
        self.border_title = "compaction" if kind == "compaction" else "branch summary"

    def headline(self) -> str:
        if self.kind == "compaction":
            parts = [self.reason] if self.reason else []
            if self.tokens_before is not None and self.tokens_after is not None:
                parts.append(f"{format_thousands(self.tokens_before)} → {format_thousands(self.tokens_after)} tokens")
            elif self.tokens_before is not None:
                parts.append(f"Compacted from {format_thousands(self.tokens_before)} tokens")
            text = " · ".join(parts) or "Compacted"
        else:
            text = "Branch summary of the path left behind"
        hint = "ctrl+o to collapse" if self.has_class("-expanded") else "ctrl+o to expand"
        return f"{text} ({hint})"

    def compose(self):  # type: ignore[no-untyped-def]
        yield Static(self.headline(), classes="summary-headline")
        yield new_markdown(self.summary)

    def set_expanded(self, expanded: bool) -> None:
        self.set_class(expanded, "-expanded")
        if self.is_mounted:
            self.query_one(".summary-headline", Static).update(self.headline())

    def on_click(self) -> None:
        self.set_expanded(not self.has_class("-expanded"))


class BashOutputBlock(Static):
    """``!cmd`` / ``!!cmd`` output (pi shows the last 20 lines collapsed)."""

    DEFAULT_CSS = "BashOutputBlock { height: auto; }"
    COLLAPSED_LINES = 20

    def __init__(self, command: str, output: str = "", *, exit_code: int | None = None,
                 excluded: bool = False, running: bool = False, expanded: bool = False) -> None:
        super().__init__("", classes="bash-block")
        self.command = command
        self.output = output
        self.exit_code = exit_code
        self.excluded = excluded
        self.running = running
        self.expanded = expanded
        self.border_title = Content(("!! " if excluded else "! ") + command)
        self._render_now()

    def _render_now(self) -> None:
        body = tail_preview(self.output, self.COLLAPSED_LINES, expanded=self.expanded) if self.output else Content("")
        if self.running:
            status = "running…"
        elif self.exit_code not in (0, None):
            status = f"exit {self.exit_code}"
        else:
            status = "done"
        if self.excluded:
            status += " · not sent to the model"
        self.border_subtitle = Content(status)
        self.set_class(self.exit_code not in (0, None), "-error")
        self.update(body if body.plain else Content.styled("(no output)", "$text-muted"))

    def finish(self, output: str, exit_code: int | None) -> None:
        self.output, self.exit_code, self.running = output, exit_code, False
        self._render_now()

    def set_expanded(self, expanded: bool) -> None:
        self.expanded = expanded
        self._render_now()


class ErrorBlock(Static):
    """A failure, said plainly, with what to do about it."""

    DEFAULT_CSS = "ErrorBlock { height: auto; }"

    def __init__(self, message: str, *, kind: str | None = None, advice: str | None = None) -> None:
        text = Content.styled(message, "bold $error")
        hint = advice if advice is not None else ERROR_ADVICE.get(kind or "", "")
        if hint:
            text = text.append_text("\n" + hint, "$text-muted")
        super().__init__(text, classes="error-block")
        self.message = message


class Notice(Static):
    """A dim one-liner from the app itself ("Branched to new session", "/session" output …)."""

    DEFAULT_CSS = "Notice { height: auto; }"

    def __init__(self, text: str, *, severity: str = "info") -> None:
        style = {"warning": "$warning", "error": "$error", "success": "$success"}.get(severity, "$text-muted")
        super().__init__(Content.styled(text, style), classes=f"notice -{severity}")
        self.text = text
