"""Our session lines have the shape of pi's: an assistant ``message`` line compared with one
from pi's own file (``v3-compact-manual.jsonl``), numbers written as JavaScript writes them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pi_tui.core.provider import ModelCost, ModelInfo
from pi_tui.providers.stream_assembler import js_number

FREE_MODEL = ModelInfo(provider="fake", id="fake-model", context_window=200_000, cost=ModelCost())


def _shape(value: Any) -> Any:
    """Keys (in order) and JSON types, with the values themselves dropped."""
    if isinstance(value, dict):
        return {key: _shape(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_shape(item) for item in value]
    return type(value).__name__


def _assistant_lines(path: Path) -> list[str]:
    return [line for line in path.read_text().splitlines() if '"role":"assistant"' in line]


async def test_an_assistant_line_has_the_shape_of_pis(make_session, pi_fixtures: Path) -> None:
    theirs_line = _assistant_lines(pi_fixtures / "v3-compact-manual.jsonl")[0]
    theirs = json.loads(theirs_line)
    session, _, _ = make_session([{"tool_calls": [{"id": "c1", "name": "bash", "arguments": {"command": "echo hi"}}],
                                   "usage": {"prompt_tokens": 1394, "completion_tokens": 11}},
                                  {"text": "done"}], model=FREE_MODEL)
    await session.prompt("run echo hi")
    path = session.session_manager.session_file
    assert path is not None
    ours_line = _assistant_lines(path)[0]
    ours = json.loads(ours_line)
    assert _shape({k: v for k, v in ours.items() if k != "message"}) == _shape(
        {k: v for k, v in theirs.items() if k != "message"})
    ours_usage, theirs_usage = ours["message"]["usage"], theirs["message"]["usage"]
    assert _shape(ours_usage) == _shape(theirs_usage)  # every zero an int, as pi writes it
    assert '"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}' in ours_line
    assert '"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}' in theirs_line
    required = {k for k in theirs["message"] if k not in ("responseId",)}
    assert required <= set(ours["message"])


def test_js_number_keeps_fractions() -> None:
    assert js_number(0.0) == 0 and isinstance(js_number(0.0), int)
    assert isinstance(js_number(2.0), int)
    assert js_number(0.0042) == 0.0042
