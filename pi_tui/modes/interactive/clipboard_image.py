"""Reading an image from the system clipboard (pi's ``app.clipboard.pasteImage``, ctrl+v).

As pi does, the clipboard is read through the desktop's own tools: ``wl-paste`` on Wayland
(``WAYLAND_DISPLAY`` set, or ``XDG_SESSION_TYPE=wayland``; ``xclip`` after it, for XWayland),
``xclip`` on X11 (``DISPLAY``), and on macOS ``pngpaste`` when installed, else ``osascript``.
The types on offer are listed first (``wl-paste --list-types``, ``xclip -t TARGETS``) and an
image type is picked (PNG first, then JPEG, WebP, GIF; another ``image/*`` is converted to PNG);
every call has a timeout, so a clipboard owner that never answers costs seconds, not the app.
No Textual here: the chat screen runs ``read_clipboard_image`` in a thread.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass

IMAGE_TYPES = ("image/png", "image/jpeg", "image/webp", "image/gif")
"""The types a model takes, in order of preference."""
LIST_TIMEOUT_SECONDS = 1.0
READ_TIMEOUT_SECONDS = 3.0
MAX_CLIPBOARD_BYTES = 50 * 1024 * 1024

NO_TOOL = "No clipboard tool: install wl-clipboard (Wayland) or xclip (X11) to paste images"
NO_DISPLAY = "No clipboard here: neither WAYLAND_DISPLAY nor DISPLAY is set"


class ClipboardTimeout(Exception):
    """A clipboard tool did not answer in time."""


@dataclass(frozen=True, slots=True)
class ClipboardImage:
    data: bytes
    mime_type: str
    tool: str


@dataclass(frozen=True, slots=True)
class ClipboardRead:
    """An image, or the one-line reason there is none."""

    image: ClipboardImage | None
    problem: str = ""


Runner = Callable[[list[str], float], "bytes | None"]
"""Runs a tool: its stdout, or None when it failed; raises ``ClipboardTimeout``."""


def run_tool(args: list[str], timeout: float) -> bytes | None:
    try:
        done = subprocess.run(args, capture_output=True, timeout=timeout, check=False, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as err:
        raise ClipboardTimeout(f"{args[0]} did not answer within {timeout:g} s") from err
    except OSError:
        return None
    if done.returncode != 0 or len(done.stdout) > MAX_CLIPBOARD_BYTES:
        return None
    return done.stdout


def _base(mime: str) -> str:
    return mime.split(";")[0].strip().lower()


def preferred_image_type(types: list[str]) -> str | None:
    """The clipboard type to read: the first of ``IMAGE_TYPES`` on offer, else any ``image/*``."""
    offered = [t.strip() for t in types if t.strip()]
    for wanted in IMAGE_TYPES:
        for raw in offered:
            if _base(raw) == wanted:
                return raw
    return next((raw for raw in offered if _base(raw).startswith("image/")), None)


def _lines(data: bytes | None) -> list[str]:
    return [line.strip() for line in (data or b"").decode("utf-8", "replace").splitlines() if line.strip()]


_X11_META_TARGETS = {"TARGETS", "TIMESTAMP", "MULTIPLE", "SAVE_TARGETS", "DELETE", "INSERT_SELECTION"}


def _no_image(types: list[str]) -> str:
    types = [t for t in types if t not in _X11_META_TARGETS]
    held = ", ".join(types[:3]) + ("…" if len(types) > 3 else "")
    return "No image in the clipboard" + (f" (it holds {held})" if types else "")


def _wl_paste(tool: str, run: Runner) -> ClipboardRead:
    types = _lines(run([tool, "--list-types"], LIST_TIMEOUT_SECONDS))
    chosen = preferred_image_type(types)
    if chosen is None:
        return ClipboardRead(None, _no_image(types))
    data = run([tool, "--type", chosen, "--no-newline"], READ_TIMEOUT_SECONDS)
    if not data:
        return ClipboardRead(None, "No image in the clipboard")
    return ClipboardRead(ClipboardImage(data, _base(chosen), "wl-paste"))


def _xclip(tool: str, run: Runner) -> ClipboardRead:
    types = _lines(run([tool, "-selection", "clipboard", "-t", "TARGETS", "-o"], LIST_TIMEOUT_SECONDS))
    chosen = preferred_image_type(types)
    if chosen is None and types:  # the owner answered and offers no image
        return ClipboardRead(None, _no_image(types))
    # Some owners list no TARGETS: try the image types one by one, as pi does.
    for mime in [chosen] if chosen else list(IMAGE_TYPES):
        data = run([tool, "-selection", "clipboard", "-t", mime, "-o"], READ_TIMEOUT_SECONDS)
        if data:
            return ClipboardRead(ClipboardImage(data, _base(mime), "xclip"))
    return ClipboardRead(None, "No image in the clipboard")


def _macos(which: Callable[[str], str | None], run: Runner) -> ClipboardRead:
    pngpaste = which("pngpaste")
    if pngpaste is not None:
        data = run([pngpaste, "-"], READ_TIMEOUT_SECONDS)
        return ClipboardRead(ClipboardImage(data, "image/png", "pngpaste")) if data else \
            ClipboardRead(None, "No image in the clipboard")
    osascript = which("osascript")
    if osascript is None:
        return ClipboardRead(None, "No clipboard tool: install pngpaste to paste images")
    out = run([osascript, "-e", "the clipboard as «class PNGf»"], READ_TIMEOUT_SECONDS)
    found = re.search(r"«data PNGf([0-9A-Fa-f]+)»", (out or b"").decode("utf-8", "replace"))
    if found is None:
        return ClipboardRead(None, "No image in the clipboard")
    return ClipboardRead(ClipboardImage(bytes.fromhex(found.group(1)), "image/png", "osascript"))


def read_clipboard_image(env: Mapping[str, str] | None = None, platform: str | None = None,
                         which: Callable[[str], str | None] = shutil.which, run: Runner = run_tool) -> ClipboardRead:
    """The clipboard's image, or why there is none (no tool, no display, no image, a timeout)."""
    environ = os.environ if env is None else env
    system = platform or sys.platform
    try:
        if system == "darwin":
            read = _macos(which, run)
        else:
            read = _desktop(environ, which, run)
    except ClipboardTimeout as err:
        return ClipboardRead(None, f"The clipboard did not answer: {err}")
    if read.image is not None and read.image.mime_type not in IMAGE_TYPES:
        return _as_png(read.image)
    return read


def _desktop(environ: Mapping[str, str], which: Callable[[str], str | None], run: Runner) -> ClipboardRead:
    wayland = bool(environ.get("WAYLAND_DISPLAY")) or environ.get("XDG_SESSION_TYPE") == "wayland"
    readers: list[tuple[str, Callable[[str, Runner], ClipboardRead]]] = []
    if wayland:
        readers.append(("wl-paste", _wl_paste))
    if wayland or environ.get("DISPLAY"):
        readers.append(("xclip", _xclip))
    if not readers:
        return ClipboardRead(None, NO_DISPLAY)
    found = [(path, reader) for name, reader in readers if (path := which(name)) is not None]
    if not found:
        return ClipboardRead(None, NO_TOOL)
    read = ClipboardRead(None, "No image in the clipboard")
    for path, reader in found:
        read = reader(path, run)
        if read.image is not None:
            return read
    return read


def _as_png(image: ClipboardImage) -> ClipboardRead:
    """Another image type (a BMP from some desktops) as PNG, through Pillow."""
    import io

    try:
        from PIL import Image

        with Image.open(io.BytesIO(image.data)) as opened:
            buffer = io.BytesIO()
            opened.save(buffer, format="PNG")
    except Exception:
        return ClipboardRead(None, f"The clipboard's {image.mime_type} image could not be read")
    return ClipboardRead(ClipboardImage(buffer.getvalue(), "image/png", image.tool))
