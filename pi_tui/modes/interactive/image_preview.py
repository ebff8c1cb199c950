"""Image blocks of tool results as small previews in the terminal: Unicode half blocks.

A tool result's ``{"type": "image", "data": <base64>, "mimeType": ...}`` (an MCP tool's image, ``read``
on a PNG) becomes a caption ``[image image/png 64×64, 1.2KB]`` and a preview in which every cell
is two pixels of the scaled image: ``▀`` with the upper pixel as foreground and the lower one as
background (``▄`` or a blank where a half is transparent). Terminal cells are about twice as tall
as wide, so one cell per 1×2 pixels keeps the aspect ratio.

Decoding is bounded before anything is decompressed: more than ``MAX_DATA_BYTES`` of image data or
a header announcing more than ``MAX_PIXELS`` pixels (a decompression bomb) is refused with the
reason in the caption; a corrupt image says so too, never with a traceback. Each image is decoded
once into a small master thumbnail kept in an LRU cache, and each (columns, rows) rendering of it
is cached on that entry: a scroll or repaint never decodes again. ``load(..., allow_slow=False)``
declines work that may take long (big data or many pixels) so the panel can do it in a thread.
Pillow (a dependency, also used by ``read``) is imported only when an image is first decoded.
"""

from __future__ import annotations

import base64
import binascii
import io
import threading
import warnings
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from textual.color import Color
from textual.content import Content
from textual.style import Style

from pi_tui.core.sizes import format_size
from pi_tui.tools.images import detect_image_mime

if TYPE_CHECKING:
    from PIL.Image import Image as PILImage

MAX_DATA_BYTES = 20 * 1024 * 1024
"""Decoded image bytes beyond this are not previewed (nor even base64-decoded)."""
MAX_PIXELS = 40_000_000
"""A header announcing more pixels than this is refused before decoding (decompression bombs)."""
SYNC_DATA_BYTES = 256 * 1024
SYNC_PIXELS = 2_000_000
"""Below both, ``load(allow_slow=False)`` decodes at once (milliseconds); above, it declines."""
MASTER_COLS = 400
MASTER_ROWS = 60
"""The master thumbnail fits (MASTER_COLS × 2·MASTER_ROWS) pixels: every rendering is scaled from it."""
DEFAULT_COLS = 60
"""``terminal.imageWidthCells``' default (pi's): the widest preview, in columns."""
COLLAPSED_ROWS = 12
EXPANDED_ROWS = 30
CACHE_ENTRIES = 64
ALPHA_OPAQUE = 128
"""A pixel with less alpha than this counts as transparent (the panel's background shows)."""

FORMATS = {"image/png": "PNG", "image/jpeg": "JPEG", "image/jpg": "JPEG", "image/gif": "GIF",
           "image/webp": "WEBP"}
_ALL_FORMATS = ("PNG", "JPEG", "GIF", "WEBP")
"""The only decoders Pillow may use (each recognises its own magic bytes, whatever the block's
``mimeType`` says): none of its exotic plugins ever sees a tool's bytes."""

RGB = tuple[int, int, int]


@dataclass(frozen=True, slots=True)
class Cell:
    """One terminal cell of a preview: the character and its colours (``None``: the background)."""

    char: str
    fg: RGB | None
    bg: RGB | None


@dataclass(slots=True)
class Decoded:
    """What is known about one image block: its caption facts, and the master thumbnail if any."""

    mime: str
    num_bytes: int
    width: int | None = None
    height: int | None = None
    problem: str | None = None
    """Why there is no preview (corrupt, too large, unsupported), shown in the caption."""
    master: PILImage | None = None
    _rendered: dict[tuple[int, int], Content] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def caption(self) -> str:
        size = f" {self.width}×{self.height}" if self.width and self.height else ""
        text = f"[image {self.mime or 'image'}{size}, {format_size(self.num_bytes)}"
        return text + (f": {self.problem}]" if self.problem else "]")

    def cells(self, cols: int, rows: int) -> list[list[Cell]]:
        """The preview fitted into ``cols`` × ``rows`` cells (never enlarged); empty without one."""
        if self.master is None or cols < 1 or rows < 1:
            return []
        with self._lock:  # Pillow images are not safe to resize from two threads at once
            return half_block_cells(_fit(self.master, cols, rows * 2))

    def render(self, cols: int, rows: int) -> Content:
        """``cells`` as styled text, cached per size."""
        key = (cols, rows)
        found = self._rendered.get(key)
        if found is None:
            found = cells_to_content(self.cells(cols, rows))
            self._rendered[key] = found
        return found


def half_block_cells(image: PILImage) -> list[list[Cell]]:
    """Every cell of ``image`` (RGBA) at one pixel per column and two pixels per row."""
    width, height = image.size
    pixels = image.convert("RGBA").tobytes()

    def at(x: int, y: int) -> RGB | None:
        if y >= height:
            return None
        offset = (y * width + x) * 4
        return (pixels[offset], pixels[offset + 1], pixels[offset + 2]) if pixels[offset + 3] >= ALPHA_OPAQUE else None

    rows: list[list[Cell]] = []
    for y in range(0, height, 2):
        row = []
        for x in range(width):
            upper, lower = at(x, y), at(x, y + 1)
            if upper is not None:
                row.append(Cell("▀", upper, lower))
            elif lower is not None:
                row.append(Cell("▄", lower, None))
            else:
                row.append(Cell(" ", None, None))
        rows.append(row)
    return rows


def cells_to_content(cells: list[list[Cell]]) -> Content:
    """The cells as one ``Content``, runs of equal cells sharing a span."""
    pieces: list[tuple[str, Style | str] | str] = []
    for index, row in enumerate(cells):
        if index:
            pieces.append("\n")
        run = ""
        previous: Cell | None = None
        for cell in row:
            if previous is not None and (cell.fg, cell.bg) != (previous.fg, previous.bg):
                pieces.append((run, _style(previous)))
                run = ""
            run += cell.char
            previous = cell
        if previous is not None:
            pieces.append((run, _style(previous)))
    return Content.assemble(*pieces)


def _style(cell: Cell) -> Style:
    return Style(foreground=Color(*cell.fg) if cell.fg else None,
                 background=Color(*cell.bg) if cell.bg else None)


def _fit(image: PILImage, max_w: int, max_h: int) -> PILImage:
    """``image`` scaled to fit ``max_w`` × ``max_h`` with its aspect ratio, never enlarged."""
    from PIL import Image

    width, height = image.size
    scale = min(1.0, max_w / width, max_h / height)
    if scale >= 1.0:
        return image
    size = (max(1, min(max_w, round(width * scale))), max(1, min(max_h, round(height * scale))))
    return image.resize(size, Image.Resampling.LANCZOS)


# ---------------------------------------------------------------------------- loading

_cache: OrderedDict[tuple[str, int, int], Decoded] = OrderedDict()
_cache_lock = threading.Lock()
_slow_lock = threading.Lock()
"""Slow decodes (threads) run one at a time: reopening a session full of big images must not
decode them all at once, each holding its full-size pixels."""


def _key(data: str, mime: str) -> tuple[str, int, int]:
    return (mime, len(data), hash(data))  # str hashes are cached: cheap after the first look


def data_size(data: str) -> int:
    """The decoded size of base64 ``data`` without decoding it."""
    stripped = len(data.rstrip("="))
    return stripped * 3 // 4


def cached(data: str, mime: str) -> Decoded | None:
    with _cache_lock:
        found = _cache.get(_key(data, mime))
        if found is not None:
            _cache.move_to_end(_key(data, mime))
        return found


def _remember(data: str, mime: str, decoded: Decoded) -> Decoded:
    with _cache_lock:
        _cache[_key(data, mime)] = decoded
        while len(_cache) > CACHE_ENTRIES:
            _cache.popitem(last=False)
    return decoded


def load(data: str, mime: str, *, allow_slow: bool = True) -> Decoded | None:
    """The image block decoded (cached); None only when ``allow_slow`` is off and it may be slow."""
    found = cached(data, mime)
    if found is not None:
        return found
    num_bytes = data_size(data)
    if num_bytes > MAX_DATA_BYTES:
        return _remember(data, mime, Decoded(mime, num_bytes, problem=f"too large to preview (over "
                                                                      f"{format_size(MAX_DATA_BYTES)})"))
    if not allow_slow:
        decoded = None if num_bytes > SYNC_DATA_BYTES else _decode(data, mime, num_bytes, allow_slow=False)
        return None if decoded is None else _remember(data, mime, decoded)
    with _slow_lock:
        found = cached(data, mime)  # another panel may have decoded the same image meanwhile
        if found is not None:
            return found
        try:
            decoded = _decode(data, mime, num_bytes, allow_slow=True)  # never None when slow is allowed
        except Exception as error:  # remembered as a reason: a panel never waits on "decoding…" for ever
            decoded = Decoded(mime, num_bytes, problem=f"cannot decode ({type(error).__name__})")
        return _remember(data, mime, decoded or Decoded(mime, num_bytes, problem="cannot decode"))


def _decode(data: str, mime: str, num_bytes: int, *, allow_slow: bool) -> Decoded | None:
    info = Decoded(mime, num_bytes)
    try:
        raw = base64.b64decode(data)  # lenient: line breaks in the text are dropped
    except (binascii.Error, ValueError):
        info.problem = "not valid base64"
        return info
    info.num_bytes = len(raw)
    size = header_size(raw)
    if size is not None:
        info.width, info.height = size
        if size[0] * size[1] > MAX_PIXELS:  # refused before any decoder sees it
            info.problem = f"too large to preview ({size[0] * size[1] / 1e6:,.0f} megapixels)"
            return info
    try:
        from PIL import Image, UnidentifiedImageError
    except ImportError:  # pragma: no cover - pillow is a dependency
        info.problem = "no image library"
        return info
    raw = _without_broken_ancillary_chunks(raw)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(raw), formats=_ALL_FORMATS) as opened:
                width, height = opened.size  # the header only: nothing is decompressed yet
                info.width, info.height = width, height
                if width < 1 or height < 1:
                    info.problem = "empty image"
                    return info
                if width * height > MAX_PIXELS:
                    info.problem = f"too large to preview ({width * height / 1e6:,.0f} megapixels)"
                    return info
                if not allow_slow and width * height > SYNC_PIXELS:
                    return None
                box = (MASTER_COLS, MASTER_ROWS * 2)
                opened.draft("RGB", box)  # JPEG: decode at a reduced scale (no-op for the others)
                frame = opened.convert("RGBA")
    except (UnidentifiedImageError, OSError, ValueError, EOFError, SyntaxError,
            Image.DecompressionBombError) as error:
        info.problem = _reason(error, mime)
        return info
    except Exception as error:  # a decoder's own bug must not reach the TUI as a traceback
        info.problem = f"cannot decode ({type(error).__name__})"
        return info
    info.master = _fit(frame, *box)
    return info


def _without_broken_ancillary_chunks(raw: bytes) -> bytes:
    """A PNG without the optional chunks whose checksum is wrong, as browsers show it (Pillow
    refuses the whole file: server-everything's tiny image has a broken ``iCCP``); anything else
    unchanged."""
    if not raw.startswith(b"\x89PNG\r\n\x1a\n"):
        return raw
    import zlib

    kept, at, dropped = [raw[:8]], 8, False
    while at + 12 <= len(raw):
        length = int.from_bytes(raw[at:at + 4], "big")
        end = at + 12 + length
        if end > len(raw):
            break
        kind = raw[at + 4:at + 8]
        ancillary = bool(kind[0] & 0x20)
        if ancillary and zlib.crc32(raw[at + 4:end - 4]) != int.from_bytes(raw[end - 4:end], "big"):
            dropped = True
        else:
            kept.append(raw[at:end])
        at = end
    if not dropped:
        return raw
    kept.append(raw[at:])
    return b"".join(kept)


def _reason(error: BaseException, mime: str) -> str:
    from PIL import Image, UnidentifiedImageError

    if isinstance(error, Image.DecompressionBombError):
        return "too large to preview"
    if isinstance(error, UnidentifiedImageError):
        known = FORMATS.get(mime.lower())
        return f"not a readable {known.lower()} image" if known else "not a PNG, JPEG, GIF or WebP image"
    return "corrupt image"


PROBE_CHARS = 64 * 1024
"""``probe`` reads the header from this much of the base64 text (a multiple of 4)."""


def probe(data: str, mime: str) -> Decoded:
    """The caption's facts from the header alone, for when previews are off: nothing is decoded."""
    found = cached(data, mime)
    if found is not None:
        return found
    info = Decoded(mime, data_size(data))
    try:
        info.width, info.height = header_size(base64.b64decode(data[:PROBE_CHARS])) or (None, None)
    except (binascii.Error, ValueError):
        pass
    return info


def header_size(raw: bytes) -> tuple[int, int] | None:
    """Width and height from a PNG, GIF, WebP or JPEG header, without an image library: the caption
    has them even when Pillow refuses the image (a bomb) or previews are off."""
    kind = detect_image_mime(raw)
    if kind == "image/png" and len(raw) >= 24 and raw[12:16] == b"IHDR":
        return int.from_bytes(raw[16:20], "big"), int.from_bytes(raw[20:24], "big")
    if kind == "image/gif" and len(raw) >= 10:
        return int.from_bytes(raw[6:8], "little"), int.from_bytes(raw[8:10], "little")
    if kind == "image/webp" and len(raw) >= 30:
        chunk, body = raw[12:16], raw[20:]
        if chunk == b"VP8X":
            return int.from_bytes(body[4:7], "little") + 1, int.from_bytes(body[7:10], "little") + 1
        if chunk == b"VP8L" and body[:1] == b"\x2f":
            bits = int.from_bytes(body[1:5], "little")
            return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
        if chunk == b"VP8 " and body[3:6] == b"\x9d\x01\x2a":
            return int.from_bytes(body[6:8], "little") & 0x3FFF, int.from_bytes(body[8:10], "little") & 0x3FFF
        return None
    if kind == "image/jpeg":
        at = 2
        while at + 9 < len(raw):
            if raw[at] != 0xFF:
                return None
            marker = raw[at + 1]
            if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:
                at += 2
                continue
            length = int.from_bytes(raw[at + 2:at + 4], "big")
            if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
                return int.from_bytes(raw[at + 7:at + 9], "big"), int.from_bytes(raw[at + 5:at + 7], "big")
            at += 2 + length
    return None


def image_blocks(result: Any) -> list[dict[str, Any]]:
    """The image blocks of a ``{"content": [...]}`` tool result."""
    content = result.get("content") if isinstance(result, dict) else None
    if not isinstance(content, list):
        return []
    return [block for block in content if isinstance(block, dict) and block.get("type") == "image"
            and isinstance(block.get("data"), str)]


def clear_cache() -> None:
    with _cache_lock:
        _cache.clear()
