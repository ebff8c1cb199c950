"""The TUI's side of MCP (``pi_tui/mcp``): the ``/mcp`` screen, the servers' prompts as
``/mcp__server__prompt`` commands, and elicitation requests as a dialog (docs/mcp.md).

A prompt's text is fetched in a worker (a slow server never holds the screen) and sent as the
user's message, as a template's expansion is; while a run is going it waits as a follow-up.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pi_tui.modes.interactive.widgets.chat_items import ErrorBlock

if TYPE_CHECKING:
    from pi_tui.modes.interactive.screen_port import ChatScreenPort

NO_SERVERS = ("No MCP servers are configured (docs/mcp.md: <agentDir>/mcp.json, the project's .mcp.json or "
              ".pi/mcp.json, --mcp-config FILE; `pi-tui mcp add`).")


async def open_mcp_screen(screen: ChatScreenPort) -> None:
    manager = getattr(screen.session, "mcp", None)
    if manager is None or not (manager.connections or manager.skipped):
        await screen.conversation.add_notice(NO_SERVERS, severity="info")
        return
    from pi_tui.modes.interactive.screens.mcp import McpScreen

    await screen.app.push_screen(McpScreen(manager))


async def run_mcp_prompt(screen: ChatScreenPort, name: str, args: str) -> bool:
    """True when ``name`` is a connected server's prompt (it is then run); False lets the text
    go on as any other (a template of that name, or a plain message)."""
    manager = screen.session.mcp
    if name not in manager.prompt_commands():
        return False
    screen.run_worker(_send_prompt(screen, manager, name, args), group="agent", exit_on_error=False)
    return True


async def _send_prompt(screen: ChatScreenPort, manager: Any, name: str, args: str) -> None:
    from pi_tui.mcp.connection import McpCallError

    try:
        text = await manager.run_prompt(name, args)
    except McpCallError as error:
        await screen.conversation.add(ErrorBlock(str(error), advice="Fix the arguments and press Enter again."))
        screen.editor.set_text(f"/{name} {args}".rstrip())
        return
    if not text.strip():
        await screen.conversation.add_notice(f"/{name} gave no text to send", severity="warning")
        return
    session = screen.session
    if session.state.is_streaming or screen.renderer.running:
        session.follow_up(text)
    else:
        screen.run_prompt(text)


def attach_elicitation(session: Any, ui: Any) -> None:
    """Elicitation requests of the session's servers become a dialog (one at a time, with the
    extension dialogs); without this (print, JSON, RPC) they are declined."""
    manager = getattr(session, "mcp", None)
    if manager is None:
        return

    async def elicit(server: str, message: str, schema: dict[str, Any]) -> dict[str, Any] | None:
        from pi_tui.modes.interactive.screens.mcp_elicit import ElicitScreen

        answer = await ui.show_screen(lambda: ElicitScreen(server, message, schema), f"MCP server {server} asks")
        return answer if isinstance(answer, dict) else None

    manager.elicit = elicit
