"""Decide about compactions yourself (seed 004, ``session_before_compact``).

* A *threshold* compaction of a context below ``MIN_TOKENS`` is refused: it is not worth losing
  detail yet (manual ``/compact`` and overflow recovery are never refused).
* Otherwise the extension writes the summary itself instead of asking the model: a fixed
  skeleton in pi's summary format, plus the files the summarized part touched.
* Every failed or cancelled compaction is appended to a JSON-lines telemetry file
  (``$PI_TUI_COMPACTION_LOG``, default ``<agentDir>/compaction-failures.jsonl``).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

MIN_TOKENS = 50_000


def telemetry_file() -> Path:
    configured = os.environ.get("PI_TUI_COMPACTION_LOG")
    if configured:
        return Path(configured)
    from pi_tui.resources.locations import agent_dir

    return agent_dir() / "compaction-failures.jsonl"


def build_summary(preparation: dict[str, Any]) -> str:
    file_ops = preparation.get("fileOps") or {}
    touched = sorted({*file_ops.get("written", []), *file_ops.get("edited", [])})
    files = "\n".join(f"- {path}" for path in touched) or "- (none)"
    return (
        "## Goal\nContinue fixing the type errors.\n\n"
        f"## Files changed so far\n{files}\n\n"
        "## Next Steps\n1. Re-run the type checker to confirm."
    )


def register(pi: Any) -> None:
    @pi.on("session_before_compact")
    def before_compact(event: dict[str, Any]) -> dict[str, Any]:
        preparation = event["preparation"]
        # preparation["messagesToSummarize"]: what would be summarized
        # preparation["firstKeptEntryId"]: where the kept part starts
        # preparation["tokensBefore"]: context size before compaction
        # event["reason"]: "manual" | "threshold" | "overflow"
        if event["reason"] == "threshold" and preparation["tokensBefore"] < MIN_TOKENS:
            return {"cancel": True}
        return {
            "compaction": {
                "summary": build_summary(preparation),
                "firstKeptEntryId": preparation["firstKeptEntryId"],
                "tokensBefore": preparation["tokensBefore"],
            }
        }

    @pi.on("session_compact_failed")
    def on_failed(event: dict[str, Any]) -> None:
        record = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            **{key: event.get(key) for key in ("reason", "errorMessage", "aborted", "willRetry", "fromExtension")},
        }
        path = telemetry_file()
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as log:
            log.write(json.dumps(record) + "\n")
