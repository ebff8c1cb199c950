from __future__ import annotations

import asyncio

from pi_tui.tools import mutation_queue
from pi_tui.tools.mutation_queue import file_mutation_lock


async def test_same_file_serialized_in_call_order_other_files_parallel(tmp_path):
    target = tmp_path / "t.txt"
    link = tmp_path / "link.txt"
    target.write_text("")
    link.symlink_to(target)
    log: list[str] = []

    async def hold(path, name):
        async with file_mutation_lock(path):
            log.append(f"start {name}")
            await asyncio.sleep(0.02)
            log.append(f"end {name}")

    await asyncio.gather(hold(target, "a"), hold(link, "b"), hold(target, "c"))
    assert log == ["start a", "end a", "start b", "end b", "start c", "end c"]
    log.clear()
    await asyncio.gather(hold(tmp_path / "x", "x"), hold(tmp_path / "y", "y"))
    assert log[:2] == ["start x", "start y"]
    assert mutation_queue._locks == {}
