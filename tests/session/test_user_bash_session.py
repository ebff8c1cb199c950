"""``!cmd`` through the session: full outputs beside the session file, abort → ``cancelled``."""

from __future__ import annotations

import asyncio
from pathlib import Path


async def test_full_output_of_a_long_command_is_kept_beside_the_session_file(make_session) -> None:
    session, _, _ = make_session([])
    message = await session.run_user_bash("seq 1 100000")
    assert message["truncated"] is True
    full = Path(message["fullOutputPath"])
    assert full.parent == session.session_manager.artifact_dir
    assert session.session_manager.session_file is not None
    assert full.parent.parent == session.session_manager.session_file.parent
    assert (await asyncio.to_thread(full.read_text)).endswith("99999\n100000\n")


async def test_aborting_a_user_command_gives_a_cancelled_result(make_session) -> None:
    session, _, _ = make_session([])
    task = asyncio.ensure_future(session.run_user_bash("echo go; sleep 30"))
    await asyncio.sleep(0.3)
    session.abort_user_bash()
    message = await asyncio.wait_for(task, 10)
    assert message["cancelled"] is True and "exitCode" not in message
    assert message["output"].startswith("go")
    assert session.messages[-1] is message
