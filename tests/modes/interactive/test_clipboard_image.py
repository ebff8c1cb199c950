"""Which tool reads the clipboard, with which arguments, and what each answer means (fake tool
runner; the real xclip is the tmux test's)."""

from __future__ import annotations

import io
import sys

from pi_tui.modes.interactive.clipboard_image import (
    NO_DISPLAY,
    ClipboardTimeout,
    preferred_image_type,
    read_clipboard_image,
    run_tool,
)


class Tools:
    def __init__(self, answers: dict[tuple[str, ...], bytes | None]) -> None:
        self.answers, self.calls = answers, []

    def __call__(self, args: list[str], timeout: float) -> bytes | None:
        self.calls.append((tuple(args), timeout))
        return self.answers.get(tuple(args))


def everywhere(name: str) -> str:
    return f"/bin/{name}"


def test_png_is_preferred_then_jpeg_webp_gif_then_any_image():
    assert preferred_image_type(["text/plain", "image/gif", "image/jpeg", "image/png"]) == "image/png"
    assert preferred_image_type(["image/webp", "image/jpeg;q=1"]) == "image/jpeg;q=1"
    assert preferred_image_type(["image/bmp", "text/plain"]) == "image/bmp"
    assert preferred_image_type(["text/plain", "TARGETS"]) is None


def test_wayland_lists_types_then_reads_the_chosen_one():
    tools = Tools({("/bin/wl-paste", "--list-types"): b"text/plain\nimage/png\n",
                   ("/bin/wl-paste", "--type", "image/png", "--no-newline"): b"\x89PNG-bytes"})
    read = read_clipboard_image(env={"WAYLAND_DISPLAY": "wayland-0"}, platform="linux", which=everywhere, run=tools)
    assert read.image is not None and (read.image.data, read.image.mime_type, read.image.tool) == (
        b"\x89PNG-bytes", "image/png", "wl-paste")
    assert [timeout for _, timeout in tools.calls] == [1.0, 3.0]


def test_wayland_without_an_image_falls_back_to_xclip():
    tools = Tools({("/bin/wl-paste", "--list-types"): b"text/plain\n",
                   ("/bin/xclip", "-selection", "clipboard", "-t", "TARGETS", "-o"): b"image/jpeg\n",
                   ("/bin/xclip", "-selection", "clipboard", "-t", "image/jpeg", "-o"): b"\xff\xd8\xffjpeg"})
    read = read_clipboard_image(env={"WAYLAND_DISPLAY": "w"}, platform="linux", which=everywhere, run=tools)
    assert read.image is not None and (read.image.mime_type, read.image.tool) == ("image/jpeg", "xclip")


def test_xclip_without_targets_tries_each_image_type():
    tools = Tools({("/bin/xclip", "-selection", "clipboard", "-t", "image/webp", "-o"): b"RIFF....WEBP"})
    read = read_clipboard_image(env={"DISPLAY": ":0"}, platform="linux", which=everywhere, run=tools)
    assert read.image is not None and read.image.mime_type == "image/webp"
    assert [args[4] for args, _ in tools.calls] == ["TARGETS", "image/png", "image/jpeg", "image/webp"]


def test_no_display_no_image_and_timeouts_are_reasons():
    assert read_clipboard_image(env={}, platform="linux", which=everywhere, run=Tools({})).problem == NO_DISPLAY
    empty = read_clipboard_image(env={"DISPLAY": ":0"}, platform="linux", which=everywhere, run=Tools({}))
    assert empty.image is None and empty.problem == "No image in the clipboard"

    def hangs(args: list[str], timeout: float) -> bytes | None:
        raise ClipboardTimeout(f"{args[0]} did not answer within {timeout:g} s")

    late = read_clipboard_image(env={"DISPLAY": ":0"}, platform="linux", which=everywhere, run=hangs)
    assert late.problem == "The clipboard did not answer: /bin/xclip did not answer within 1 s"


def test_a_bmp_is_converted_to_png():
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (3, 2), (0, 0, 255)).save(buffer, format="BMP")
    tools = Tools({("/bin/xclip", "-selection", "clipboard", "-t", "TARGETS", "-o"): b"image/bmp\n",
                   ("/bin/xclip", "-selection", "clipboard", "-t", "image/bmp", "-o"): buffer.getvalue()})
    read = read_clipboard_image(env={"DISPLAY": ":0"}, platform="linux", which=everywhere, run=tools)
    assert read.image is not None and read.image.mime_type == "image/png"
    assert read.image.data.startswith(b"\x89PNG")


def test_macos_uses_pngpaste_else_osascript():
    tools = Tools({("/bin/pngpaste", "-"): b"\x89PNGdata"})
    read = read_clipboard_image(env={}, platform="darwin", which=everywhere, run=tools)
    assert read.image is not None and read.image.tool == "pngpaste"
    script = Tools({("/bin/osascript", "-e", "the clipboard as «class PNGf»"): "«data PNGf89504E47»\n".encode()})
    read = read_clipboard_image(env={}, platform="darwin", which=lambda n: None if n == "pngpaste" else f"/bin/{n}",
                                run=script)
    assert read.image is not None and read.image.data == b"\x89PNG" and read.image.tool == "osascript"


def test_run_tool_times_out_and_kills_a_tool_that_never_answers():
    import time

    started = time.monotonic()
    try:
        run_tool([sys.executable, "-c", "import time; time.sleep(30)"], 0.5)
    except ClipboardTimeout as err:
        assert "did not answer within 0.5 s" in str(err)
    else:  # pragma: no cover
        raise AssertionError("no timeout")
    assert time.monotonic() - started < 5
    assert run_tool([sys.executable, "-c", "import sys; sys.exit(1)"], 5) is None
    assert run_tool(["/nonexistent/tool"], 5) is None
    assert run_tool([sys.executable, "-c", "print('x', end='')"], 5) == b"x"
