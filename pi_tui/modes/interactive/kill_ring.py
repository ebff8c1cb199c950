"""The editor's kill ring (emacs-style, as pi's editor has it).

Word and line deletions push what they removed; consecutive deletions grow one entry (a backward
deletion prepends, a forward one appends) so ``ctrl+w ctrl+w ctrl+y`` brings both words back.
``yank`` inserts the newest entry; ``yankPop`` right after a yank swaps the inserted text for the
next older entry, cycling through the ring.
"""

from __future__ import annotations

RING_SIZE = 60


class KillRing:
    __slots__ = ("entries",)

    def __init__(self, entries: list[str] | None = None) -> None:
        self.entries: list[str] = entries if entries is not None else []
        """Oldest first; the newest entry is the one ``yank`` inserts."""

    def kill(self, text: str, *, backward: bool, accumulate: bool) -> None:
        """Record deleted text; ``accumulate`` joins it to the newest entry (the previous key was
        a kill too)."""
        if not text:
            return
        if accumulate and self.entries:
            newest = self.entries[-1]
            self.entries[-1] = text + newest if backward else newest + text
            return
        self.entries.append(text)
        del self.entries[:-RING_SIZE]

    def newest(self) -> str | None:
        return self.entries[-1] if self.entries else None

    def rotate(self) -> str | None:
        """Move the newest entry to the oldest end and return the new newest (for yankPop)."""
        if len(self.entries) < 2:
            return None
        self.entries.insert(0, self.entries.pop())
        return self.entries[-1]
