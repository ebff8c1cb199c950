from __future__ import annotations

import asyncio
from pathlib import Path

from pi_tui.core.terminal_text import printable
from pi_tui.tools.user_bash import run_user_bash

from .helpers import group_after_kill, output_arrives


def test_sanitize_strips_ansi_controls_and_cr():
    assert printable("\x1b[31mred\x1b[0m\r\nok\x07\tx\x1b]0;title\x07") == "red\nok\tx"


async def test_output_and_exit_code(tmp_path: Path):
    result = await run_user_bash("printf '\\033[1mbold\\033[0m\\r\\n'; exit 2", cwd=tmp_path)
    timestamp = result.pop("timestamp")
    assert isinstance(timestamp, int)
    assert result == {"role": "bashExecution", "command": "printf '\\033[1mbold\\033[0m\\r\\n'; exit 2",
                      "output": "bold\n", "exitCode": 2, "cancelled": False, "truncated": False}


async def test_settings_object_and_exclude_flag(tmp_path: Path):
    class Settings:
        def as_dict(self):
            return {"shellCommandPrefix": "X=42"}

    result = await run_user_bash("echo $X", cwd=tmp_path, settings=Settings(), exclude_from_context=True)
    assert result["output"] == "42\n" and result["excludeFromContext"] is True


async def test_large_output_is_truncated_with_a_full_output_file(tmp_path: Path):
    result = await run_user_bash("seq 1 100000", cwd=tmp_path, artifact_dir=tmp_path / "arts")
    assert result["truncated"] is True
    assert result["output"].endswith("100000\n")
    full = Path(result["fullOutputPath"])
    assert full.parent == tmp_path / "arts"
    assert await asyncio.to_thread(full.read_text) == "".join(f"{i}\n" for i in range(1, 100001))


async def test_abort_event_cancels_and_kills_the_group(tmp_path: Path):
    abort = asyncio.Event()
    chunks: list[str] = []
    pid_file = tmp_path / "pid"
    task = asyncio.create_task(run_user_bash(
        f"echo $$ > {pid_file}; echo go; sleep 60", cwd=tmp_path, abort=abort, on_chunk=chunks.append
    ))
    await output_arrives(lambda: bool(chunks))
    abort.set()
    result = await task
    assert result["cancelled"] is True and "exitCode" not in result
    assert result["output"] == "go\n"
    assert group_after_kill(int(pid_file.read_text())) == []
