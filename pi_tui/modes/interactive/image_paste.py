"""Ctrl+V (``app.clipboard.pasteImage``): the clipboard's image becomes an attachment of the
message being written, and goes with it as an image block when it is sent.

The clipboard is read in a thread (``clipboard_image``; every tool call has a timeout) and the
image is fitted as the ``read`` tool fits images (``tools/images.fit_image``: within 2000×2000 and
4.5 MiB of base64, re-encoded when needed). The editor shows each attachment on its top border
and Backspace at the very start of the message removes the last one. No image, no tool, a
timeout: a one-line notice, nothing attached.

A file dragged onto the terminal arrives as a paste of its path: a paste that is only the path of
an image file (quoted, shell-escaped or a ``file://`` URI) is attached the same way instead of
being typed (``pasted_image_path``).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from pi_tui.core.deadline import within
from pi_tui.modes.interactive.clipboard_image import ClipboardImage, ClipboardRead

PASTE_TIMEOUT_SECONDS = 10.0
"""The whole read (listing plus reading, each with its own timeout) never takes longer."""


@dataclass(frozen=True, slots=True)
class ImageAttachment:
    """An image ready to send (``block`` is the message's image content) and its chip text."""

    block: dict[str, str]
    label: str


def attachment_from(image: ClipboardImage, number: int) -> ImageAttachment | str:
    """The image fitted for the model, or why it cannot be sent."""
    from pi_tui.tools.images import fit_image

    fitted = fit_image(image.data, image.mime_type)
    if fitted is None:
        return "The clipboard image could not be decoded or made small enough to send"
    kind = fitted.mime_type.removeprefix("image/")
    size = f"{fitted.width}×{fitted.height}" if fitted.width else "?×?"
    kilobytes = max(1, round(len(fitted.data) / 1024))
    resized = (f", from {fitted.original_width}×{fitted.original_height}"
               if fitted.was_resized and (fitted.original_width, fitted.original_height) != (fitted.width, fitted.height)
               else "")
    label = f"image {number}: {kind} {size}{resized}, {kilobytes} KB"
    return ImageAttachment({"type": "image", "data": fitted.base64(), "mimeType": fitted.mime_type}, label)


def _default_reader() -> ClipboardRead:
    from pi_tui.modes.interactive.clipboard_image import read_clipboard_image

    return read_clipboard_image()


async def paste_image(screen: Any) -> None:
    """Read the clipboard and attach its image to ``screen``'s editor, or say why not."""
    reader: Callable[[], ClipboardRead] = getattr(screen.pi, "clipboard_reader", None) or _default_reader
    editor = screen.editor
    try:
        read = await within(asyncio.to_thread(reader), PASTE_TIMEOUT_SECONDS)
    except TimeoutError:
        read = ClipboardRead(None, f"The clipboard did not answer within {PASTE_TIMEOUT_SECONDS:g} s")
    except Exception as err:  # a broken tool must not take the chat down
        read = ClipboardRead(None, f"Could not read the clipboard: {err}")
    if read.image is None:
        await screen.conversation.add_notice(f"{read.problem}; nothing attached.", severity="warning")
        return
    made = await asyncio.to_thread(attachment_from, read.image, len(editor.attachments) + 1)
    if isinstance(made, str):
        await screen.conversation.add_notice(f"{made}; nothing attached.", severity="warning")
        return
    await _attach(screen, made)


_IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".gif", ".webp"}


def pasted_image_path(text: str, cwd: Path) -> Path | None:
    """The image file a paste names, when the paste is nothing but its path (what a terminal
    sends for a dragged file: ``'/a b.png'``, ``/a\\ b.png``, ``file:///a%20b.png``), else None."""
    raw = text.strip()
    if not raw or "\n" in raw or len(raw) > 4096:
        return None
    if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "'\"":
        raw = raw[1:-1]
    elif raw.startswith("file://"):
        raw = unquote(urlparse(raw).path)
    else:
        raw = re.sub(r"\\(.)", r"\1", raw)
    path = Path(raw).expanduser()
    path = path if path.is_absolute() else cwd / path
    if path.suffix.lower() not in _IMAGE_SUFFIXES:
        return None
    from pi_tui.tools.images import detect_image_mime

    try:
        with open(path, "rb") as handle:
            head = handle.read(16)
    except OSError:
        return None
    return path if detect_image_mime(head) is not None else None


async def attach_image_file(screen: Any, path: Path) -> None:
    """Attach the image file ``path`` (a dragged file) to ``screen``'s editor, or say why not."""
    from pi_tui.tools.images import detect_image_mime

    editor = screen.editor

    def load() -> ImageAttachment | str:
        try:
            data = path.read_bytes()
        except OSError as err:
            return f"Could not read {path.name}: {err.strerror}"
        mime = detect_image_mime(data[:16])
        if mime is None:
            return f"{path.name} is not an image"
        made = attachment_from(ClipboardImage(data, mime, "file"), len(editor.attachments) + 1)
        return made.replace("clipboard image", path.name) if isinstance(made, str) else made

    made = await asyncio.to_thread(load)
    if isinstance(made, str):
        await screen.conversation.add_notice(f"{made}; nothing attached.", severity="warning")
        return
    await _attach(screen, made)


async def _attach(screen: Any, attachment: ImageAttachment) -> None:
    """Attach, and say so when the model cannot see images (it gets a placeholder instead)."""
    screen.editor.attach(attachment)
    model = getattr(getattr(screen.session, "state", None), "model", None)
    if model is not None and not getattr(model, "supports_images", True):
        await screen.conversation.add_notice(
            f"{model.provider}/{model.id} does not take images: it will be told an image was omitted.",
            severity="warning")
