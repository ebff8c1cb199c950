"""Image blocks in tool panels, in the real app on the scripted provider: ``read`` on a PNG shows a
half-block preview in the image's colours under its caption; ``terminal.showImages: false`` keeps
only the caption; a big image is decoded in a thread while the panel says so."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from PIL import Image
from textual.geometry import Region

from pi_tui.modes.interactive import image_preview
from pi_tui.modes.interactive.widgets.editor import PromptEditor
from pi_tui.modes.interactive.widgets.tool_call import ToolCallPanel
from tests.modes.interactive.conftest import ready, settle, wait_for

SIZE = (120, 40)
RED, GREEN, BLUE, YELLOW = (255, 0, 0), (0, 255, 0), (0, 0, 255), (255, 255, 0)


def quadrants(path: Path) -> None:
    """16×8 pixels: red | green over blue | yellow."""
    image = Image.new("RGB", (16, 8))
    for x in range(16):
        for y in range(8):
            image.putpixel((x, y), (RED if x < 8 else GREEN) if y < 4 else (BLUE if x < 8 else YELLOW))
    image.save(path)


def cells(panel: ToolCallPanel) -> list[list[tuple[str, Any, Any]]]:
    """The panel as painted: each line's characters with their foreground and background RGB."""
    strips = panel.render_lines(Region(0, 0, *panel.outer_size))
    lines = []
    for strip in strips:
        line = []
        for segment in strip:
            style = segment.style
            fg = style.color.triplet if style and style.color and style.color.triplet else None
            bg = style.bgcolor.triplet if style and style.bgcolor and style.bgcolor.triplet else None
            line.extend((char, tuple(fg) if fg else None, tuple(bg) if bg else None) for char in segment.text)
        lines.append(line)
    return lines


def half_blocks(panel: ToolCallPanel) -> list[list[tuple[Any, Any]]]:
    return [[(fg, bg) for char, fg, bg in line if char == "▀"] for line in cells(panel)
            if any(char == "▀" for char, _, _ in line)]


async def run_read(make_app: Any, path: str, *, settings: dict[str, Any] | None = None) -> tuple[Any, Any, Any]:
    app, session = make_app([{"tool_calls": [{"id": "r1", "name": "read", "arguments": {"path": path}}]},
                             {"text": "A picture."}], settings=settings)
    return app, session, app.run_test(size=SIZE)


async def prompt_for_panel(app: Any, pilot: Any, text: str) -> ToolCallPanel:
    """Send ``text`` once the app is ready and wait for the turn: the read's tool panel."""
    await ready(pilot)
    app.screen.query_one(PromptEditor).insert(text)
    await pilot.press("enter")
    await settle(app, pilot)
    return app.screen.query_one(ToolCallPanel)


async def test_read_on_a_png_shows_the_image_as_half_blocks_in_its_colours(make_app: Any, project: Path) -> None:
    image_preview.clear_cache()
    quadrants(project / "quad.png")
    app, session, running = await run_read(make_app, "quad.png")
    async with running as pilot:
        panel = await prompt_for_panel(app, pilot, "look at quad.png")
        await wait_for(pilot, lambda: len(half_blocks(panel)) == 4)
        text = str(panel.render())
        assert "Read image file [image/png]" in text
        assert "[image image/png 16×8, " in text
        assert "[image image/png]" not in text  # the bare placeholder is gone
        rows = half_blocks(panel)
        assert rows[0] == rows[1] == [(RED, RED)] * 8 + [(GREEN, GREEN)] * 8
        assert rows[2] == rows[3] == [(BLUE, BLUE)] * 8 + [(YELLOW, YELLOW)] * 8
        # A repaint (ctrl+o expands every panel) draws from the cache: nothing is decoded again.
        before = dict(image_preview._cache)
        await pilot.press("ctrl+o")
        await pilot.pause()
        assert dict(image_preview._cache) == before and len(half_blocks(panel)) == 4
        # The model got the image block itself.
        result = next(m for m in session.messages if m["role"] == "toolResult")
        assert [b["type"] for b in result["content"]] == ["text", "image"]


async def test_show_images_off_keeps_only_the_caption(make_app: Any, project: Path) -> None:
    quadrants(project / "quad.png")
    app, _session, running = await run_read(make_app, "quad.png", settings={"terminal": {"showImages": False}})
    async with running as pilot:
        panel = await prompt_for_panel(app, pilot, "look")
        await wait_for(pilot, lambda: "[image image/png 16×8, " in str(panel.render()))
        assert half_blocks(panel) == []
        assert "▀" not in str(panel.render())


async def test_a_big_image_is_decoded_in_a_thread_then_shown(make_app: Any, project: Path) -> None:
    image_preview.clear_cache()
    noise = Image.frombytes("RGB", (900, 600), random.Random(3).randbytes(900 * 600 * 3))
    noise.paste((0, 200, 0), (0, 0, 900, 600))  # green, with a noisy band so the PNG stays big
    noise.paste(Image.frombytes("RGB", (900, 100), random.Random(4).randbytes(900 * 100 * 3)), (0, 500))
    noise.save(project / "big.png")
    assert (project / "big.png").stat().st_size > image_preview.SYNC_DATA_BYTES
    app, _session, running = await run_read(make_app, "big.png")
    async with running as pilot:
        await ready(pilot)
        app.screen.query_one(PromptEditor).insert("look")
        await pilot.press("enter")
        await wait_for(pilot, lambda: bool(app.screen.query(ToolCallPanel))
                       and app.screen.query_one(ToolCallPanel).state.status == "ok")
        panel = app.screen.query_one(ToolCallPanel)
        await wait_for(pilot, lambda: len(half_blocks(panel)) >= 8)
        await settle(app, pilot)
        assert "[image image/png 900×600, " in str(panel.render())
        rows = half_blocks(panel)
        # 900×600 into 60 columns × 12 rows (24 pixels): 36×24 pixels, 36 cells × 12 rows.
        assert len(rows) == 12 and {len(row) for row in rows} == {36}
        assert set(rows[0]) == {((0, 200, 0), (0, 200, 0))}  # the green top
        assert len(set(rows[-1])) > 10  # the noisy band at the bottom
        assert "decoding…" not in str(panel.render())


async def test_settings_turns_previews_off_and_the_panels_repaint(make_app: Any, project: Path) -> None:
    from textual.widgets import Switch

    from pi_tui.modes.interactive.screens.settings import SettingsScreen

    quadrants(project / "quad.png")
    app, session, running = await run_read(make_app, "quad.png")
    async with running as pilot:
        panel = await prompt_for_panel(app, pilot, "look")
        await wait_for(pilot, lambda: len(half_blocks(panel)) == 4)
        app.screen.query_one(PromptEditor).insert("/settings")
        await pilot.press("escape")  # the completion menu
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, SettingsScreen))
        switch = app.screen.query_one("#setting-show_images", Switch)
        assert switch.value is True
        switch.value = False
        await pilot.pause()
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, SettingsScreen))
        await wait_for(pilot, lambda: half_blocks(panel) == [])
        assert session.settings.get("terminal.showImages") is False
        assert "[image image/png 16×8, " in str(panel.render())


async def test_a_big_image_in_history_is_decoded_once_the_panel_is_mounted(make_app: Any, project: Path) -> None:
    """Reopening the conversation builds the panels before they are mounted: the thread starts on
    mount, and the panel shows the preview when it is done."""
    image_preview.clear_cache()
    Image.frombytes("RGB", (700, 700), random.Random(5).randbytes(700 * 700 * 3)).save(project / "noise.png")
    app, session, running = await run_read(make_app, "noise.png")
    async with running as pilot:
        await ready(pilot)
        app.screen.query_one(PromptEditor).insert("look")
        await pilot.press("enter")
        await settle(app, pilot)
        await wait_for(pilot, lambda: len(half_blocks(app.screen.query_one(ToolCallPanel))) == 12)
        image_preview.clear_cache()
        await app.screen.conversation.load_history(list(session.messages))
        await pilot.pause()
        panel = app.screen.query_one(ToolCallPanel)
        await wait_for(pilot, lambda: len(half_blocks(panel)) == 12)
        assert {len(row) for row in half_blocks(panel)} == {24}  # 700×700 in 24 pixels: 24 cells × 12 rows


async def test_a_wide_image_fits_a_narrow_panel(make_app: Any, project: Path) -> None:
    Image.new("RGB", (200, 20), GREEN).save(project / "wide.png")
    app, _session = make_app([{"tool_calls": [{"id": "r1", "name": "read", "arguments": {"path": "wide.png"}}]},
                              {"text": "wide"}])
    async with app.run_test(size=(44, 30)) as pilot:
        panel = await prompt_for_panel(app, pilot, "look")
        await wait_for(pilot, lambda: bool(half_blocks(panel)))
        width = panel.content_size.width
        assert width < 44
        rows = half_blocks(panel)
        # 200×20 scaled to the panel's width w: w×(20·w/200) pixels, one row of cells per 2 pixels.
        assert {len(row) for row in rows} == {width}
        pixels_high = max(1, round(20 * width / 200))
        assert len(rows) == (pixels_high + 1) // 2
