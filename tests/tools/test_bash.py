from __future__ import annotations

import asyncio
import contextlib
import os
import re
import tempfile
import time
from pathlib import Path

import pytest

from pi_tui.core.errors import ToolError
from pi_tui.core.tool import ToolAborted, ToolContext, ToolResult
from pi_tui.tools.bash import BashTool

from .helpers import group_after_kill, live_processes_in_group, output_arrives, text


async def bash(ctx: ToolContext, command: str, **extra) -> ToolResult:
    return await BashTool().execute("call", {"command": command, **extra}, ctx)


def full_output_path(message: str) -> Path:
    match = re.search(r"Full output: (\S+)\]$", message)
    assert match, message
    return Path(match.group(1))


async def test_stdout_and_stderr_merge_in_arrival_order(ctx):
    result = await bash(ctx, "echo a; sleep 0.05; echo b >&2; sleep 0.05; echo c")
    assert text(result) == "a\nb\nc\n"
    assert result.details is None


async def test_no_output(ctx):
    assert text(await bash(ctx, "true")) == "(no output)"


async def test_nonzero_exit_is_an_error_with_the_output(ctx):
    with pytest.raises(ToolError) as error:
        await bash(ctx, "echo oops; exit 3")
    assert str(error.value) == "oops\n\n\nCommand exited with code 3"
    with pytest.raises(ToolError, match=r"^\(no output\)\n\nCommand exited with code 1$"):
        await bash(ctx, "exit 1")


async def test_runs_in_cwd_with_agent_bin_on_path(ctx, agent_dir):
    result = await bash(ctx, 'pwd; echo "$PATH"')
    cwd_line, path_line = text(result).splitlines()
    assert cwd_line == str(ctx.cwd)
    assert path_line.split(":")[0] == str(agent_dir / "bin")


async def test_missing_cwd_and_missing_shell(tmp_path):
    with pytest.raises(ToolError, match=r"^Working directory does not exist: .*gone\nCannot execute bash commands\.$"):
        await bash(ToolContext(cwd=tmp_path / "gone"), "echo hi")
    with pytest.raises(ToolError, match=r"^Custom shell path not found: /no/such/shell$"):
        await bash(ToolContext(cwd=tmp_path, settings={"shellPath": "/no/such/shell"}), "echo hi")


async def test_shell_path_and_command_prefix_settings(tmp_path):
    settings = {"shellPath": "/bin/sh", "shellCommandPrefix": "export GREETING=hello"}
    result = await bash(ToolContext(cwd=tmp_path, settings=settings), 'echo "$GREETING from $0"')
    assert text(result) == "hello from /bin/sh\n"


async def test_timeout_kills_the_whole_tree(ctx):
    pid_file = ctx.cwd / "pids"
    command = f"echo started; (sleep 60; echo late) & echo $$ > {pid_file}; sleep 60"
    started = time.monotonic()
    with pytest.raises(ToolError) as error:
        await bash(ctx, command, timeout=1)
    assert time.monotonic() - started < 10
    assert str(error.value) == "started\n\n\nCommand timed out after 1 seconds"
    pgid = int(pid_file.read_text())
    assert group_after_kill(pgid) == []


async def test_timeout_without_output_gives_only_the_status(ctx):
    with pytest.raises(ToolError, match=r"^Command timed out after 0.5 seconds$"):
        await bash(ctx, "sleep 30", timeout=0.5)


async def test_abort_kills_the_tree_and_reports_output(tmp_path):
    updates: list[ToolResult] = []
    ctx = ToolContext(cwd=tmp_path, on_update=updates.append)
    pid_file = tmp_path / "pid"
    task = asyncio.create_task(bash(ctx, f"echo $$ > {pid_file}; echo working; sleep 1 & sleep 60"))
    await output_arrives(lambda: any("working" in text(u) for u in updates))
    task.cancel()
    with pytest.raises(ToolAborted) as aborted:  # a CancelledError carrying the call's result
        await task
    assert isinstance(aborted.value, asyncio.CancelledError)
    assert text(aborted.value.result) == "working\n\n\nCommand aborted"  # pi's text
    assert aborted.value.result.is_error
    assert [text(u) for u in updates] == ["", "working\n"]  # the status is the result, not an update
    assert group_after_kill(int(pid_file.read_text())) == []


async def test_updates_are_never_repeated(ctx):
    """As pi: the closing update goes out only when output arrived since the last one."""
    updates: list[ToolResult] = []
    quiet = ToolContext(cwd=ctx.cwd, on_update=updates.append)
    result = await bash(quiet, "echo hi; sleep 0.3")
    assert text(result) == "hi\n"
    assert [text(u) for u in updates] == ["", "hi\n"]


async def test_a_background_job_does_not_hold_the_call(ctx):
    pid_file = ctx.cwd / "pid"
    started = time.monotonic()
    result = await bash(ctx, f"echo $$ > {pid_file}; sleep 30 & echo done")
    assert time.monotonic() - started < 5
    assert text(result) == "done\n"
    pgid = int(pid_file.read_text())
    assert live_processes_in_group(pgid) != []  # the job still runs, as `&` asked
    os.killpg(pgid, 9)


async def test_updates_start_empty_and_are_throttled(tmp_path):
    updates: list[ToolResult] = []
    ctx = ToolContext(cwd=tmp_path, on_update=updates.append)
    started = time.monotonic()
    await bash(ctx, "for i in $(seq 1 40); do echo $i; sleep 0.01; done")
    elapsed = time.monotonic() - started
    assert updates[0].content == [] and updates[0].details is None
    assert text(updates[-1]).endswith("40\n")
    assert len(updates) <= elapsed / 0.1 + 3


async def test_megabytes_of_output_are_saved_byte_identical(ctx):
    payload = os.urandom(3 * 1024 * 1024)  # includes invalid UTF-8 and NUL bytes
    source = ctx.cwd / "payload.bin"
    source.write_bytes(payload)
    result = await bash(ctx, f"cat {source}; printf '\\nlast line\\n'")
    message = text(result)
    saved = full_output_path(message)
    assert saved.parent == ctx.artifact_dir
    assert saved.read_bytes() == payload + b"\nlast line\n"
    assert result.details["fullOutputPath"] == str(saved)
    assert len(message.encode()) < 51200 + 300
    assert "last line\n\n\n[Showing lines" in message


async def test_line_count_alone_triggers_the_full_output_file(ctx):
    result = await bash(ctx, "seq 1 3000")  # ~14 KB, over 2000 lines
    message = text(result)
    assert re.search(r"\n\n\[Showing lines 1002-3001 of 3001\. Full output: \S+\]$", message)
    assert full_output_path(message).read_text() == "".join(f"{i}\n" for i in range(1, 3001))
    assert result.details["truncation"]["truncatedBy"] == "lines"


async def test_byte_limit_notice_reports_real_totals(ctx):
    result = await bash(ctx, "for i in $(seq 1 1500); do printf '%0100d\\n' $i; done")
    message = text(result)
    match = re.search(r"\[Showing lines (\d+)-1501 of 1501 \(50\.0KB limit\)\. Full output: \S+\]$", message)
    assert match
    shown = message[: message.index("\n\n[Showing")]
    assert len(shown.encode()) <= 51200
    assert int(match.group(1)) == 1501 - shown.count("\n")


async def test_huge_single_line_keeps_its_tail(ctx):
    result = await bash(ctx, "head -c 200000 /dev/zero | tr '\\0' 'x'; printf 'END'")
    message = text(result)
    assert message.startswith("x" * 100)
    assert re.search(r"END\n\n\[Showing last 50\.0KB of line 1 \(line is 195\.3KB\)\. Full output: \S+\]$", message)
    assert result.details["truncation"]["lastLinePartial"] is True


async def test_multibyte_tail_starts_on_a_character(ctx):
    result = await bash(ctx, "python3 -c \"import sys; sys.stdout.write('€' * 40000)\"")
    shown = text(result).split("\n\n[Showing")[0]
    assert set(shown) == {"€"}
    assert len(shown.encode()) <= 51200


async def test_without_artifact_dir_the_full_output_goes_to_the_temp_dir(tmp_path):
    result = await bash(ToolContext(cwd=tmp_path), "seq 1 5000")
    saved = full_output_path(text(result))
    assert saved.parent == Path(tempfile.gettempdir())
    assert saved.name.startswith("pi-bash-") and saved.suffix == ".log"
    saved.unlink()


async def test_a_failing_output_sink_stops_the_command_with_a_named_error(ctx, monkeypatch):
    from pi_tui.tools import output

    def full_disk(self, chunk):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(output.OutputAccumulator, "feed", full_disk)
    pid_file = ctx.cwd / "pid"
    started = time.monotonic()
    with pytest.raises(ToolError, match=r"^Could not save the output of `echo \$\$ > .*`: \[Errno 28\] No space left"):
        await bash(ctx, f"echo $$ > {pid_file}; echo x; sleep 30")
    assert time.monotonic() - started < 10
    assert group_after_kill(int(pid_file.read_text())) == []


async def test_unicode_and_spaced_cwd_and_output(tmp_path):
    folder = tmp_path / "my prøject ☃"
    folder.mkdir()
    (folder / "file with space.txt").write_text("ünïcødé\n")
    result = await bash(ToolContext(cwd=folder), 'pwd; cat "file with space.txt"')
    assert text(result) == f"{folder}\nünïcødé\n"


async def test_an_abort_while_the_shell_is_starting_leaves_nothing_running(tmp_path, monkeypatch):
    """The shell runs (and starts its own children) before ``subprocess_exec`` returns: on a busy
    event loop an abort can land in between, when the tool has no pid yet. The command's whole
    group is still killed — never the shell alone (which orphans ``sleep``) or nothing."""
    pid_file = tmp_path / "pid"
    loop = asyncio.get_running_loop()
    real_exec = loop.subprocess_exec

    async def slow_start(*args, **kwargs):  # the transport connects while the loop is busy elsewhere
        started = await real_exec(*args, **kwargs)
        await asyncio.sleep(0.5)
        return started

    monkeypatch.setattr(loop, "subprocess_exec", slow_start)
    ctx = ToolContext(cwd=tmp_path)
    task = asyncio.create_task(bash(ctx, f"echo $$ > {pid_file}; sleep 60; true"))
    for _ in range(250):
        await asyncio.sleep(0.02)
        if pid_file.exists() and pid_file.read_text().strip():
            break
    pgid = int(pid_file.read_text())
    await asyncio.sleep(0.2)  # the shell has started sleep
    assert len(live_processes_in_group(pgid)) == 2
    task.cancel()
    try:
        with pytest.raises((ToolAborted, asyncio.CancelledError)):
            await task
        assert group_after_kill(pgid) == []
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, 9)
