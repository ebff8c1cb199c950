"""The floor for the first-frame benchmark: a Textual app with one Static and one TextArea
showing the same placeholder as pi-tui's editor. Whatever pi-tui adds on top of this is ours."""

from textual.app import App, ComposeResult
from textual.widgets import Static, TextArea


class BareApp(App[None]):
    BINDINGS = [("ctrl+c", "quit", "Quit")]  # noqa: RUF012

    def compose(self) -> ComposeResult:
        yield Static("bare Textual app")
        yield TextArea(placeholder="Message · / commands")


if __name__ == "__main__":
    BareApp().run()
