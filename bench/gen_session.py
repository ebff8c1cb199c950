"""Generate a realistic pi v3 session file with N entries (for the load benchmark).

The mix follows real coding sessions: turns of a user prompt, assistant tool calls (read, bash,
edit, write), tool results of varied size, a final answer with usage; a model or thinking change
now and then, a compaction every ~2,000 entries (keeping the last turns), labels, session names,
``!cmd`` bash executions, and branches (the leaf moved back and a new line of work started,
some with a branch summary). Deterministic for a given seed.

    python bench/gen_session.py 100000 /tmp/session.jsonl [--seed 1]
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path
from typing import Any

WORDS = (  # noqa: SIM905 - prose reads better than a 46-item list
    "the session tree keeps every entry append only and the leaf moves when we branch so the "
    "context projection walks from the leaf to the root collecting messages compaction replaces "
    "older turns with a summary while kept messages follow tool results can be large files code"
).split()
BASE_MS = 1_796_000_000_000


class Generator:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.ms = BASE_MS
        self.entries: list[dict[str, Any]] = []
        self.leaf: str | None = None
        self.ids: set[str] = set()
        self.turn_starts: list[str] = []

    def text(self, low: int, high: int) -> str:
        count = self.rng.randint(low, high)
        return " ".join(self.rng.choice(WORDS) for _ in range(count))

    def new_id(self) -> str:
        while True:
            candidate = f"{self.rng.getrandbits(32):08x}"
            if candidate not in self.ids:
                self.ids.add(candidate)
                return candidate

    def stamp(self) -> str:
        self.ms += self.rng.randint(5, 3000)
        seconds, millis = divmod(self.ms, 1000)
        return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{millis:03d}Z"

    def add(self, kind: str, **payload: Any) -> str:
        entry_id = self.new_id()
        entry = {"type": kind, "id": entry_id, "parentId": self.leaf, "timestamp": self.stamp(), **payload}
        self.entries.append(entry)
        self.leaf = entry_id
        return entry_id

    def usage(self) -> dict[str, Any]:
        inp = self.rng.randint(2_000, 150_000)
        out = self.rng.randint(10, 2_000)
        cost = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}
        return {"input": inp, "output": out, "cacheRead": 0, "cacheWrite": 0, "totalTokens": inp + out, "cost": cost}

    def assistant(self, content: list[dict[str, Any]], stop: str) -> str:
        message = {
            "role": "assistant",
            "content": content,
            "api": "openai-completions",
            "provider": "fake",
            "model": "fake-model",
            "usage": self.usage(),
            "stopReason": stop,
            "timestamp": self.ms,
        }
        return self.add("message", message=message)

    def tool_call(self, index: int) -> tuple[dict[str, Any], str]:
        name = self.rng.choice(("read", "read", "bash", "edit", "write"))
        path = f"src/module_{self.rng.randint(1, 200)}.py"
        args: dict[str, Any] = {
            "read": {"path": path},
            "bash": {"command": f"pytest -q tests/test_{self.rng.randint(1, 50)}.py"},
            "edit": {"path": path, "oldText": self.text(3, 12), "newText": self.text(3, 15)},
            "write": {"path": path, "content": self.text(20, 120)},
        }[name]
        call_id = f"call_{len(self.entries)}_{index}"
        return {"type": "toolCall", "id": call_id, "name": name, "arguments": args}, name

    def turn(self) -> None:
        start = self.add(
            "message",
            message={"role": "user", "content": [{"type": "text", "text": self.text(5, 80)}], "timestamp": self.ms},
        )
        self.turn_starts.append(start)
        for _ in range(self.rng.randint(1, 4)):
            calls = [self.tool_call(i) for i in range(self.rng.choice((1, 1, 1, 2, 3)))]
            thinking = [{"type": "thinking", "thinking": self.text(5, 40)}] if self.rng.random() < 0.3 else []
            self.assistant([*thinking, *(call for call, _ in calls)], "toolUse")
            for call, name in calls:
                size = self.rng.choice((5, 20, 60, 150, 400))
                result = {
                    "role": "toolResult",
                    "toolCallId": call["id"],
                    "toolName": name,
                    "content": [{"type": "text", "text": self.text(size // 2, size)}],
                    "isError": self.rng.random() < 0.05,
                    "timestamp": self.ms,
                }
                self.add("message", message=result)
        self.assistant([{"type": "text", "text": self.text(10, 120)}], "stop")

    def extras(self) -> None:
        roll = self.rng.random()
        if roll < 0.02:
            self.add("model_change", provider="fake", modelId=self.rng.choice(("fake-model", "fake-large")))
        elif roll < 0.04:
            self.add("thinking_level_change", thinkingLevel=self.rng.choice(("off", "low", "medium", "high")))
        elif roll < 0.05 and self.turn_starts:
            self.add("label", targetId=self.rng.choice(self.turn_starts[-20:]), label=f"checkpoint {len(self.entries)}")
        elif roll < 0.06:
            output = self.text(5, 60)
            message = {
                "role": "bashExecution", "command": "git status", "output": output, "exitCode": 0,
                "cancelled": False, "truncated": False, "timestamp": self.ms,
            }
            self.add("message", message=message)
        elif roll < 0.065:
            self.add("session_info", name=self.text(2, 5))

    def compaction(self) -> None:
        kept = self.turn_starts[-3] if len(self.turn_starts) >= 3 else self.turn_starts[-1]
        self.add(
            "compaction", summary="## Goal\n" + self.text(100, 400), firstKeptEntryId=kept,
            tokensBefore=self.rng.randint(100_000, 180_000),
            details={"readFiles": ["src/a.py"], "modifiedFiles": ["src/b.py"]}, fromHook=False,
        )

    def branch(self) -> None:
        """Move the leaf back a few turns (sometimes with a branch summary) and go on from there."""
        if len(self.turn_starts) < 6:
            return
        target = self.rng.choice(self.turn_starts[-6:-1])
        self.leaf = target
        if self.rng.random() < 0.5:
            self.add("branch_summary", fromId=target, summary=self.text(30, 120), details={"readFiles": [], "modifiedFiles": []}, fromHook=False)

    def run(self, count: int) -> list[dict[str, Any]]:
        self.add("model_change", provider="fake", modelId="fake-model")
        self.add("thinking_level_change", thinkingLevel="off")
        next_compaction = 2_000
        while len(self.entries) < count:
            self.turn()
            self.extras()
            if len(self.entries) >= next_compaction:
                self.compaction()
                next_compaction += 2_000
            if self.rng.random() < 0.02:
                self.branch()
        return self.entries[:count]


def write_session(path: Path, count: int, seed: int = 1) -> Path:
    entries = Generator(seed).run(count)
    header = {"type": "session", "version": 3, "id": "01a22a84-0000-7000-8000-000000000000",
              "timestamp": "2026-11-30T00:00:00.000Z", "cwd": "/home/dev/project"}
    with path.open("w", encoding="utf-8") as handle:
        for entry in (header, *entries):
            handle.write(json.dumps(entry, ensure_ascii=False, separators=(",", ":")) + "\n")
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("count", type=int)
    parser.add_argument("out", type=Path)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    write_session(args.out, args.count, args.seed)
    size = args.out.stat().st_size
    print(f"wrote {args.count} entries ({size / 1e6:.1f} MB) to {args.out}")


if __name__ == "__main__":
    main()
