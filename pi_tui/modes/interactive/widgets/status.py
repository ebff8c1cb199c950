"""The lines between the conversation and the editor: the working status and the message queue.

pi's loaders ("Working...", "Compacting context... (esc to cancel)", "Retrying (a/m) in Ns...")
and its queue display (one dim line per queued message, then the alt+up hint).
"""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


class WorkingStatus(Static):
    DEFAULT_CSS = "WorkingStatus { height: 1; }"

    def __init__(self, **kwargs: object) -> None:
        super().__init__("", **kwargs)  # type: ignore[arg-type]
        self.message: str | None = None
        self._frame = 0
        self._template = ""
        self._remaining: float | None = None

    def on_mount(self) -> None:
        self.display = False
        self.set_interval(0.1, self._tick)

    def show(self, message: str) -> None:
        self.message = message
        self._template = ""
        self._remaining = None
        self.display = True
        self._paint()

    def countdown(self, template: str, seconds: float) -> None:
        """A message with ``{s}`` replaced by the remaining whole seconds, ticking down."""
        self._template = template
        self._remaining = seconds
        self.message = template.format(s=round(seconds))
        self.display = True
        self._paint()

    def hide(self) -> None:
        self.message = None
        self._template = ""
        self._remaining = None
        self.display = False

    def _tick(self) -> None:
        if self.message is None:
            return
        self._frame = (self._frame + 1) % len(SPINNER)
        if self._template and self._remaining is not None:
            self._remaining = max(0.0, self._remaining - 0.1)
            self.message = self._template.format(s=round(self._remaining))
        self._paint()

    def _paint(self) -> None:
        if self.message is None:
            return
        # One fixed-height line: repaint without a layout pass (it ticks 10 times a second).
        self.update(Content.styled(SPINNER[self._frame] + " ", "$accent").append_text(self.message, "$text-muted"),
                    layout=False)


class QueueView(Static):
    DEFAULT_CSS = "QueueView { height: auto; }"

    def on_mount(self) -> None:
        self.display = False

    def set_queue(self, steering: list[str], follow_up: list[str], *, held: list[str] | None = None) -> None:
        lines: list[tuple[str, str]] = []
        lines += [("Steering: ", t) for t in steering]
        lines += [("Follow-up: ", t) for t in follow_up]
        lines += [("After compaction: ", t) for t in (held or [])]
        if not lines:
            self.display = False
            return
        text = Content("")
        for i, (label, body) in enumerate(lines):
            if i:
                text = text.append_text("\n")
            flat = " ".join(body.split())
            text = text.append_text(label + (flat if len(flat) < 200 else flat[:199] + "…"), "$text-muted")
        text = text.append_text("\n↳ alt+up to edit all queued messages", "$text-muted italic")
        self.update(text)
        self.display = True
