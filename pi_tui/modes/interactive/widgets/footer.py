"""The two-line footer: where you are and what the context costs (pi-behaviour.md §8.3).

Line 1: cwd (``~``), git branch, session name, permission mode, MCP servers up/configured (and
how many failed) … model and thinking level on the right.
Line 2: cumulative ↑input ↓output Rcache-read Wcache-write $cost … context bar, tokens/window,
percent ("?" right after a compaction), coloured warning above 70% and error above 90%.
Line 3, only when extensions set statuses (``ctx.ui.set_status``): those texts, sorted by key.
"""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static

from pi_tui.modes.interactive.formatting import context_bar, format_cost, format_tokens


class FooterData:
    """What the footer shows. (A plain class: a dataclass costs ~1.5 ms of the first frame.)"""

    __slots__ = ("auto_compaction", "branch", "context_percent", "context_tokens", "context_window", "cwd",
                 "mcp", "model", "permissions", "session_name", "statuses", "thinking", "totals")

    def __init__(self, cwd: str = "", branch: str | None = None) -> None:
        self.cwd = cwd
        self.branch = branch
        self.session_name: str | None = None
        self.model = "no model"
        self.thinking: str | None = None
        """None for models without reasoning."""
        self.permissions: str | None = None
        """The permission mode (``auto``, ``plan · no sandbox`` …); None as in pi (no gate, --yolo)."""
        self.context_tokens: int | None = None
        self.context_window: int | None = None
        self.context_percent: float | None = None
        self.auto_compaction = True
        self.totals: dict[str, float] = {}
        self.mcp: tuple[int, int, int] | None = None
        """MCP servers (up, failed, configured); None when none is configured."""
        self.statuses: dict[str, str] = {}
        """Extension status texts (``ctx.ui.set_status``) by key; a third line when there are any."""


def _row(left: Content, right: Content, width: int) -> Content:
    gap = width - left.cell_length - right.cell_length
    if gap < 1:
        left = left.truncate(max(0, width - right.cell_length - 1), ellipsis=True)
        gap = max(1, width - left.cell_length - right.cell_length)
    return left + Content(" " * gap) + right


def footer_lines(data: FooterData, width: int) -> Content:
    where = Content(data.cwd)
    if data.branch:
        where = where.append_text(f" ({data.branch})", "$text-muted")
    if data.session_name:
        where = where.append_text(" • ").append_text(data.session_name, "bold")
    if data.permissions:
        where = where.append_text(" • ").append_text(data.permissions, "$warning" if "no sandbox" in data.permissions
                                                     or data.permissions.startswith("plan") else "$text-muted")
    if data.mcp is not None:
        up, failed, total = data.mcp
        where = where.append_text(" • ").append_text(f"MCP {up}/{total}", "$success" if up == total else "$text-muted")
        if failed:
            where = where.append_text(f" ({failed} failed)", "$error")
    model_style = {"no model": "$error", "starting…": "$text-muted"}.get(data.model, "$accent")
    model = Content.styled(data.model, model_style)
    if data.thinking is not None:
        level = "thinking off" if data.thinking == "off" else data.thinking
        model = model.append_text(" • " + level, "$text-muted")
    totals = data.totals
    figures = []
    for key, mark in (("input", "↑"), ("output", "↓"), ("cacheRead", "R"), ("cacheWrite", "W")):
        if totals.get(key):
            figures.append(f"{mark}{format_tokens(totals[key])}")
    if totals.get("cost"):
        figures.append(format_cost(totals["cost"]))
    if totals.get("subagentTokens"):  # the task tool's children, apart from the session's own
        figures.append(f"· subagents {format_tokens(totals['subagentTokens'])}"
                       + (f" {format_cost(totals['subagentCost'])}" if totals.get("subagentCost") else ""))
    usage = Content.styled(" ".join(figures), "$text-muted")
    window = format_tokens(data.context_window) if data.context_window else "?"
    percent = data.context_percent
    if percent is None:
        ctx_text = f"ctx {context_bar(None)} unknown/{window}"
        ctx_style = "$text-muted"
    else:
        used = format_tokens(data.context_tokens or 0)
        ctx_text = f"ctx {context_bar(percent)} {used}/{window} {percent:.1f}%"
        ctx_style = "$error" if percent > 90 else "$warning" if percent > 70 else "$text"
    ctx = Content.styled(ctx_text, ctx_style)
    if data.auto_compaction:
        ctx = ctx.append_text(" (auto)", "$text-muted")
    lines = _row(where, model, width).append_text("\n") + _row(usage, ctx, width)
    if data.statuses:
        # As pi: sorted by key, one line, cut at the width.
        statuses = Content(" ".join(data.statuses[key] for key in sorted(data.statuses)))
        lines = lines.append_text("\n") + statuses.truncate(width, ellipsis=True)
    return lines


class StatusFooter(Static):
    DEFAULT_CSS = "StatusFooter { height: 2; }"

    def __init__(self, **kwargs: object) -> None:
        super().__init__("", **kwargs)  # type: ignore[arg-type]
        self.data = FooterData()

    def set_data(self, data: FooterData) -> None:
        self.data = data
        self.styles.height = 3 if data.statuses else 2
        self.refresh_lines()

    def refresh_lines(self) -> None:
        width = self.size.width or 120
        self.update(footer_lines(self.data, max(20, width - 2)))

    def on_resize(self) -> None:
        self.refresh_lines()

