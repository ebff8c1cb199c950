from __future__ import annotations

from pi_tui.agent.queues import MessageQueue
from pi_tui.core.messages import user_message


def test_one_at_a_time_and_all_modes_and_change_notifications() -> None:
    changes: list[int] = []
    queue = MessageQueue(on_change=lambda: changes.append(1))
    for text in ("a", "b", "c"):
        queue.push(user_message(text))
    assert [m["content"][0]["text"] for m in queue.poll()] == ["a"]
    queue.mode = "all"
    assert [m["content"][0]["text"] for m in queue.poll()] == ["b", "c"]
    assert queue.poll() == []
    assert len(changes) == 5
    queue.push(user_message("d"))
    assert [m["content"][0]["text"] for m in queue.clear()] == ["d"] and len(queue) == 0
