"""/mcp: every MCP server of the session — state, tools and what their definitions cost in
tokens, last error, the tail of its stderr, its log file — with reconnect and enable/disable.

The list follows the servers live (a short timer re-reads their state): a server that connects,
fails or restarts while the screen is open shows it. Enable/disable holds for this session only;
the config files are not changed (``pi-tui mcp`` and the files do that, docs/mcp.md).
"""

from __future__ import annotations

from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from pi_tui.core.terminal_text import printable

MARKS = {"connected": "●", "starting": "◌", "failed": "✗", "disabled": "○", "untrusted": "⊘", "stopped": "○"}
STYLES = {"connected": "$success", "failed": "$error", "untrusted": "$warning"}
TAIL_LINES = 12
HELP = "↑↓ server · r reconnect · e enable/disable · esc close"


def server_rows(manager: Any) -> list[dict[str, Any]]:
    return list(manager.state())


def details(manager: Any, row: dict[str, Any]) -> Content:
    """What ``/mcp`` shows of one server (``row`` is one of ``manager.state()``)."""
    name = row["name"]
    status = row["status"]
    lines = Content.styled(f"{name} — {status}", f"bold {STYLES.get(status, '')}".strip())
    facts = [f"{row['transport']} · {row['scope']} · {row['source']}"]
    if row.get("server"):
        facts.append(f"server {row['server']}" + (f" · protocol {row['protocolVersion']}"
                                                   if row.get("protocolVersion") else ""))
    connection = manager.connections.get(name)
    if connection is not None:
        facts.append(printable(connection.config.describe()))
        if row.get("restarts"):
            facts.append(f"restarted {row['restarts']}×")
    for fact in facts:
        lines += Content("\n" + fact)
    if row.get("error"):
        lines += Content("\n\n") + Content.styled(f"last error: {printable(str(row['error']))}", "$error")
    if connection is not None:
        costs = manager.tool_costs(name)
        total = sum(tokens for _tool, tokens in costs)
        lines += Content.styled(f"\n\ntools: {len(costs)} · ~{total:,} tokens", "bold")
        for tool, tokens in costs:
            lines += Content(f"\n  {tool}  ~{tokens:,}")
        if connection.prompts:
            prompt_names = ", ".join(f"/{name_}" for name_ in manager.prompt_commands()
                                     if manager.prompt_commands()[name_][0] is connection)
            lines += Content(f"\n\nprompts: {prompt_names or len(connection.prompts)}")
        lines += Content(f"\n\nlog: {connection.log.path}")
        tail = list(connection.log.tail)[-TAIL_LINES:]
        lines += Content.styled("\nstderr (last lines):" if tail else "\nstderr: nothing yet", "$text-muted")
        for text in tail:
            lines += Content.styled("\n  " + text, "$text-muted")
    return lines


class McpScreen(ModalScreen[None]):
    CSS_PATH = "mcp.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "close", "Close"),
        Binding("r", "reconnect", "Reconnect the server"),
        Binding("e", "enable_disable", "Enable or disable the server (this session)"),
    ]

    def __init__(self, manager: Any) -> None:
        super().__init__()
        self.manager = manager
        self._shown: list[tuple[str, str, int]] = []

    def compose(self) -> ComposeResult:
        with Vertical(id="mcp-panel"):
            yield Static(Content.styled("MCP servers", "bold"), id="mcp-title")
            with Horizontal(id="mcp-body"):
                yield OptionList(id="mcp-servers")
                with VerticalScroll(id="mcp-details-scroll"):
                    yield Static("", id="mcp-details")
            yield Static(HELP, id="mcp-help")

    def on_mount(self) -> None:
        self.refresh_rows()
        self.query_one("#mcp-servers", OptionList).focus()
        self.set_interval(0.5, self.refresh_rows)

    @property
    def selected(self) -> dict[str, Any] | None:
        rows = server_rows(self.manager)
        index = self.query_one("#mcp-servers", OptionList).highlighted
        return rows[index] if index is not None and 0 <= index < len(rows) else (rows[0] if rows else None)

    def refresh_rows(self) -> None:
        rows = server_rows(self.manager)
        options = self.query_one("#mcp-servers", OptionList)
        shown = [(r["name"], r["status"], r["tools"]) for r in rows]
        if shown != self._shown:
            self._shown = shown
            keep = options.highlighted
            options.clear_options()
            options.add_options([Option(Content.styled(f"{MARKS.get(r['status'], '?')} {r['name']}",
                                                       STYLES.get(r["status"], ""))) for r in rows])
            options.highlighted = keep if keep is not None and keep < len(rows) else 0
        self.show_details()

    def show_details(self) -> None:
        row = self.selected
        self.query_one("#mcp-details", Static).update(details(self.manager, row) if row else "")

    def on_option_list_option_highlighted(self, _event: OptionList.OptionHighlighted) -> None:
        self.show_details()

    def action_close(self) -> None:
        self.dismiss(None)

    def action_reconnect(self) -> None:
        row = self.selected
        if row is not None and row["name"] in self.manager.connections and row["status"] != "disabled":
            self.run_worker(self.manager.reconnect(row["name"]), exit_on_error=False)

    def action_enable_disable(self) -> None:
        row = self.selected
        if row is not None and row["name"] in self.manager.connections:
            self.run_worker(self.manager.set_enabled(row["name"], row["status"] == "disabled"), exit_on_error=False)
