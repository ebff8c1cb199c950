"""Ids and file names of sessions (pi-behaviour.md §1.1, §1.2, §13.1).

* Entry ids: 8 hex chars of a random UUID, re-drawn on collision (100 tries, then a full UUID).
* Session ids: UUIDv7 (time-ordered), as pi 0.73.1 writes them. Python 3.11 has no
  ``uuid.uuid7``, so it is built here from the RFC 9562 layout.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Container
from pathlib import Path

_ID_TRIES = 100


def new_entry_id(existing: Container[str]) -> str:
    for _ in range(_ID_TRIES):
        candidate = os.urandom(4).hex()
        if candidate not in existing:
            return candidate
    return str(uuid.uuid4())


def uuid7(ms: int | None = None) -> str:
    """A UUIDv7 string: 48-bit Unix ms timestamp, version 7, variant 10, 74 random bits."""
    stamp = int(time.time() * 1000) if ms is None else ms
    rand = int.from_bytes(os.urandom(10), "big")
    rand_a = rand >> 68  # 12 bits
    rand_b = rand & ((1 << 62) - 1)  # 62 bits
    value = (stamp & ((1 << 48) - 1)) << 80 | 0x7 << 76 | rand_a << 64 | 0b10 << 62 | rand_b
    return str(uuid.UUID(int=value))


def session_file_name(timestamp: str, session_id: str) -> str:
    """``2025-12-09T00-53-29-825Z_<id>.jsonl``: the header timestamp with ``:`` and ``.`` → ``-``."""
    return f"{timestamp.replace(':', '-').replace('.', '-')}_{session_id}.jsonl"


def artifact_dir_for(session_file: Path) -> Path:
    """``<session-stem>.artifacts/`` beside the session file (pi-tui's tool-result artifacts)."""
    return session_file.with_name(session_file.stem + ".artifacts")
