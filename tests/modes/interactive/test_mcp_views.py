"""MCP in the TUI, looked at as shown: the footer's server count, the events pane's lines for
connects, failures and reconnects, the ``/mcp`` screen (state, tools with their token cost, last
error, stderr tail, log path; reconnect, enable/disable), the first frame with a server that
never answers, and — against the real server-everything — its prompts as ``/mcp__ev__…``
commands and its elicitation request answered in a dialog."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from textual.widgets import Input, Static

from pi_tui.modes.interactive.screens.mcp import McpScreen
from pi_tui.modes.interactive.screens.mcp_elicit import ElicitScreen
from pi_tui.modes.interactive.widgets.completion import CompletionMenu
from pi_tui.modes.interactive.widgets.editor import PromptEditor
from pi_tui.modes.interactive.widgets.events_pane import EventsPane
from pi_tui.modes.interactive.widgets.footer import StatusFooter
from tests.mcp.conftest import EVERYTHING, hostile, need, write_servers
from tests.modes.interactive.conftest import ready, settle, wait_for

SIZE = (140, 44)


def footer_text(app: Any) -> str:
    return str(app.chat.query_one(StatusFooter).render())


def event_titles(app: Any) -> list[str]:
    return [f"{line.title} | {line.detail}" for line in app.chat.query_one(EventsPane).lines]


def details_text(app: Any) -> str:
    return str(app.screen.query_one("#mcp-details", Static).render())


async def type_text(pilot: Any, text: str) -> None:
    await ready(pilot)
    pilot.app.screen.query_one(PromptEditor).insert(text)
    await pilot.pause()


async def submit(pilot: Any, text: str) -> None:
    await type_text(pilot, text)
    menu = pilot.app.screen.query(CompletionMenu)
    if menu and menu.first().display:  # enter would take the completion
        await pilot.press("escape")
    await pilot.press("enter")


async def test_footer_events_and_the_mcp_screen_follow_the_servers(make_app: Any, agent_dir: Path) -> None:
    write_servers(agent_dir / "mcp.json", {
        "ok": hostile("normal"),
        "mute": hostile("silent", startupTimeoutMs=60_000),
        "gone": {"command": str(agent_dir / "no-such-program")},
    })
    app, session = make_app([])
    started = time.monotonic()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.first_frame_at is not None)
        await ready(pilot)
        # The chat is usable while 'mute' has a minute left to answer initialize.
        assert time.monotonic() - started < 30
        assert session.mcp.connections["mute"].status == "starting"
        await wait_for(pilot, lambda: "MCP 1/3 (1 failed)" in footer_text(app))
        lines = event_titles(app)
        assert "MCP ok connected | 5 tools" in lines
        assert [line for line in lines if line.startswith("MCP gone failed | cannot start")]
        assert not [line for line in lines if "mute" in line]  # starting is no news

        await submit(pilot, "/mcp")
        await wait_for(pilot, lambda: isinstance(app.screen, McpScreen))
        await wait_for(pilot, lambda: "ok — connected" in details_text(app))
        shown = details_text(app)
        assert "tools: 5 · ~" in shown and "mcp__ok__echo  ~" in shown and "mcp__ok__hang  ~" in shown
        log = session.mcp.connections["ok"].log.path
        assert f"log: {log}" in shown
        assert "hostile server (normal) started" in shown  # the stderr tail
        assert "server hostile-normal 1" in shown

        await pilot.press("down")  # mute: still starting, nothing connected
        await wait_for(pilot, lambda: "mute — starting" in details_text(app))
        await pilot.press("down")
        await wait_for(pilot, lambda: "gone — failed" in details_text(app))
        assert "last error: cannot start" in details_text(app)

        await pilot.press("up", "up", "e")  # disable 'ok' for this session
        await wait_for(pilot, lambda: "ok — disabled" in details_text(app))
        await wait_for(pilot, lambda: "MCP 0/3 (1 failed)" in footer_text(app))
        await pilot.press("e")  # and on again
        await wait_for(pilot, lambda: "ok — connected" in details_text(app))
        await pilot.press("r")  # reconnect: stopped and started again
        await wait_for(pilot, lambda: len([line for line in event_titles(app)
                                           if line.startswith("MCP ok connected")]) == 3)
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, McpScreen))
        assert "MCP 1/3 (1 failed)" in footer_text(app)
        lines = event_titles(app)
        assert "MCP ok disabled | for this session" in lines
        assert log.read_text().count("hostile server (normal) started") == 3  # appended, never lost
        await session.mcp.close()


async def test_a_crashed_server_shows_its_reconnect_in_the_events_pane(make_app: Any, agent_dir: Path) -> None:
    write_servers(agent_dir / "mcp.json", {"crashy": hostile("crash", 0)})
    turns = [{"tool_calls": [{"id": "c1", "name": "mcp__crashy__echo", "arguments": {"text": "x"}}]},
             {"text": "done"}]
    app, session = make_app(turns)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "go")
        await wait_for(pilot, lambda: any(line.startswith("MCP crashy reconnecting") for line in event_titles(app)))
        await wait_for(pilot, lambda: len([line for line in event_titles(app)
                                           if line.startswith("MCP crashy connected")]) == 2)
        lines = event_titles(app)
        assert [line for line in lines if line.startswith("MCP crashy failed | the server closed the connection")], lines
        await settle(app, pilot)
        await session.mcp.close()


def test_hotkeys_lists_the_mcp_screens_keys() -> None:
    from pi_tui.modes.interactive.screens.hotkeys import screen_hotkey_rows

    rows = {(row.group, row.description): row.keys for row in screen_hotkey_rows()}
    assert rows[("/mcp", "Reconnect the server")] == "r"
    assert rows[("/mcp", "Enable or disable the server (this session)")] == "e"
    assert rows[("/mcp", "Close")] == "esc, q"


async def test_no_servers_means_no_footer_count_and_mcp_says_where_to_configure(make_app: Any) -> None:
    app, _session = make_app([])
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "/mcp")
        await wait_for(pilot, lambda: "No MCP servers are configured" in str(
            [str(w.render()) for w in app.screen.query("Static")]))
        assert "MCP" not in footer_text(app)
        assert not isinstance(app.screen, McpScreen)


async def test_everything_prompts_are_commands_and_its_elicitation_is_a_dialog(make_app: Any, agent_dir: Path) -> None:
    need(EVERYTHING)
    write_servers(agent_dir / "mcp.json", {"ev": {"command": str(EVERYTHING), "args": ["stdio"]}})
    turns = [
        {"text": "about the weather"},
        {"tool_calls": [{"id": "e1", "name": "mcp__ev__trigger-elicitation-request", "arguments": {}}]},
        {"text": "thanks"},
    ]
    app, session = make_app(turns)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await wait_for(pilot, lambda: session.mcp.connections["ev"].status == "connected", seconds=60)
        await type_text(pilot, "/mcp__ev__")
        menu = app.screen.query_one(CompletionMenu)
        await wait_for(pilot, lambda: menu.display)
        labels = {item.label: item for item in menu.items}
        assert {"/mcp__ev__simple-prompt", "/mcp__ev__args-prompt"} <= set(labels)
        assert labels["/mcp__ev__args-prompt"].hint == "<city> [state]"
        assert labels["/mcp__ev__args-prompt"].description.startswith("A prompt with two arguments")
        await pilot.press("escape")
        editor = app.screen.query_one(PromptEditor)
        editor.clear()

        await submit(pilot, "/mcp__ev__args-prompt")  # the required city is missing: said, nothing sent
        await wait_for(pilot, lambda: "needs city" in " ".join(str(w.render()) for w in app.screen.query("Static")))
        assert editor.text == "/mcp__ev__args-prompt"
        editor.clear()
        await submit(pilot, '/mcp__ev__args-prompt "São Paulo"')
        await wait_for(pilot, lambda: any(m["role"] == "assistant" for m in session.messages), seconds=60)
        await settle(app, pilot)
        users = [m for m in session.messages if m["role"] == "user"]
        assert json.dumps(users[0]["content"], ensure_ascii=False).count("What's weather in São Paulo?") == 1

        await submit(pilot, "ask me")
        # composed and focused, not only pushed (under load the screen is on top before its widgets)
        await wait_for(pilot, lambda: isinstance(app.screen, ElicitScreen)
                       and any(i.has_focus for i in app.screen.query(Input)), seconds=60)
        dialog = app.screen
        shown = " ".join(str(w.render()) for w in dialog.query("Static"))
        assert "MCP server ev asks" in shown and "Your full, legal name" in shown
        inputs = list(dialog.query(Input))
        assert inputs[0].has_focus and inputs[0].value == ""
        await pilot.press("ctrl+s")  # name is required: the dialog stays and says so
        await pilot.pause()
        assert isinstance(app.screen, ElicitScreen)
        assert "required" in " ".join(str(w.render()) for w in dialog.query(".elicit-problem"))
        await pilot.press(*"Ada", "enter")  # to the next field (check, yes/no)
        await pilot.press(*"yes", "ctrl+s")
        await wait_for(pilot, lambda: not isinstance(app.screen, ElicitScreen))
        await wait_for(pilot, lambda: len([m for m in session.messages if m["role"] == "assistant"]) == 3, seconds=60)
        await settle(app, pilot)
        result = [m for m in session.messages if m["role"] == "toolResult"][-1]
        text = "".join(b.get("text", "") for b in result["content"] if b.get("type") == "text")
        assert '"action": "accept"' in text and '"name": "Ada"' in text and '"check": true' in text
        assert '"integer": 42' in text  # a default, sent with its schema's type
        await session.mcp.close()


async def test_a_url_elicitation_shows_the_link_and_escape_declines(make_app: Any, agent_dir: Path) -> None:
    need(EVERYTHING)
    write_servers(agent_dir / "mcp.json", {"ev": {"command": str(EVERYTHING), "args": ["stdio"]}})
    call = {"id": "u1", "name": "mcp__ev__trigger-url-elicitation",
            "arguments": {"url": "https://example.com/sign-in\x1b[2J"}}
    turns = [{"tool_calls": [call]}, {"text": "ok"}, {"tool_calls": [{**call, "id": "u2"}]}, {"text": "ok"}]
    app, session = make_app(turns)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "open it")
        def shown_text() -> str:
            return " ".join(str(w.render()) for w in app.screen.query("Static")) if isinstance(app.screen, ElicitScreen) else ""

        # the dialog's text, not only its screen: pushed under load, it is on top before it is composed
        await wait_for(pilot, lambda: "esc decline" in shown_text(), seconds=60)
        shown = shown_text()
        assert "Open: https://example.com/sign-in enter" in shown and "\x1b" not in shown  # the escape dropped
        assert "enter accept (done) · esc decline" in shown
        await pilot.press("escape")
        await wait_for(pilot, lambda: len([m for m in session.messages if m["role"] == "assistant"]) == 2, seconds=60)
        await settle(app, pilot)
        await submit(pilot, "again")
        await wait_for(pilot, lambda: "esc decline" in shown_text(), seconds=60)
        await pilot.press("enter")
        await wait_for(pilot, lambda: len([m for m in session.messages if m["role"] == "assistant"]) == 4, seconds=60)
        await settle(app, pilot)
        declined, accepted = [
            "".join(b.get("text", "") for b in m["content"] if b.get("type") == "text")
            for m in session.messages if m["role"] == "toolResult"]
        assert '"action": "decline"' in declined
        assert "User completed the URL elicitation flow" in accepted
        await session.mcp.close()


async def test_everything_tiny_image_shows_as_a_half_block_preview(make_app: Any, agent_dir: Path) -> None:
    """server-everything's ``get-tiny-image``: the image block is drawn in the tool panel, in the
    image's own colours, under its caption (not only a ``[image image/png]`` placeholder)."""
    need(EVERYTHING)
    from pi_tui.core.provider import ModelInfo
    from pi_tui.modes.interactive import image_preview
    from pi_tui.modes.interactive.widgets.tool_call import ToolCallPanel
    from tests.modes.interactive.test_image_panels import half_blocks

    image_preview.clear_cache()
    write_servers(agent_dir / "mcp.json", {"ev": {"command": str(EVERYTHING), "args": ["stdio"]}})
    vision = ModelInfo(provider="scripted", id="scripted-vision", name="Scripted", input=("text", "image"),
                       context_window=128_000)
    turns = [{"tool_calls": [{"id": "i1", "name": "mcp__ev__get-tiny-image", "arguments": {}}]}, {"text": "seen"}]
    app, session = make_app(turns, model=vision)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await wait_for(pilot, lambda: session.mcp.connections["ev"].status == "connected", seconds=60)
        await submit(pilot, "show me")
        await wait_for(pilot, lambda: len([m for m in session.messages if m["role"] == "assistant"]) == 2, seconds=60)
        await settle(app, pilot)
        result = next(m for m in session.messages if m["role"] == "toolResult")
        block = next(b for b in result["content"] if b["type"] == "image")
        panel = next(p for p in app.screen.query(ToolCallPanel) if p.call_id == "i1")
        await wait_for(pilot, lambda: bool(half_blocks(panel)))
        shown = str(panel.render())
        decoded = image_preview.load(block["data"], block["mimeType"])
        assert decoded is not None and decoded.width and decoded.height and decoded.problem is None
        assert f"[image image/png {decoded.width}×{decoded.height}, " in shown
        assert "[image image/png]" not in shown
        expected = [[(c.fg, c.bg) for c in row if c.char == "▀"] for row in decoded.cells(60, 12)]
        assert half_blocks(panel) == [row for row in expected if row]
        colours = {cell for row in half_blocks(panel) for cell in row}
        assert len(colours) > 3  # a picture, not a flat block
        await session.mcp.close()
