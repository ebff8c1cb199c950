"""A child process for the concurrent-writer tests: ``python -m tests.reliability.race_writer``.

Arguments: ``NAME FOLDER ROUNDS START STEP``. For round ``i`` it waits until ``START + i*STEP``
(wall clock, so every child reaches the round at the same moment), opens ``FOLDER/round-<i>.jsonl``
with ``SessionManager.open`` (a path that does not exist yet), appends a user message, an
assistant message and another user message, and closes. One JSON line per round on stdout:
``{"round": i, "ok": true, "ids": [...]}`` once every append returned (acknowledged), or
``{"round": i, "ok": false, "error": "..."}`` when pi-tui refused (a ``SessionError``).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from pi_tui.core.errors import SessionError
from pi_tui.core.messages import empty_usage
from pi_tui.core.session.manager import SessionManager


def _assistant(text: str) -> dict[str, object]:
    return {"role": "assistant", "content": [{"type": "text", "text": text}], "api": "openai-completions",
            "provider": "p", "model": "m", "usage": empty_usage(), "stopReason": "stop", "timestamp": 2}


def main() -> None:
    name, folder, rounds, start, step = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
    for index in range(rounds):
        delay = start + index * step - time.time()
        if delay > 0:
            time.sleep(delay)
        path = folder / f"round-{index}.jsonl"
        try:
            manager = SessionManager.open(path, cwd=folder)
            try:
                ids = [manager.append_message({"role": "user", "content": f"{name} asks", "timestamp": 1})]
                ids.append(manager.append_message(_assistant(f"{name} answers")))  # type: ignore[arg-type]
                ids.append(manager.append_message({"role": "user", "content": f"{name} again", "timestamp": 3}))
                header = manager.session_id
            finally:
                manager.close()
        except SessionError as error:
            print(json.dumps({"round": index, "ok": False, "error": str(error)}), flush=True)
            continue
        print(json.dumps({"round": index, "ok": True, "ids": ids, "session": header}), flush=True)


if __name__ == "__main__":
    main()
