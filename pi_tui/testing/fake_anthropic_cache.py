"""Prompt caching as the Anthropic Messages API bills it, simulated from the request's markers.

Why: what a client pays depends mostly on where it puts ``cache_control`` (pi-behaviour.md §15.6).
A fake that reports fixed usage cannot show that a client without markers pays 8x on its third
request; this one computes ``input_tokens``, ``cache_read_input_tokens`` and
``cache_creation_input_tokens`` the way the API documents it, so the recorded cost of a session is
a real measurement of the client's caching.

The model (documented behaviour, simplified where it does not change the bill):

* The prompt is a sequence of blocks in the API's cache order: each tool, each ``system`` block,
  then every message content block (a string content is one block). A block is counted as
  ``ceil(len(its compact JSON without cache_control) / 4)`` tokens.
* The cache key of a prefix is a hash of the model and the blocks up to there (markers excluded,
  so moving a marker does not change the key).
* For each marked block the API looks for the longest cached prefix ending at that block or at
  one of the ``LOOKBACK_BLOCKS`` blocks before it; the longest hit over all markers is read.
* The prefix up to the last marker is written (minus what was read) when it is at least
  ``min_tokens`` long; every marked prefix of that length becomes a cache entry.
* What follows the last marker is plain input. TTLs are ignored (tests run for seconds).
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
from dataclasses import dataclass
from typing import Any

LOOKBACK_BLOCKS = 20
DEFAULT_MIN_TOKENS = 1024


@dataclass(frozen=True, slots=True)
class CacheUsage:
    input_tokens: int
    cache_read_input_tokens: int
    cache_creation_input_tokens: int


def _without_marker(block: Any) -> Any:
    if isinstance(block, dict) and "cache_control" in block:
        return {k: v for k, v in block.items() if k != "cache_control"}
    return block


def prompt_blocks(body: dict[str, Any]) -> list[tuple[Any, bool]]:
    """``(block, marked)`` in cache order: tools, system, message content."""
    blocks: list[tuple[Any, bool]] = []
    for tool in body.get("tools") or []:
        blocks.append((tool, isinstance(tool, dict) and "cache_control" in tool))
    system = body.get("system")
    if isinstance(system, str) and system:
        blocks.append(({"type": "text", "text": system}, False))
    elif isinstance(system, list):
        blocks += [(b, isinstance(b, dict) and "cache_control" in b) for b in system]
    for message in body.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):  # the same as one text block, for the cache too
            blocks.append(({"role": message.get("role"), "type": "text", "text": content}, False))
        elif isinstance(content, list):
            role = message.get("role")
            blocks += [({"role": role, **(b if isinstance(b, dict) else {"value": b})}, isinstance(b, dict) and "cache_control" in b)
                       for b in content]
    return blocks


def count_tokens(value: Any) -> int:
    return math.ceil(len(json.dumps(_without_marker(value), separators=(",", ":"), ensure_ascii=False)) / 4)


def request_tokens(body: dict[str, Any]) -> int:
    """The whole prompt's size as the fake counts it (for overflow checks)."""
    return sum(count_tokens(block) for block, _ in prompt_blocks(body))


class PromptCache:
    """The cache of one fake server (shared by its requests; thread-safe)."""

    def __init__(self, *, min_tokens: int = DEFAULT_MIN_TOKENS) -> None:
        self.min_tokens = min_tokens
        self._entries: set[str] = set()
        self._lock = threading.Lock()

    def bill(self, body: dict[str, Any]) -> CacheUsage:
        """The usage of this request, and the cache entries it writes."""
        blocks = prompt_blocks(body)
        digest = hashlib.sha256(str(body.get("model", "")).encode())
        keys: list[str] = []
        ends: list[int] = []  # prefix token count after each block
        total = 0
        for block, _ in blocks:
            encoded = json.dumps(_without_marker(block), separators=(",", ":"), ensure_ascii=False)
            digest.update(encoded.encode())
            keys.append(digest.copy().hexdigest())
            total += math.ceil(len(encoded) / 4)
            ends.append(total)
        marked = [i for i, (_, flag) in enumerate(blocks) if flag]
        with self._lock:
            read = 0
            for index in marked:
                for k in range(index, max(-1, index - LOOKBACK_BLOCKS - 1), -1):
                    if keys[k] in self._entries:
                        read = max(read, ends[k])
                        break
            written = 0
            if marked and ends[marked[-1]] >= self.min_tokens:
                written = max(0, ends[marked[-1]] - read)
                self._entries.update(keys[i] for i in marked if ends[i] >= self.min_tokens)
        return CacheUsage(
            input_tokens=total - read - written,
            cache_read_input_tokens=read,
            cache_creation_input_tokens=written,
        )
