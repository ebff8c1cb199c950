from __future__ import annotations

from pi_tui.modes.interactive.kill_ring import RING_SIZE, KillRing


def test_kills_accumulate_in_the_direction_of_deletion():
    ring = KillRing()
    ring.kill("three", backward=True, accumulate=False)
    ring.kill("two ", backward=True, accumulate=True)
    assert ring.newest() == "two three"
    ring.kill("!", backward=False, accumulate=True)
    assert ring.entries == ["two three!"]
    ring.kill("new", backward=False, accumulate=False)
    assert ring.entries == ["two three!", "new"]


def test_rotate_cycles_and_needs_two_entries():
    ring = KillRing()
    ring.kill("a", backward=False, accumulate=False)
    assert ring.rotate() is None
    ring.kill("b", backward=False, accumulate=False)
    ring.kill("c", backward=False, accumulate=False)
    assert [ring.rotate(), ring.rotate(), ring.rotate()] == ["b", "a", "c"]


def test_the_ring_is_bounded_and_ignores_empty_kills():
    ring = KillRing()
    ring.kill("", backward=False, accumulate=False)
    assert ring.newest() is None
    for index in range(RING_SIZE + 5):
        ring.kill(str(index), backward=False, accumulate=False)
    assert len(ring.entries) == RING_SIZE and ring.newest() == str(RING_SIZE + 4)
