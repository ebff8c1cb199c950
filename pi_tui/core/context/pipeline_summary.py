"""The pipeline's summary step: a strict five-field JSON answer (spec/context-pipeline.md step 4).

The summarizer gets no tools, and its answer is accepted only when the stop reason is a normal
stop, it has no tool calls, and its text is exactly one JSON object with exactly these five
non-empty fields, each once. Anything else is a rejection: reported, and the request stays as it was.
Strictness is the point: a summary that half-parsed, or that wandered into calling tools, is
worse than no summary, because it silently replaces real history.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

SUMMARY_FIELDS: tuple[str, ...] = (
    "current_goal",
    "key_findings",
    "files_read_or_changed",
    "remaining_work",
    "user_constraints",
)

PIPELINE_SUMMARY_SYSTEM_PROMPT = (
    "You condense the history of a coding session so that the work can continue from your summary "
    "alone. Do not continue the conversation and do not answer questions in it. Reply with one JSON "
    "object and nothing else: no prose, no code fences."
)

PIPELINE_SUMMARY_INSTRUCTIONS = """Summarize the conversation above as exactly one JSON object with exactly these five fields, each a non-empty string:

{
  "current_goal": "what the user is trying to achieve now",
  "key_findings": "facts, results and decisions established so far, with exact names and errors",
  "files_read_or_changed": "every file path that was read or changed, and how",
  "remaining_work": "what is left to do, in order",
  "user_constraints": "requirements and preferences the user stated (write \\"none stated\\" if there are none)"
}

Output only the JSON object."""

PIPELINE_SUMMARY_PREFIX = "Pipeline summary of the earlier conversation (JSON):\n"


def pipeline_summary_prompt(conversation: str, previous_summary: str | None) -> str:
    text = f"<conversation>\n{conversation}\n</conversation>\n\n"
    if previous_summary:
        text += f"<previous-summary>\n{previous_summary}\n</previous-summary>\n\n"
        text += "Merge the previous summary with the new conversation; keep everything still relevant.\n\n"
    return text + PIPELINE_SUMMARY_INSTRUCTIONS


@dataclass(frozen=True, slots=True)
class SummaryVerdict:
    accepted: bool
    fields: dict[str, str] | None = None
    reason: str = ""


def validate_summary_answer(message: Any) -> SummaryVerdict:
    """Accept or reject a summarizer's final assistant message."""
    if not isinstance(message, dict):
        return SummaryVerdict(False, reason="no answer")
    stop = message.get("stopReason")
    if stop != "stop":
        detail = message.get("errorMessage") or stop
        return SummaryVerdict(False, reason=f"stop reason is {detail!r}, not 'stop'")
    content = message.get("content") or []
    if any(isinstance(b, dict) and b.get("type") == "toolCall" for b in content):
        return SummaryVerdict(False, reason="the answer contains tool calls")
    text = "".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text").strip()
    duplicates: list[str] = []
    try:
        data = json.loads(text, object_pairs_hook=lambda pairs: _object_noting_duplicates(pairs, duplicates))
    except ValueError:
        return SummaryVerdict(False, reason="the answer is not exactly one JSON object")
    if not isinstance(data, dict):
        return SummaryVerdict(False, reason="the answer is not a JSON object")
    if duplicates:
        return SummaryVerdict(False, reason=f"duplicate field(s): {', '.join(sorted(set(duplicates)))}")
    extra = sorted(set(data) - set(SUMMARY_FIELDS))
    if extra:
        return SummaryVerdict(False, reason=f"unexpected field(s): {', '.join(extra)}")
    missing = [f for f in SUMMARY_FIELDS if f not in data]
    if missing:
        return SummaryVerdict(False, reason=f"missing field(s): {', '.join(missing)}")
    empty = [f for f in SUMMARY_FIELDS if not isinstance(data[f], str) or not data[f].strip()]
    if empty:
        return SummaryVerdict(False, reason=f"empty or non-text field(s): {', '.join(empty)}")
    return SummaryVerdict(True, fields={f: data[f] for f in SUMMARY_FIELDS})


def _object_noting_duplicates(pairs: list[tuple[str, Any]], duplicates: list[str]) -> dict[str, Any]:
    """A JSON object whose repeated keys are noted (``json.loads`` keeps the last one silently)."""
    data: dict[str, Any] = {}
    for key, value in pairs:
        if key in data:
            duplicates.append(key)
        data[key] = value
    return data


def render_pipeline_summary(fields: dict[str, str]) -> str:
    """The stored compaction summary: the accepted JSON, pretty-printed in the fixed field order."""
    return PIPELINE_SUMMARY_PREFIX + json.dumps({f: fields[f] for f in SUMMARY_FIELDS}, indent=2, ensure_ascii=False)
