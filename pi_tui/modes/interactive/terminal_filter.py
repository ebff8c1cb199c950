"""The TUI's guard against terminal escapes in outside text (``core.terminal_text``).

Textual writes a segment's text between the escape sequences of its style. Rich and Textual drop
only a few control characters (BEL, BS, CR …) when text is built, so an ESC in a model answer,
a tool's output, a session name or a file name would reach the terminal raw and act (clipboard,
title, clear screen). Rather than trust every widget and screen to sanitize what it shows, this
line filter is applied by Textual to every rendered line of every widget: it removes control
characters from the segments' text, so no sequence can start. Our own styling is in the segments'
*styles*, rendered after the filter, so colours and layout are untouched. Control characters
have no width, so a line keeps its laid-out width.
"""

from __future__ import annotations

from rich.segment import Segment
from textual.color import Color
from textual.filter import LineFilter

from pi_tui.core.terminal_text import drop_controls, has_controls


class ControlCharacterFilter(LineFilter):
    """Drops control characters from every segment's text (see the module docstring)."""

    def apply(self, segments: list[Segment], background: Color) -> list[Segment]:
        if not any(has_controls(segment.text) for segment in segments):
            return segments
        return [
            Segment(drop_controls(text), style, control) if has_controls(text) else Segment(text, style, control)
            for text, style, control in segments
        ]
