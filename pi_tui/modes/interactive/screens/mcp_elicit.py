"""An MCP server asks the user for information (``elicitation/create``): one field per property
of its schema, checked and typed by ``pi_tui/mcp/elicitation.py``. Enter goes to the next field
and sends from the last one (ctrl+s sends from any); Esc declines. The server's name heads the
dialog, so it is clear who asks."""

from __future__ import annotations

from typing import Any, ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from pi_tui.core.terminal_text import printable
from pi_tui.mcp.elicitation import answers, form_fields

HELP = "enter next field / send · ctrl+s send · esc decline"
HELP_NO_FIELDS = "enter accept (done) · esc decline"


class ElicitScreen(ModalScreen[dict[str, Any] | None]):
    CSS_PATH = "mcp_elicit.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "decline", "Decline"),
        Binding("ctrl+s", "send", "Send the answers"),
        Binding("enter", "send", "Accept (a request without fields: a link to open)", show=False),
    ]

    def __init__(self, server: str, message: str, schema: dict[str, Any]) -> None:
        super().__init__()
        self.server = server
        self.message = message
        self.fields = form_fields(schema)

    def compose(self) -> ComposeResult:
        with Vertical(classes="elicit-dialog"):
            yield Static(Content.styled(f"MCP server {printable(self.server)} asks", "bold"), classes="elicit-title")
            yield Static(Content(printable(self.message)), classes="elicit-message")
            with VerticalScroll(id="elicit-fields"):
                for field_ in self.fields:
                    label = field_.label + (" *" if field_.required else "")
                    about = f" — {field_.description}" if field_.description else ""
                    yield Static(Content.styled(label, "bold") + Content.styled(about, "$text-muted"),
                                 classes="elicit-label")
                    yield Input(field_.initial_text(), placeholder=field_.hint(), id=f"elicit-{id(field_)}",
                                classes="elicit-input")
                    yield Static("", id=f"elicit-problem-{id(field_)}", classes="elicit-problem")
            yield Static(HELP if self.fields else HELP_NO_FIELDS, classes="elicit-help")

    def on_mount(self) -> None:
        inputs = list(self.query(Input))
        if inputs:
            inputs[0].focus()

    def typed(self) -> dict[str, str]:
        return {f.name: self.query_one(f"#elicit-{id(f)}", Input).value for f in self.fields}

    @on(Input.Submitted)
    def _next(self, event: Input.Submitted) -> None:
        event.stop()
        inputs = list(self.query(Input))
        index = inputs.index(event.input) if event.input in inputs else len(inputs) - 1
        if index + 1 < len(inputs):
            inputs[index + 1].focus()
        else:
            self.action_send()

    def action_send(self) -> None:
        content, problems = answers(self.fields, self.typed())
        for field_ in self.fields:
            self.query_one(f"#elicit-problem-{id(field_)}", Static).update(
                Content.styled(problems[field_.name], "$error") if field_.name in problems else "")
        if problems:
            first = next(f for f in self.fields if f.name in problems)
            self.query_one(f"#elicit-{id(first)}", Input).focus()
            return
        self.dismiss(content)

    def action_decline(self) -> None:
        self.dismiss(None)
