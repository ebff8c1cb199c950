from __future__ import annotations

import base64
import io
import os
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image

from pi_tui.core.errors import ToolError
from pi_tui.core.tool import ToolContext
from pi_tui.tools.read import IMAGE_OMITTED_NOTE, NO_VISION_NOTE, ReadTool
from pi_tui.tools.read_window import read_line_window
from pi_tui.tools.truncate import truncate_head

from .helpers import text


async def read(ctx: ToolContext, **args):
    return await ReadTool().execute("call", args, ctx)


def lines_file(ctx: ToolContext, name: str, count: int) -> Path:
    path = ctx.cwd / name
    path.write_text("\n".join(f"line {i}" for i in range(1, count + 1)))
    return path


async def test_2500_lines_stop_at_2000_with_pi_notice(ctx):
    lines_file(ctx, "big.txt", 2500)
    result = await read(ctx, path="big.txt")
    assert text(result).endswith("line 2000\n\n[Showing lines 1-2000 of 2500. Use offset=2001 to continue.]")
    truncation = result.details["truncation"]
    assert (truncation["truncatedBy"], truncation["totalLines"], truncation["outputLines"]) == ("lines", 2500, 2000)


async def test_byte_limit_notice(ctx):
    (ctx.cwd / "wide.txt").write_text("\n".join("x" * 100 for _ in range(1000)))
    result = await read(ctx, path="wide.txt")
    # 100 + 505 * 101 = 51,105 bytes fit; a 507th line would not
    assert text(result).endswith("\n\n[Showing lines 1-506 of 1000 (50.0KB limit). Use offset=507 to continue.]")
    assert result.details["truncation"]["truncatedBy"] == "bytes"


async def test_offset_and_limit(ctx):
    lines_file(ctx, "f.txt", 100)
    assert text(await read(ctx, path="f.txt", offset=51)).startswith("line 51\n")
    limited = text(await read(ctx, path="f.txt", limit=10))
    assert limited == "\n".join(f"line {i}" for i in range(1, 11)) + "\n\n[90 more lines in file. Use offset=11 to continue.]"
    window = text(await read(ctx, path="f.txt", offset=41, limit=20))
    assert window.startswith("line 41\n")
    assert window.endswith("line 60\n\n[40 more lines in file. Use offset=61 to continue.]")
    assert text(await read(ctx, path="f.txt", offset=91, limit=20)).endswith("line 100")


async def test_offset_beyond_end(ctx):
    lines_file(ctx, "f.txt", 5)
    with pytest.raises(ToolError, match=r"^Offset 7 is beyond end of file \(5 lines total\)$"):
        await read(ctx, path="f.txt", offset=7)


async def test_missing_file_names_the_path(ctx):
    with pytest.raises(ToolError, match=r"ENOENT: no such file or directory, access '.*nope\.txt'"):
        await read(ctx, path="nope.txt")


async def test_directory_is_refused_clearly(ctx):
    (ctx.cwd / "sub").mkdir()
    with pytest.raises(ToolError, match=r"EISDIR.*sub"):
        await read(ctx, path="sub")


async def test_crlf_and_bom_files_are_returned_as_they_are(ctx):
    (ctx.cwd / "w.txt").write_bytes(b"\xef\xbb\xbfone\r\ntwo\r\n")
    assert text(await read(ctx, path="w.txt")) == "\ufeffone\r\ntwo\r\n"


async def test_unicode_and_spaced_paths(ctx):
    (ctx.cwd / "my notes ü.md").write_text("hello")
    assert text(await read(ctx, path="@my\u00a0notes ü.md")) == "hello"
    assert text(await read(ctx, path=str(ctx.cwd / "my notes ü.md"))) == "hello"


async def test_huge_single_line_gives_the_sed_hint(ctx):
    (ctx.cwd / "one.txt").write_text("y" * 200_000 + "\nshort")
    result = await read(ctx, path="one.txt")
    assert text(result) == "[Line 1 is 195.3KB, exceeds 50.0KB limit. Use bash: sed -n '1p' one.txt | head -c 51200]"
    assert result.details["truncation"]["firstLineExceedsLimit"] is True
    assert text(await read(ctx, path="one.txt", offset=2)) == "short"


async def test_binary_non_image_is_refused(ctx):
    (ctx.cwd / "blob.bin").write_bytes(b"\x7fELF\x02\x01\x00\x00" + bytes(range(256)))
    with pytest.raises(ToolError, match=r"Cannot read blob\.bin: it is a binary file"):
        await read(ctx, path="blob.bin")


def png_bytes(width: int, height: int, mode: str = "RGB") -> bytes:
    buffer = io.BytesIO()
    Image.new(mode, (width, height), color=(10, 120, 200) if mode == "RGB" else 0).save(buffer, format="PNG")
    return buffer.getvalue()


async def test_png_detected_by_magic_bytes_not_extension(ctx):
    (ctx.cwd / "picture.dat").write_bytes(png_bytes(10, 8))
    result = await read(ctx, path="picture.dat")
    assert result.content[0] == {"type": "text", "text": "Read image file [image/png]"}
    assert result.content[1]["type"] == "image"
    assert result.content[1]["mimeType"] == "image/png"
    assert base64.b64decode(result.content[1]["data"]) == (ctx.cwd / "picture.dat").read_bytes()
    (ctx.cwd / "fake.png").write_text("just text")
    assert text(await read(ctx, path="fake.png")) == "just text"


async def test_large_image_is_resized_with_dimension_note(ctx):
    (ctx.cwd / "wide.png").write_bytes(png_bytes(4000, 1000))
    result = await read(ctx, path="wide.png")
    assert text(result) == (
        "Read image file [image/png]\n[Image: original 4000x1000, displayed at 2000x500. "
        "Multiply coordinates by 2.00 to map to original image.]"
    )
    with Image.open(io.BytesIO(base64.b64decode(result.content[1]["data"]))) as image:
        assert image.size == (2000, 500)


async def test_too_heavy_image_is_reencoded_as_jpeg(ctx):
    noise = Image.frombytes("RGB", (1400, 1400), os.urandom(1400 * 1400 * 3))
    buffer = io.BytesIO()
    noise.save(buffer, format="PNG")
    assert len(buffer.getvalue()) * 4 / 3 > 4_718_592  # over the inline limit as PNG
    (ctx.cwd / "noise.png").write_bytes(buffer.getvalue())
    result = await read(ctx, path="noise.png")
    assert result.content[1]["mimeType"] == "image/jpeg"
    assert len(result.content[1]["data"]) < 4_718_592
    assert text(result).endswith("displayed at 1400x1400. Multiply coordinates by 1.00 to map to original image.]")


async def test_undecodable_image_gives_text_only_note(ctx):
    (ctx.cwd / "broken.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"garbage" * 10)
    result = await read(ctx, path="broken.png")
    assert [b["type"] for b in result.content] == ["text"]
    assert text(result) == f"Read image file [image/png]\n{IMAGE_OMITTED_NOTE}"


async def test_model_without_vision_gets_the_extra_line(tmp_path):
    ctx = ToolContext(cwd=tmp_path, model_supports_images=False)
    (tmp_path / "p.gif").write_bytes(b"GIF89a" + b"\x01\x00\x01\x00\x00\x00\x00;")
    result = await read(ctx, path="p.gif")
    assert text(result).endswith("\n" + NO_VISION_NOTE)


async def test_auto_resize_off_sends_the_original(tmp_path):
    ctx = ToolContext(cwd=tmp_path, settings={"images": {"autoResize": False}})
    data = png_bytes(2500, 10)
    (tmp_path / "p.png").write_bytes(data)
    result = await read(ctx, path="p.png")
    assert base64.b64decode(result.content[1]["data"]) == data


_line = st.text(alphabet=st.sampled_from(["a", "é", "€", " "]), max_size=40)


@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(_line, max_size=40), st.integers(0, 45), st.one_of(st.none(), st.integers(0, 45)),
       st.integers(1, 12), st.integers(1, 200))
def test_window_equals_truncate_head_of_the_selection(tmp_path, lines, start, limit, max_lines, max_bytes):
    content = "\n".join(lines)
    path = tmp_path / "w.txt"
    path.write_text(content, encoding="utf-8")
    all_lines = content.split("\n")
    if start >= len(all_lines):
        return
    selected = all_lines[start:] if limit is None else all_lines[start : start + limit]
    expected = truncate_head("\n".join(selected), max_lines=max_lines, max_bytes=max_bytes)
    with open(path, "rb") as fh:
        window = read_line_window(fh, offset_index=start, limit=limit, max_lines=max_lines, max_bytes=max_bytes)
    assert window.total_file_lines == len(all_lines)
    got = window.truncation
    assert (got.content, got.truncated, got.truncated_by, got.output_lines, got.total_lines, got.total_bytes,
            got.first_line_exceeds_limit) == (
        expected.content, expected.truncated, expected.truncated_by, expected.output_lines,
        expected.total_lines, expected.total_bytes, expected.first_line_exceeds_limit)


async def test_reading_near_the_end_of_a_big_file_does_not_load_it(ctx):
    path = ctx.cwd / "big.log"
    line = b"0123456789" * 9 + b"\n"  # 91 bytes
    path.write_bytes(line * 200_000)  # 18.2 MB, 200,000 lines
    tracemalloc.start()
    try:
        result = await read(ctx, path="big.log", offset=199_990)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert text(result).startswith("0123456789")
    assert text(result).count("\n") == 11  # lines 199,990..200,001 (the last one empty)
    assert peak < 8 * 1024 * 1024  # a couple of 1 MB chunks, never the 18 MB file


async def test_an_image_file_too_big_to_hold_is_refused_before_reading(ctx):
    """A file with an image's magic bytes is read whole to be resized: a 200 MB (or a sparse
    64 GB) "image" was loaded into memory first."""
    path = ctx.cwd / "huge.png"
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 100)
    os.truncate(path, 200 << 20)
    with pytest.raises(ToolError, match=r"huge\.png: it is an image of 200\.0MB, over the 64\.0MB limit"):
        await ReadTool().execute("c1", {"path": "huge.png"}, ctx)
