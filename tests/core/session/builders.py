"""Small builders for session tests: messages in pi's shapes and file readers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pi_tui.core.messages import AssistantMessage, ToolResultMessage, UserMessage, empty_usage


def user(text: str, ts: int = 1_000) -> UserMessage:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": ts}


def assistant(text: str = "ok", *, model: str = "m1", provider: str = "p1", ts: int = 2_000) -> AssistantMessage:
    return {
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "api": "openai-completions",
        "provider": provider,
        "model": model,
        "usage": empty_usage(),
        "stopReason": "stop",
        "timestamp": ts,
    }


def tool_result(text: str, call_id: str = "c1") -> ToolResultMessage:
    return {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": "bash",
        "content": [{"type": "text", "text": text}],
        "isError": False,
        "timestamp": 3_000,
    }


def read_objects(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def write_objects(path: Path, objects: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(o) + "\n" for o in objects), encoding="utf-8")
    return path
