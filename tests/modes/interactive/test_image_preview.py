"""The half-block renderer of tool results' image blocks (``image_preview``), on real PNG, JPEG,
GIF and WebP data: exact cells and colours, scaling, corrupt data and refused bombs."""

from __future__ import annotations

import base64
import io
import random
import struct
import time
import zlib
from collections.abc import Iterator

import pytest
from PIL import Image

from pi_tui.modes.interactive import image_preview as ip
from pi_tui.modes.interactive.image_preview import Cell

RED, GREEN, BLUE, YELLOW = (255, 0, 0), (0, 255, 0), (0, 0, 255), (255, 255, 0)
MAGENTA, CYAN, INK = (255, 0, 255), (0, 255, 255), (10, 20, 30)


@pytest.fixture(autouse=True)
def fresh_cache() -> Iterator[None]:
    ip.clear_cache()
    yield
    ip.clear_cache()


def encoded(image: Image.Image, fmt: str = "PNG", **params: object) -> str:
    buffer = io.BytesIO()
    image.save(buffer, fmt, **params)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def two_by_four() -> Image.Image:
    """Two columns, four rows; the last pixel is transparent."""
    image = Image.new("RGBA", (2, 4))
    image.putdata([(*RED, 255), (*GREEN, 255), (*BLUE, 255), (*YELLOW, 255),
                   (*MAGENTA, 255), (*CYAN, 255), (*INK, 255), (0, 0, 0, 0)])
    return image


def png_chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def test_a_two_by_four_png_is_two_by_two_half_blocks_of_its_colours() -> None:
    decoded = ip.load(encoded(two_by_four()), "image/png")
    assert decoded is not None and decoded.problem is None
    assert decoded.caption() == "[image image/png 2×4, 89B]"
    assert decoded.cells(40, 12) == [
        [Cell("▀", RED, BLUE), Cell("▀", GREEN, YELLOW)],
        [Cell("▀", MAGENTA, INK), Cell("▀", CYAN, None)],  # the lower half is transparent
    ]
    content = decoded.render(40, 12)
    assert content.plain == "▀▀\n▀▀"
    styles = [(content.plain[span.start:span.end], span.style) for span in content.spans]
    first = styles[0][1]
    assert first.foreground.rgb == RED and first.background.rgb == BLUE  # type: ignore[union-attr]
    assert styles[-1][1].background is None  # type: ignore[union-attr]


def test_transparent_upper_halves_use_the_lower_block_and_empty_cells_are_blank() -> None:
    image = Image.new("RGBA", (2, 2), (0, 0, 0, 0))
    image.putpixel((0, 1), (*GREEN, 255))
    decoded = ip.load(encoded(image), "image/png")
    assert decoded is not None
    assert decoded.cells(10, 10) == [[Cell("▄", GREEN, None), Cell(" ", None, None)]]


def test_an_odd_height_leaves_the_last_lower_half_empty() -> None:
    decoded = ip.load(encoded(Image.new("RGB", (1, 3), RED)), "image/png")
    assert decoded is not None
    assert decoded.cells(10, 10) == [[Cell("▀", RED, RED)], [Cell("▀", RED, None)]]


@pytest.mark.parametrize(("size", "box", "cells"), [
    ((100, 50), (40, 12), (40, 10)),   # wide: the width limits, 40×20 pixels = 10 rows
    ((10, 100), (40, 12), (2, 12)),    # tall: 24 pixels high, 2.4 → 2 wide
    ((64, 64), (40, 12), (24, 12)),    # square: 24×24 pixels, 12 rows
    ((64, 64), (40, 30), (40, 20)),    # a taller box (expanded): 40×40 pixels
    ((8, 6), (40, 12), (8, 3)),        # small: never enlarged
    ((64, 64), (10, 12), (10, 5)),     # a narrow panel
])
def test_scaling_keeps_the_aspect_ratio_with_one_cell_per_one_by_two_pixels(
        size: tuple[int, int], box: tuple[int, int], cells: tuple[int, int]) -> None:
    decoded = ip.load(encoded(Image.new("RGB", size, BLUE)), "image/png")
    assert decoded is not None
    rows = decoded.cells(*box)
    assert (len(rows[0]), len(rows)) == cells
    assert {cell for row in rows for cell in row} == {Cell("▀", BLUE, BLUE)}


def test_a_gradient_keeps_its_order_when_scaled() -> None:
    image = Image.new("RGB", (200, 20))
    for x in range(200):
        for y in range(20):
            image.putpixel((x, y), (x, 0, 255 - x))
    decoded = ip.load(encoded(image), "image/png")
    assert decoded is not None
    row = decoded.cells(20, 12)[0]
    reds = [cell.fg[0] for cell in row if cell.fg]
    assert len(row) == 20 and reds == sorted(reds) and reds[0] < 20 and reds[-1] > 180


@pytest.mark.parametrize(("fmt", "mime"), [("JPEG", "image/jpeg"), ("GIF", "image/gif"), ("WEBP", "image/webp")])
def test_jpeg_gif_and_webp_preview_too(fmt: str, mime: str) -> None:
    decoded = ip.load(encoded(Image.new("RGB", (40, 20), (200, 40, 40)), fmt), mime)
    assert decoded is not None and decoded.problem is None
    assert decoded.caption().startswith(f"[image {mime} 40×20, ")
    rows = decoded.cells(40, 12)
    assert (len(rows[0]), len(rows)) == (40, 10)
    r, g, b = rows[5][20].fg  # type: ignore[misc]
    assert r > 150 and g < 90 and b < 90  # lossy formats: about the colour


def test_the_header_gives_the_size_without_a_decoder() -> None:
    for fmt, params in (("PNG", {}), ("GIF", {}), ("JPEG", {}), ("WEBP", {"lossless": True}), ("WEBP", {})):
        raw = base64.b64decode(encoded(Image.new("RGB", (321, 123), RED), fmt, **params))
        assert ip.header_size(raw) == (321, 123), (fmt, params)
    assert ip.header_size(b"not an image") is None


def test_corrupt_data_is_a_caption_with_the_reason() -> None:
    good = base64.b64decode(encoded(Image.new("RGB", (50, 50), RED)))
    truncated = ip.load(base64.b64encode(good[:70]).decode(), "image/png")
    assert truncated is not None and truncated.caption() == "[image image/png 50×50, 70B: corrupt image]"
    assert truncated.cells(40, 12) == [] and truncated.render(40, 12).plain == ""
    garbage = ip.load(base64.b64encode(b"hello, not a picture").decode(), "image/png")
    assert garbage is not None and garbage.caption() == "[image image/png, 20B: not a readable png image]"
    not_base64 = ip.load("@@@@ this is not base64", "image/png")
    assert not_base64 is not None and not_base64.problem == "not valid base64"


def test_a_bomb_header_is_refused_at_once() -> None:
    """100000×100000 announced in a 70-byte PNG: refused from the header, never decompressed."""
    header = struct.pack(">IIBBBBB", 100_000, 100_000, 8, 2, 0, 0, 0)
    bomb = (b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", header)
            + png_chunk(b"IDAT", zlib.compress(b"\0" * 100_000)) + png_chunk(b"IEND", b""))
    started = time.monotonic()
    decoded = ip.load(base64.b64encode(bomb).decode(), "image/png")
    assert time.monotonic() - started < 0.5
    assert decoded is not None and decoded.master is None
    assert decoded.caption().startswith("[image image/png 100000×100000, ")
    assert decoded.caption().endswith(": too large to preview (10,000 megapixels)]")


def test_a_real_bomb_within_the_data_limit_is_refused_by_its_pixels() -> None:
    """A genuine 8000×6000 black PNG (tiny once compressed) exceeds 40 megapixels."""
    rows = zlib.compress(bytes(8001 * 6000), 9)
    bomb = (b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", struct.pack(">IIBBBBB", 8000, 6000, 8, 0, 0, 0, 0))
            + png_chunk(b"IDAT", rows) + png_chunk(b"IEND", b""))
    assert len(bomb) < 100_000
    started = time.monotonic()
    decoded = ip.load(base64.b64encode(bomb).decode(), "image/png")
    assert time.monotonic() - started < 0.5
    assert decoded is not None and decoded.problem == "too large to preview (48 megapixels)"


def test_too_much_data_is_refused_before_base64_decoding() -> None:
    data = "A" * (28 * 1024 * 1024)
    started = time.monotonic()
    decoded = ip.load(data, "image/png")
    assert time.monotonic() - started < 0.5
    assert decoded is not None and decoded.caption() == "[image image/png, 21.0MB: too large to preview (over 20.0MB)]"


def test_slow_work_is_declined_unless_allowed_and_results_are_cached() -> None:
    noise = Image.frombytes("RGB", (600, 400), random.Random(7).randbytes(600 * 400 * 3))
    data = encoded(noise)
    assert ip.data_size(data) > ip.SYNC_DATA_BYTES
    assert ip.load(data, "image/png", allow_slow=False) is None
    decoded = ip.load(data, "image/png")
    assert decoded is not None and decoded.master is not None
    assert ip.load(data, "image/png", allow_slow=False) is decoded  # decoded once
    assert decoded.render(40, 12) is decoded.render(40, 12)  # rendered once per size


def test_the_bytes_decide_the_format_not_the_mime_type() -> None:
    jpeg = encoded(Image.new("RGB", (8, 4), (250, 250, 250)), "JPEG")
    decoded = ip.load(jpeg, "image/png")  # a server that says png and sends a JPEG
    assert decoded is not None and decoded.problem is None and len(decoded.cells(8, 8)) == 2
    bmp = encoded(Image.new("RGB", (8, 4), RED), "BMP")
    refused = ip.load(bmp, "image/bmp")
    assert refused is not None and refused.caption() == "[image image/bmp, 150B: not a PNG, JPEG, GIF or WebP image]"


def test_base64_with_line_breaks_still_decodes() -> None:
    data = encoded(Image.new("RGB", (2, 2), CYAN))
    wrapped = "\n".join(data[i:i + 16] for i in range(0, len(data), 16))
    decoded = ip.load(wrapped, "image/png")
    assert decoded is not None and decoded.cells(4, 4) == [[Cell("▀", CYAN, CYAN)] * 2]


def test_probe_reads_only_the_header() -> None:
    data = encoded(Image.new("RGB", (64, 32), RED))
    info = ip.probe(data, "image/png")
    assert info.master is None and (info.width, info.height) == (64, 32)
    assert info.caption().startswith("[image image/png 64×32, ")
    assert ip.cached(data, "image/png") is None


def test_an_optional_chunk_with_a_bad_checksum_is_skipped_as_browsers_do() -> None:
    """server-everything's tiny image has a broken ``iCCP`` checksum; Pillow alone refuses it."""
    raw = base64.b64decode(encoded(Image.new("RGB", (4, 2), GREEN)))
    text = png_chunk(b"tEXt", b"Comment\0hello")
    broken = text[:-4] + bytes(4)  # the checksum zeroed
    png = raw[:33] + broken + raw[33:]  # after the IHDR
    with pytest.raises(OSError, match="cannot identify"):
        Image.open(io.BytesIO(png)).load()
    decoded = ip.load(base64.b64encode(png).decode(), "image/png")
    assert decoded is not None and decoded.problem is None
    assert decoded.cells(10, 10) == [[Cell("▀", GREEN, GREEN)] * 4]
    # A required chunk is never dropped: a broken IHDR stays a refused image.
    bad_header = raw[:29] + bytes(4) + raw[33:]
    refused = ip.load(base64.b64encode(bad_header).decode(), "image/png")
    assert refused is not None and refused.problem == "not a readable png image"


def test_a_decoder_that_raises_leaves_a_reason_not_a_panel_waiting_for_ever(monkeypatch: pytest.MonkeyPatch) -> None:
    """The thread's decode (``allow_slow``) remembers what went wrong: the panel repaints from the
    cache and shows the reason instead of "decoding…"."""
    ip.clear_cache()

    def broken(*_args: object, **_kwargs: object) -> None:
        raise MemoryError

    monkeypatch.setattr(ip, "_decode", broken)
    data = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 64).decode("ascii")
    decoded = ip.load(data, "image/png", allow_slow=True)
    assert decoded is not None and decoded.problem == "cannot decode (MemoryError)"
    assert ip.cached(data, "image/png") is decoded
    assert "cannot decode (MemoryError)" in decoded.caption()
