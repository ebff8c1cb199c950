"""Ctrl+V pastes the clipboard's image as an attachment of the message (pi's
``app.clipboard.pasteImage``): shown on the editor, removable with Backspace, sent as an image
block; no image, no tool or a timeout is a one-line notice and nothing is sent.

The clipboard here is ``read_clipboard_image`` itself with a fake tool runner (the real xclip
under Xvfb is the tmux test's, tests/modes/interactive/test_image_paste_tmux.py)."""

from __future__ import annotations

import base64
import io
from typing import Any

from pi_tui.core.provider import ModelInfo
from pi_tui.modes.interactive.clipboard_image import (
    NO_TOOL,
    ClipboardTimeout,
    read_clipboard_image,
)
from pi_tui.modes.interactive.widgets.chat_items import Notice
from pi_tui.testing.scripted import ScriptedProvider
from tests.modes.interactive.conftest import ready, settle, wait_for

SIZE = (120, 40)


def png(width: int, height: int) -> bytes:
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (width, height), (200, 30, 30)).save(buffer, format="PNG")
    return buffer.getvalue()


class FakeXclip:
    """What ``xclip -selection clipboard ...`` would print, recorded call by call."""

    def __init__(self, targets: list[str], data: dict[str, bytes] | None = None, *, hang: bool = False) -> None:
        self.targets, self.data, self.hang = targets, data or {}, hang
        self.calls: list[list[str]] = []

    def __call__(self, args: list[str], timeout: float) -> bytes | None:
        self.calls.append(args)
        if self.hang:
            raise ClipboardTimeout(f"xclip did not answer within {timeout:g} s")
        kind = args[args.index("-t") + 1]
        if kind == "TARGETS":
            return "\n".join(self.targets).encode()
        return self.data.get(kind)


def x11_reader(fake: FakeXclip, *, tools: tuple[str, ...] = ("xclip",)) -> Any:
    return lambda: read_clipboard_image(env={"DISPLAY": ":42"}, platform="linux",
                                        which=lambda name: f"/usr/bin/{name}" if name in tools else None, run=fake)


def screen_text(app: Any) -> str:
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


def notices(app: Any) -> list[str]:
    return [str(n.text) for n in app.screen.query(Notice)]


def sent_user_content(provider: ScriptedProvider) -> list[dict[str, Any]]:
    """The last user message of the last request the model received."""
    users = [m for m in provider.requests[-1].messages if m.get("role") == "user"]
    content = users[-1]["content"]
    assert isinstance(content, list)
    return content


VISION = ModelInfo(provider="scripted", id="vision-model", input=("text", "image"))


async def test_a_pasted_png_is_shown_on_the_editor_and_sent_as_an_image_block(make_app):
    provider = ScriptedProvider([{"text": "I see a red square."}])
    app, _ = make_app(provider=provider, model=VISION)
    image = png(64, 48)
    fake = FakeXclip(["TARGETS", "text/plain", "image/jpeg", "image/png"], {"image/png": image})
    app.clipboard_reader = x11_reader(fake)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await pilot.press("ctrl+v")
        await wait_for(pilot, lambda: bool(app.chat.editor.attachments))
        await pilot.pause()
        assert fake.calls[1] == ["/usr/bin/xclip", "-selection", "clipboard", "-t", "image/png", "-o"]  # png preferred
        text = screen_text(app)
        assert "[image 1: png 64×48, 1 KB]" in text and "backspace at the start removes an image" in text
        await pilot.press(*"what is this?", "enter")
        await settle(app, pilot)
        sent = sent_user_content(provider)
        assert sent[0] == {"type": "text", "text": "what is this?"}
        assert sent[1]["type"] == "image" and sent[1]["mimeType"] == "image/png"
        assert base64.b64decode(sent[1]["data"]) == image  # small enough: sent unchanged
        text = screen_text(app)
        assert "I see a red square." in text and "[1 image]" in text
        assert "[image 1" not in text  # the attachment went with the message
        assert not any("does not take images" in n for n in notices(app))


async def test_a_model_without_image_input_is_named_when_an_image_is_attached(make_app):
    app, _ = make_app([])  # the scripted model takes text only
    app.clipboard_reader = x11_reader(FakeXclip(["image/png"], {"image/png": png(6, 6)}))
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await pilot.press("ctrl+v")
        await wait_for(pilot, lambda: any("does not take images" in n for n in notices(app)))
        assert "scripted/scripted-model does not take images: it will be told an image was omitted." in notices(app)
        assert len(app.chat.editor.attachments) == 1  # still attached: another model may take it


async def test_a_large_image_is_fitted_like_the_read_tools_images(make_app):
    provider = ScriptedProvider([{"text": "ok"}])
    app, _ = make_app(provider=provider)
    app.clipboard_reader = x11_reader(FakeXclip(["image/png"], {"image/png": png(3000, 1500)}))
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await pilot.press("ctrl+v")
        await wait_for(pilot, lambda: bool(app.chat.editor.attachments))
        await pilot.pause()
        assert "[image 1: png 2000×1000, from 3000×1500," in screen_text(app)
        await pilot.press(*"look", "enter")
        await settle(app, pilot)
        from PIL import Image

        block = sent_user_content(provider)[1]
        with Image.open(io.BytesIO(base64.b64decode(block["data"]))) as sent:
            assert sent.size == (2000, 1000)


async def test_backspace_at_the_start_removes_the_attachment_and_nothing_is_sent(make_app):
    provider = ScriptedProvider([{"text": "text only"}])
    app, _ = make_app(provider=provider)
    app.clipboard_reader = x11_reader(FakeXclip(["image/png"], {"image/png": png(10, 10)}))
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await pilot.press("ctrl+v")
        await wait_for(pilot, lambda: len(app.chat.editor.attachments) == 1)
        await pilot.press("ctrl+v")
        await wait_for(pilot, lambda: len(app.chat.editor.attachments) == 2)
        await pilot.pause()
        assert "[image 1: png 10×10, 1 KB]  [image 2: png 10×10, 1 KB]" in screen_text(app)
        await pilot.press(*"hi", "backspace")  # an ordinary backspace: deletes the "i"
        assert app.chat.editor.text == "h" and len(app.chat.editor.attachments) == 2
        await pilot.press("home", "backspace")
        await pilot.pause()
        text = screen_text(app)
        assert "[image 1: png 10×10, 1 KB]" in text and "image 2" not in text
        await pilot.press("backspace")
        await pilot.pause()
        assert "image 1" not in screen_text(app) and app.chat.editor.text == "h"
        await pilot.press("end", "enter")
        await settle(app, pilot)
        assert sent_user_content(provider) == [{"type": "text", "text": "h"}]


async def _paste_and_read_notice(make_app, reader: Any) -> tuple[Any, list[str], str]:
    provider = ScriptedProvider([])
    app, _ = make_app(provider=provider)
    app.clipboard_reader = reader
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        before = len(notices(app))
        await pilot.press("ctrl+v")
        await wait_for(pilot, lambda: len(notices(app)) > before)
        await pilot.pause()
        assert app.chat.editor.attachments == [] and app.chat.editor.border_title is None
        return provider, notices(app)[before:], screen_text(app)


async def test_text_in_the_clipboard_is_a_one_line_notice(make_app):
    fake = FakeXclip(["TARGETS", "UTF8_STRING", "text/plain"])
    provider, new, text = await _paste_and_read_notice(make_app, x11_reader(fake))
    assert new == ["No image in the clipboard (it holds UTF8_STRING, text/plain); nothing attached."]
    assert "No image in the clipboard" in text and provider.requests == []
    assert len(fake.calls) == 1  # listed, and nothing read


async def test_no_clipboard_tool_is_a_one_line_notice(make_app):
    provider, new, _ = await _paste_and_read_notice(make_app, x11_reader(FakeXclip([]), tools=()))
    assert new == [f"{NO_TOOL}; nothing attached."] and provider.requests == []


async def test_a_clipboard_that_does_not_answer_is_a_one_line_notice(make_app):
    fake = FakeXclip([], hang=True)
    provider, new, _ = await _paste_and_read_notice(make_app, x11_reader(fake))
    assert new == ["The clipboard did not answer: xclip did not answer within 1 s; nothing attached."]
    assert provider.requests == []


async def test_an_image_waits_while_the_agent_runs(make_app):
    from tests.modes.interactive.conftest import GatedProvider

    gated = GatedProvider([{"text": "first"}, {"text": "second"}])
    app, _ = make_app(provider=gated)
    app.clipboard_reader = x11_reader(FakeXclip(["image/png"], {"image/png": png(8, 8)}))
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await pilot.press(*"start", "enter")
        await wait_for(pilot, gated.waiting.is_set)
        await pilot.press("ctrl+v")
        await wait_for(pilot, lambda: bool(app.chat.editor.attachments))
        await pilot.press(*"and this", "enter")
        await wait_for(pilot, lambda: any("Images go with a new prompt" in n for n in notices(app)))
        assert app.chat.editor.text == "and this" and len(app.chat.editor.attachments) == 1
        gated.gate.set()
        await settle(app, pilot)
        await pilot.press("enter")
        await settle(app, pilot)
        content = [m for m in gated.inner.requests[-1].messages if m.get("role") == "user"][-1]["content"]
        assert content[0] == {"type": "text", "text": "and this"} and content[1]["type"] == "image"


async def test_a_message_with_an_image_sent_while_the_session_loads_goes_once_it_is_there(project, agent_dir):
    import threading

    from pi_tui.modes.interactive.app import LoadedSession, PiApp
    from pi_tui.sdk import create_agent_session

    release = threading.Event()
    provider = ScriptedProvider([{"text": "seen"}])

    def loader() -> LoadedSession:
        release.wait(10)
        return LoadedSession(create_agent_session(cwd=project, agent_dir=agent_dir, provider=provider,
                                                  settings={}, load_extensions=False))

    app = PiApp(None, cwd=project, agent_dir=agent_dir, session_loader=loader)
    app.clipboard_reader = x11_reader(FakeXclip(["image/png"], {"image/png": png(5, 5)}))
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.first_frame_at is not None)
        await pilot.press("ctrl+v")
        await wait_for(pilot, lambda: bool(app.chat.editor.attachments))
        await pilot.press(*"early", "enter")  # the session is still loading
        await pilot.pause()
        assert app.chat.editor.text == "" and provider.requests == []
        release.set()
        await wait_for(pilot, lambda: bool(provider.requests))
        await settle(app, pilot)
        content = sent_user_content(provider)
        assert content[0] == {"type": "text", "text": "early"} and content[1]["type"] == "image"


def test_command_line_at_files_are_inlined_and_a_missing_one_is_an_error(tmp_path):
    import argparse

    import pytest

    from pi_tui.core.errors import ConfigError
    from pi_tui.modes.interactive import initial_input

    (tmp_path / "shot.png").write_bytes(png(4, 4))
    (tmp_path / "notes.txt").write_text("remember this")
    args = argparse.Namespace(messages=[f"@{tmp_path / 'shot.png'}", f"@{tmp_path / 'notes.txt'}", "compare"])
    messages, images = initial_input(args)
    assert len(messages) == 1 and messages[0].endswith("compare") and "remember this" in messages[0]
    assert [image["mimeType"] for image in images] == ["image/png"]
    assert initial_input(argparse.Namespace(messages=["plain", "@"])) == (["plain", "@"], [])
    with pytest.raises(ConfigError, match="Cannot read @"):
        initial_input(argparse.Namespace(messages=[f"@{tmp_path / 'gone.png'}"]))


def test_a_paste_that_is_only_an_image_files_path_names_that_file(tmp_path):
    from pi_tui.modes.interactive.image_paste import pasted_image_path

    shot = tmp_path / "my shot.png"
    shot.write_bytes(png(3, 3))
    (tmp_path / "fake.png").write_text("not an image")
    (tmp_path / "notes.txt").write_text("text")
    for pasted in (f"'{shot}'", f'"{shot}"', str(shot).replace(" ", "\\ "), f"file://{str(shot).replace(' ', '%20')}",
                   f"  {str(shot).replace(' ', chr(92) + ' ')}\n", "my\\ shot.png"):
        assert pasted_image_path(pasted, tmp_path) == shot, pasted
    for pasted in ("fake.png", "notes.txt", "gone.png", f"look at {shot}", f"{shot}\n{shot}", ""):
        assert pasted_image_path(pasted, tmp_path) is None, pasted


async def test_a_dragged_image_file_is_attached_and_other_pastes_are_typed(make_app, project):
    from textual import events

    provider = ScriptedProvider([{"text": "a tiny image"}])
    app, _ = make_app(provider=provider)
    shot = project / "drop.png"
    image = png(7, 5)
    shot.write_bytes(image)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        editor = app.chat.editor
        app.post_message(events.Paste("plain words "))
        await pilot.pause()
        assert editor.text == "plain words " and editor.attachments == []
        app.post_message(events.Paste(f"'{shot}'"))  # what a terminal sends for a dropped file
        await wait_for(pilot, lambda: bool(editor.attachments))
        await pilot.pause()
        assert editor.text == "plain words " and "[image 1: png 7×5, 1 KB]" in screen_text(app)
        await pilot.press("enter")
        await settle(app, pilot)
        content = sent_user_content(provider)
        assert content[0] == {"type": "text", "text": "plain words"}
        assert base64.b64decode(content[1]["data"]) == image
