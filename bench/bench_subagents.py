"""Benchmark: one exploration question answered inline vs through the ``task`` tool.

A scripted model reads 20 files of 5–10 KB (four turns of five ``read`` calls) to answer one
question, then answers. Inline, the parent does the reading; through ``task``, the parent makes
one ``task`` call (``explore``) and the child does the same reading and returns a short answer.
Both run through the real ``AgentSession`` loop on the scripted provider, whose usage is the
request's size in chars / 4 (the same estimate for every request), so the figures compare bytes
the model would be sent:

* **parent context after the answer**: input + output tokens of the parent's last answer — what
  the parent's next request starts from;
* **total tokens sent**: the input tokens of every request of the run, parent and child.

    python bench/bench_subagents.py [--files 20]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pi_tui.core.provider import ModelInfo  # noqa: E402
from pi_tui.sdk import create_agent_session  # noqa: E402
from pi_tui.testing.scripted import ScriptedProvider  # noqa: E402

MODEL = ModelInfo(provider="bench", id="bench-model", context_window=200_000)
QUESTION = "PARENT: which module sets the retry limit, and to what?"
ANSWER = ("The retry limit is set in module_13.py: RETRY_LIMIT = 7, used by connect() there; "
          "the other 19 modules only import it.")
WORDS = ["session", "request", "retry", "buffer", "parser", "token", "stream", "handler", "config", "limit", "cache", "value"]


def make_files(root: Path, count: int) -> list[str]:
    rng = random.Random(23)
    names = []
    for index in range(count):
        size = rng.randint(5_000, 10_000)
        lines = [f"# module_{index:02d}.py"]
        while sum(len(line) + 1 for line in lines) < size:
            lines.append(f"def {rng.choice(WORDS)}_{len(lines)}(x):  # " + " ".join(rng.choices(WORDS, k=8)))
        if index == 13:
            lines.insert(5, "RETRY_LIMIT = 7")
        name = f"module_{index:02d}.py"
        (root / name).write_text("\n".join(lines)[:size] + "\n")
        names.append(name)
    return names


def reading_turns(names: list[str], marker: str) -> list[dict[str, Any]]:
    turns = []
    for start in range(0, len(names), 5):
        calls = [{"id": f"{marker}-r{i}", "name": "read", "arguments": {"path": name}}
                 for i, name in enumerate(names[start:start + 5], start=start)]
        turns.append({"when": {"last_user_contains": marker}, "tool_calls": calls})
    return turns


def totals(session: Any) -> tuple[int, int, int]:
    """(context after the last answer, input tokens sent, requests) of one session."""
    answers = [m for m in session.messages if m.get("role") == "assistant"]
    last = answers[-1]["usage"]
    sent = sum(int(m["usage"]["input"]) for m in answers)
    return int(last["input"]) + int(last["output"]), sent, len(answers)


async def run(mode: str, root: Path, names: list[str]) -> dict[str, int]:
    if mode == "inline":
        turns = [*reading_turns(names, "PARENT"), {"when": {"last_user_contains": "PARENT"}, "text": ANSWER}]
    else:
        turns = [
            {"when": {"last_user_contains": "PARENT"}, "tool_calls": [{"id": "t1", "name": "task", "arguments": {
                "description": "find the retry limit", "subagent_type": "explore",
                "prompt": "CHILD: find which module sets the retry limit and its value; read the module_*.py files."}}]},
            *reading_turns(names, "CHILD"),
            {"when": {"last_user_contains": "CHILD"}, "text": ANSWER},
            {"when": {"last_user_contains": "PARENT"}, "text": ANSWER},
        ]
    session = create_agent_session(cwd=root, agent_dir=root / ".agent", provider=ScriptedProvider(turns), model=MODEL,
                                   load_extensions=False, no_session=True, settings={},
                                   active_tools=["read", "bash", "edit", "write", "task"])
    await session.prompt(QUESTION)
    context, sent, requests = totals(session)
    child_sent = child_requests = 0
    for message in session.messages:
        details = message.get("details") if message.get("role") == "toolResult" else None
        if isinstance(details, dict) and isinstance(details.get("usage"), dict):
            child_requests += int(details["usage"]["turns"])
            child_sent += int(details["usage"]["input"])
    return {"context": context, "sent": sent + child_sent, "requests": requests + child_requests,
            "parent_sent": sent}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        (root / ".agent").mkdir()
        names = make_files(root, args.files)
        kb = sum((root / n).stat().st_size for n in names) / 1024
        inline = asyncio.run(run("inline", root, names))
        task = asyncio.run(run("task", root, names))
    print(f"{args.files} files, {kb:.0f} KB read to answer one question")
    print("| run | parent context after the answer | total tokens sent | of which the parent | requests |")
    print("|---|---:|---:|---:|---:|")
    for name, row in (("inline", inline), ("through task", task)):
        print(f"| {name} | {row['context']:,} | {row['sent']:,} | {row['parent_sent']:,} | {row['requests']} |")
    print(f"parent context: task / inline = {task['context'] / inline['context']:.3f}; "
          f"total sent: task / inline = {task['sent'] / inline['sent']:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
