"""The ``read`` tool (pi-behaviour.md §4.2, §13.4).

Text comes back head-truncated (2,000 lines / 50 KB) with pi's continuation notices; images
(detected by magic bytes) come back as image blocks, fitted to the inline limits. A binary file
that is not a supported image is refused with a clear message instead of mojibake (pi would
return garbage). Large files are never loaded whole: see ``read_window``. FIFOs, devices and sockets
are refused before anything is read (``core/regular_files``): a FIFO with no writer would block
the tool forever, ``/dev/zero`` never ends. A regular file whose read never answers (a hung network
mount) is given up after ``STALLED_AFTER_SECONDS`` without progress (``run_in_thread_bounded``).
"""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import BinaryIO, Literal

from pi_tui.core.cancellable_thread import ThreadStalled, run_in_thread_bounded
from pi_tui.core.errors import ToolError
from pi_tui.core.messages import JsonValue, UserContent
from pi_tui.core.regular_files import NotRegularFileError, PathChangedError, open_regular
from pi_tui.core.tool import ToolContext, ToolResult
from pi_tui.tools.common import names_failures, node_style_error, optional_int, require_str
from pi_tui.tools.images import detect_image_mime, fit_image
from pi_tui.tools.paths import resolve_read_path
from pi_tui.tools.read_window import OffsetBeyondEnd, read_line_window
from pi_tui.tools.truncate import DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, format_size

_SNIFF_BYTES = 8192
IMAGE_FILE_MAX_BYTES = 64 * 1024 * 1024
"""An image is read whole to be resized; a camera's photo is ~10-30 MB."""
NO_VISION_NOTE = "[Current model does not support images. The image will be omitted from this request.]"
IMAGE_OMITTED_NOTE = "[Image omitted: could not be resized below the inline image size limit.]"


def _client_may_read(path: Path) -> bool:
    """Whether a text read goes to the client's file access: a missing file (the client may hold
    an unsaved buffer) or a regular text file. Folders, FIFOs, images and binary files stay on
    the local path, which answers them as usual."""
    if not os.path.lexists(path):
        return True
    try:
        with open_regular(path) as fh:
            head = fh.read(_SNIFF_BYTES)
    except (NotRegularFileError, OSError):
        return False
    return detect_image_mime(head) is None and not looks_binary(head)


def looks_binary(head: bytes) -> bool:
    """A NUL byte in the first 8 KB: what git and grep use to call a file binary."""
    return b"\x00" in head


READ_PARAMETERS: dict[str, JsonValue] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "File to read; relative paths start at the working directory"},
        "offset": {"type": "number", "description": "First line to return, counting from 1"},
        "limit": {"type": "number", "description": "How many lines to return at most"},
    },
    "required": ["path"],
}


class ReadTool:
    name = "read"
    label = "read"
    description = (
        "Read a file's contents. Text files and images (jpg, png, gif, webp) are supported; "
        "images are returned as attachments. Text output is cut at "
        f"{DEFAULT_MAX_LINES} lines or {DEFAULT_MAX_BYTES // 1024}KB, whichever comes first; "
        "use offset/limit for large files and continue with the offset the notice gives."
    )
    parameters: dict[str, JsonValue] = READ_PARAMETERS
    prompt_snippet: str | None = "Show a file's text (or an image) with line windows"
    prompt_guidelines: tuple[str, ...] = ("Look at files with read, not with cat, head or sed.",)
    execution_mode: Literal["parallel", "sequential"] = "parallel"

    async def execute(self, call_id: str, args: dict[str, JsonValue], ctx: ToolContext) -> ToolResult:
        raw_path = require_str(args, "path", self.name)
        offset = optional_int(args, "offset", self.name)
        limit = optional_int(args, "limit", self.name)
        path = resolve_read_path(raw_path, ctx.cwd)
        with names_failures(self.name, raw_path):
            try:
                if ctx.files is not None and await run_in_thread_bounded(None, _client_may_read, path):
                    text = await ctx.files.read_text(path)  # ACP: the editor's buffer, unsaved changes included
                    return self._text_result(io.BytesIO(text.encode("utf-8", "surrogatepass")), raw_path, offset, limit)
                pin = ctx.pins.pinned(call_id, path) if ctx.pins is not None else None
                return await run_in_thread_bounded(None, self._read, raw_path, pin or path, offset, limit, ctx,
                                                   pin is not None)
            except ThreadStalled as stalled:
                # A regular file whose read never answers (a hung network/FUSE mount, /proc/kmsg):
                # abort would end it, but print mode has nobody to press Esc.
                raise ToolError(
                    f"Cannot read {raw_path}: the file gave no data for {stalled.seconds:g} s (a hung network "
                    "mount, or a file that waits for data like /proc/kmsg); gave up. Use bash with a timeout "
                    f"(e.g. `timeout 5 head -c 4096 {raw_path}`) if you need it."
                ) from None

    def _read(
        self, raw_path: str, path: Path, offset: int | None, limit: int | None, ctx: ToolContext,
        pinned: bool = False,
    ) -> ToolResult:
        if not os.access(path, os.R_OK):
            try:
                os.stat(path)
            except OSError as error:
                raise node_style_error(error, "access", path) from None
            raise ToolError(f"EACCES: permission denied, access '{path}'")
        if path.is_dir():
            raise ToolError(f"EISDIR: illegal operation on a directory, read '{path}' (use ls or bash to list it)")
        try:
            with open_regular(path, pinned=pinned) as fh:
                head = fh.read(_SNIFF_BYTES)
                mime = detect_image_mime(head)
                if mime is not None:
                    size = os.fstat(fh.fileno()).st_size
                    if size > IMAGE_FILE_MAX_BYTES:  # read whole to be resized: never a file this big
                        raise ToolError(
                            f"Cannot read {raw_path}: it is an image of {format_size(size)}, over the "
                            f"{format_size(IMAGE_FILE_MAX_BYTES)} limit for images. Use bash to make a smaller copy "
                            "(e.g. `convert in.png -resize 2000x2000 out.png`) and read that."
                        )
                    fh.seek(0)
                    return self._image_result(fh.read(), mime, ctx)
                if looks_binary(head):
                    size = os.fstat(fh.fileno()).st_size
                    raise ToolError(
                        f"Cannot read {raw_path}: it is a binary file ({format_size(size)}) and not a "
                        "supported image (png, jpeg, gif, webp). Use bash (e.g. `file` or `xxd | head`) "
                        "to inspect it."
                    )
                fh.seek(0)
                return self._text_result(fh, raw_path, offset, limit)
        except PathChangedError as error:
            raise ToolError(f"Cannot read {raw_path}: {error}") from None
        except NotRegularFileError as error:
            raise ToolError(
                f"Cannot read {raw_path}: it is {error.kind}, not a regular file, and reading it could "
                "block or never end. Use bash with a timeout (e.g. `timeout 5 head -c 4096 "
                f"{raw_path}`) if you need what it produces."
            ) from None
        except OSError as error:
            raise node_style_error(error, "open", path) from None

    def _text_result(self, fh: BinaryIO, raw_path: str, offset: int | None, limit: int | None) -> ToolResult:
        start_index = max(0, offset - 1) if offset else 0
        try:
            window = read_line_window(fh, offset_index=start_index, limit=limit)
        except OffsetBeyondEnd as beyond:
            raise ToolError(
                f"Offset {offset} is beyond end of file ({beyond.total_lines} lines total)"
            ) from None
        truncation = window.truncation
        start_display = start_index + 1
        details: JsonValue = None
        if truncation.first_line_exceeds_limit:
            text = (
                f"[Line {start_display} is {format_size(window.first_line_bytes)}, exceeds "
                f"{format_size(DEFAULT_MAX_BYTES)} limit. Use bash: sed -n '{start_display}p' "
                f"{raw_path} | head -c {DEFAULT_MAX_BYTES}]"
            )
            details = {"truncation": truncation.as_details()}
        elif truncation.truncated:
            end_display = start_display + truncation.output_lines - 1
            limit_note = "" if truncation.truncated_by == "lines" else f" ({format_size(DEFAULT_MAX_BYTES)} limit)"
            text = (
                f"{truncation.content}\n\n[Showing lines {start_display}-{end_display} of "
                f"{window.total_file_lines}{limit_note}. Use offset={end_display + 1} to continue.]"
            )
            details = {"truncation": truncation.as_details()}
        elif limit is not None and start_index + window.selected_lines < window.total_file_lines:
            shown_end = start_index + window.selected_lines
            remaining = window.total_file_lines - shown_end
            text = f"{truncation.content}\n\n[{remaining} more lines in file. Use offset={shown_end + 1} to continue.]"
        else:
            text = truncation.content
        return ToolResult(content=[{"type": "text", "text": text}], details=details)

    def _image_result(self, data: bytes, mime: str, ctx: ToolContext) -> ToolResult:
        images_settings = ctx.settings.get("images")
        auto_resize = True
        if isinstance(images_settings, dict) and images_settings.get("autoResize") is False:
            auto_resize = False
        text = f"Read image file [{mime}]"
        content: list[UserContent] = []
        if auto_resize:
            fitted = fit_image(data, mime)
            if fitted is None:
                text += "\n" + IMAGE_OMITTED_NOTE
            else:
                if fitted.was_resized:
                    text += "\n" + fitted.dimension_note()
                content.append({"type": "image", "data": fitted.base64(), "mimeType": fitted.mime_type})
        else:
            import base64

            content.append({"type": "image", "data": base64.b64encode(data).decode("ascii"), "mimeType": mime})
        if not ctx.model_supports_images:
            text += "\n" + NO_VISION_NOTE
        return ToolResult(content=[{"type": "text", "text": text}, *content])
