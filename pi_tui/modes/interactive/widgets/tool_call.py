"""A tool call as a panel: title with the arguments, live output, status, duration and notes.

The panel appears as soon as the call starts streaming (arguments update live), shows the partial
output while the tool runs, and settles on ``finish``. What goes *inside* comes from
``tool_views`` (pure functions), so this widget only holds state and repaints. A result's image
blocks follow the text as a caption and a half-block preview (``image_preview``; off with
``terminal.showImages: false``): small images are decoded at once, big ones in a thread.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from textual.content import Content
from textual.events import Resize
from textual.widgets import Static
from textual.worker import Worker, WorkerState

from pi_tui.modes.interactive.formatting import format_duration
from pi_tui.modes.interactive.tool_views import ToolCallState, content_text, render_tool

STATUS_MARK = {"pending": "…", "running": "⋯ running", "ok": "✓", "error": "✗ error", "aborted": "⊘ aborted"}
REPAINT_INTERVAL = 0.05
"""Live output repaints at most this often (a chatty command must not flood the loop)."""


class ToolCallPanel(Static):
    """One widget per call (body and notes in one ``Content``): long sessions mount hundreds."""

    DEFAULT_CSS = "ToolCallPanel { height: auto; }"

    def __init__(self, call_id: str, name: str, args: dict[str, Any] | None = None, *,
                 expanded: bool = False, status: str = "pending") -> None:
        super().__init__("", classes="tool-call")
        self.call_id = call_id
        self.state = ToolCallState(name=name, args=dict(args or {}), status=status)
        self.expanded = expanded
        self.started_at: float | None = None
        self.duration: float | None = None
        self._repaint_scheduled = False
        self._images: list[dict[str, Any]] = []
        self._decoding = False
        self._preview_width = 0
        self.repaint()

    # ------------------------------------------------------------------ state changes

    def _replace(self, **changes: Any) -> None:
        values = {
            "name": self.state.name, "args": self.state.args, "output": self.state.output,
            "details": self.state.details, "is_error": self.state.is_error, "status": self.state.status,
        }
        values.update(changes)
        self.state = ToolCallState(**values)

    def set_args(self, args: dict[str, Any]) -> None:
        self._replace(args=dict(args))
        self.schedule_repaint()

    def start(self, args: dict[str, Any] | None = None) -> None:
        self.started_at = time.monotonic()
        self._replace(status="running", args=dict(args) if args else self.state.args)
        self.schedule_repaint()

    def update_partial(self, partial: Any) -> None:
        details = partial.get("details") if isinstance(partial, dict) else None
        self._replace(output=content_text(partial), details=details)
        self.schedule_repaint()

    def finish(self, result: Any, *, is_error: bool, aborted: bool = False) -> None:
        if self.started_at is not None:
            self.duration = time.monotonic() - self.started_at
        details = result.get("details") if isinstance(result, dict) else None
        status = "aborted" if aborted else ("error" if is_error else "ok")
        from pi_tui.modes.interactive.image_preview import image_blocks

        self._images = image_blocks(result)
        self._replace(output=content_text(result, images=not self._images), details=details,
                      is_error=is_error, status=status)
        self.repaint()

    def mark_aborted(self) -> None:
        if self.state.status in ("pending", "running"):
            self._replace(status="aborted")
            self.repaint()

    def set_expanded(self, expanded: bool) -> None:
        self.expanded = expanded
        self.repaint()

    def on_click(self) -> None:
        """A task panel opens the child's session read-only (``screens/child_session.py``)."""
        details = self.state.details
        if self.state.name == "task" and isinstance(details, dict) and isinstance(details.get("childSession"), str):
            from pi_tui.modes.interactive.messages import ChildSessionRequested

            label = f"{details.get('agent') or 'general'}: {details.get('description') or ''}".rstrip(": ")
            self.post_message(ChildSessionRequested(Path(details["childSession"]), label))

    # ------------------------------------------------------------------ painting

    def schedule_repaint(self) -> None:
        if not self.is_mounted:
            return
        if not self._repaint_scheduled:
            self._repaint_scheduled = True
            self.set_timer(REPAINT_INTERVAL, self.repaint)

    def repaint(self) -> None:
        self._repaint_scheduled = False
        view = render_tool(self.state, expanded=self.expanded)
        title = view.title if len(view.title.plain) < 300 else view.title[:299].append_text("…")
        self.border_title = title
        mark = STATUS_MARK.get(self.state.status, self.state.status)
        if self.duration is not None:
            mark += f" {format_duration(self.duration)}"
        self.border_subtitle = Content(mark)
        for status in STATUS_MARK:
            self.set_class(self.state.status == status, f"-{status}")
        content = view.body if view.body is not None and view.body.plain else Content("")
        if self._images:
            images = self._image_content()
            content = content + Content("\n") + images if content.plain else images
        if view.notes:
            separator = "\n" if content.plain else ""
            content = content.append_text(separator + "\n".join(view.notes), "$text-muted")
        self.update(content)
        self.set_class(not content.plain, "-empty")

    # ------------------------------------------------------------------ images

    @property
    def has_images(self) -> bool:
        return bool(self._images)

    def _setting(self, path: str, default: Any) -> Any:
        try:
            getter = getattr(self.app, "setting", None)
        except Exception:  # not in an app (a unit test rendering the panel alone)
            return default
        return getter(path, default) if callable(getter) else default

    def _available_width(self) -> int:
        width = self.content_size.width
        if width > 0:
            return width
        try:
            return max(1, self.app.size.width - 6)  # not laid out yet: about the panel's width
        except Exception:
            return 80

    def _image_content(self) -> Content:
        from pi_tui.modes.interactive import image_preview as ip

        show = self._setting("terminal.showImages", True) is not False
        cap = self._setting("terminal.imageWidthCells", ip.DEFAULT_COLS)
        cap = cap if isinstance(cap, int) and not isinstance(cap, bool) and cap > 0 else ip.DEFAULT_COLS
        self._preview_width = self._available_width()
        cols = max(1, min(cap, self._preview_width))
        rows = ip.EXPANDED_ROWS if self.expanded else ip.COLLAPSED_ROWS
        parts: list[Content] = []
        waiting = False
        for block in self._images:
            data, mime = block["data"], str(block.get("mimeType") or "")
            decoded = ip.load(data, mime, allow_slow=False) if show else ip.probe(data, mime)
            if decoded is None and show:
                waiting = True
                parts.append(Content.styled(ip.Decoded(mime, ip.data_size(data), problem="decoding…").caption(),
                                            "$text-muted"))
                continue
            assert decoded is not None
            parts.append(Content.styled(decoded.caption(), "$text-muted"))
            if show:
                preview = decoded.render(cols, rows)
                if preview.plain:
                    parts.append(preview)
        if waiting:
            self._decode_in_thread()
        return Content("\n").join(parts)

    def _decode_in_thread(self) -> None:
        if self._decoding or not self.is_mounted:
            return  # on_mount repaints (and so starts it)
        from pi_tui.modes.interactive import image_preview as ip

        self._decoding = True
        blocks = [(block["data"], str(block.get("mimeType") or "")) for block in self._images]

        def decode_all() -> None:
            for data, mime in blocks:
                ip.load(data, mime, allow_slow=True)

        self.run_worker(decode_all, thread=True, group="image-preview", exit_on_error=False)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group == "image-preview" and event.state in (
                WorkerState.SUCCESS, WorkerState.ERROR, WorkerState.CANCELLED):
            self._decoding = False
            if event.state == WorkerState.SUCCESS:
                self.repaint()

    def on_mount(self) -> None:
        if self._images:
            self.repaint()

    def on_resize(self, event: Resize) -> None:
        if self._images and self.content_size.width != self._preview_width:
            self.repaint()
