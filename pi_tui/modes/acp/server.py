"""``pi-tui --mode acp``: pi-tui as an Agent Client Protocol agent on stdin/stdout (docs/acp.md).

stdout carries protocol frames only: while the mode runs, fd 1 and ``sys.stdout`` point at stderr
and the frames have their own copy of the real stdout (``modes/protocol_stdout.py``), so nothing an
extension, a library or a program they start writes can corrupt the stream; diagnostics go to
stderr, which editors keep as the agent's log. At end of input every session is cancelled and
closed (extensions get ``session_shutdown``), and the process exits 0; on SIGTERM, SIGHUP or
SIGINT the same happens after the running commands' process groups are killed, with exit status
143, 129 or 130.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from pi_tui.modes.acp.agent import AcpAgent
from pi_tui.modes.acp.jsonrpc import Peer
from pi_tui.modes.protocol_stdout import serve_protocol
from pi_tui.modes.rpc.server import FrameWriter, stdin_chunks
from pi_tui.modes.shutdown import SignalShutdown


def run_acp_mode(args: argparse.Namespace, *, hard_exit: bool | None = None) -> int:
    return serve_protocol(lambda frames_out: _serve(args, FrameWriter(frames_out)), hard_exit=hard_exit)


async def _serve(args: argparse.Namespace, writer: FrameWriter) -> int:
    if getattr(args, "messages", None):
        print("pi-tui: ACP mode ignores message arguments; the editor sends the prompts", file=sys.stderr)
    peer = Peer(writer)
    agent = AcpAgent(peer, args)
    # SIGTERM/SIGHUP/SIGINT (the editor closing the agent): commands killed, turns aborted and
    # recorded, sessions closed, exit 143/129/130 as the other modes do (modes/shutdown.py).
    shutdown = SignalShutdown()
    shutdown.on_signal = agent.abort_running
    shutdown.install()
    try:
        async for chunk in stdin_chunks(sys.stdin.buffer if sys.stdin is not None else None):
            peer.feed(chunk)
        peer.finish_input()
        await agent.abort_running()
        await peer.drain()
    except asyncio.CancelledError:
        if shutdown.signum is None:
            raise
    finally:
        shutdown.remove()
        await agent.close()
    return shutdown.exit_code or 0
