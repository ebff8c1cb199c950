"""The live context-events pane (wide terminals) and its one-line ticker (narrow terminals).

Every line is timestamped from an injected clock, so snapshot tests are stable.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import Static

from pi_tui.modes.interactive.event_lines import EventLine

Clock = Callable[[], datetime]
MAX_ENTRIES = 500
SEVERITY_STYLE = {"info": "$text", "success": "$success", "warning": "$warning", "error": "$error"}


STAMP_WIDTH = len("00:00:00 ")


class EventEntry(Vertical):
    """One event: the timestamped title, then the detail indented under it.

    The stamp and the title are two cells of a row, so a title too long for the pane wraps under
    its own text (a hanging indent) instead of back at column 0 under the time.
    """

    DEFAULT_CSS = f"""
    EventEntry {{ height: auto; }}
    EventEntry > Static {{ height: auto; }}
    EventEntry > .event-head {{ height: auto; }}
    EventEntry > .event-head > .event-stamp {{ width: {STAMP_WIDTH}; height: 1; color: $text-muted; }}
    EventEntry > .event-head > .event-title {{ width: 1fr; height: auto; }}
    EventEntry > .event-detail {{ padding-left: 2; color: $text-muted; }}
    """

    def __init__(self, line: EventLine, stamp: str) -> None:
        super().__init__(classes=f"event -{line.severity}")
        self.line = line
        self.stamp = stamp

    def compose(self):  # type: ignore[no-untyped-def]
        with Horizontal(classes="event-head"):
            yield Static(self.stamp, classes="event-stamp")
            yield Static(Content.styled(self.line.title, f"bold {SEVERITY_STYLE[self.line.severity]}"),
                         classes="event-title")
        if self.line.detail:
            yield Static(Content(self.line.detail), classes="event-detail")


class EventsPane(VerticalScroll):
    """A scrolling log of context events, newest at the bottom."""

    DEFAULT_CSS = """
    EventsPane > Static { height: auto; }
    """

    def __init__(self, clock: Clock, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.clock = clock
        self.lines: list[EventLine] = []
        self.border_title = "context events"

    def on_mount(self) -> None:
        if not self.lines:
            self.mount(Static(Content.styled("Compactions, retries, artifacts and pruning show here.",
                                             "$text-muted"), classes="events-empty"))

    def record(self, line: EventLine) -> str:
        stamp = self.clock().strftime("%H:%M:%S")
        self.lines.append(line)
        for empty in self.query(".events-empty"):
            empty.remove()
        self.mount(EventEntry(line, stamp))
        self.call_after_refresh(self.scroll_end, animate=False)
        if len(self.lines) > MAX_ENTRIES:
            self.lines = self.lines[-MAX_ENTRIES:]
            oldest = self.query(".event").first()
            oldest.remove()
        return stamp


class EventsTicker(Static):
    """The last context event on one line (shown instead of the pane on narrow terminals)."""

    DEFAULT_CSS = "EventsTicker { height: 1; }"

    def show_line(self, line: EventLine, stamp: str) -> None:
        text = Content.styled(stamp + " ", "$text-muted").append_text(line.title, SEVERITY_STYLE[line.severity])
        if line.detail:
            text = text.append_text(" · " + " ".join(line.detail.split()), "$text-muted")
        self.update(text, layout=False)
