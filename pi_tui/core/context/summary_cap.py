"""The previous summary a summary request carries is capped to what fits the window (pi-tui).

pi sends ``<previous-summary>`` whole. After a switch to a small model a long previous summary
(a manual ``/compact`` that kept a 60,000-character answer, a pipeline summary of long fields)
can be larger than the whole window: ``summary_fit`` may then drop all of the conversation and
the request still does not fit, so no compaction can ever succeed again in that session.

The cap applies only when the request would not fit even with the least output budget
(``OUTPUT_FLOOR_TOKENS``). The previous summary then gets what the conversation leaves, but at
least half of the input room, so the new messages keep the other half (``summary_fit`` drops
their oldest text if they need more, and says so). What gives way inside the summary, in order:

1. its ``<read-files>``/``<modified-files>`` tail: the new summary gets the cumulative lists
   again from the entry's details, so nothing is lost;
2. the older part of each section: the summary formats of ``compaction_prompts`` (pi's
   headings, split-turn parts) and the pipeline's five JSON fields keep every heading (field),
   and each section keeps its newest end (pi's update format appends what happened since). A
   section that fits its share is kept whole; the others share the rest evenly;
3. if that still does not fit (a summary without structure), its newest end.

The session file keeps the old summary whole (its compaction entry is never rewritten); the
caller says in the events pane how much was cut (``capped_notice``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence

from pi_tui.core.context.summary_fit import (
    OUTPUT_FLOOR_TOKENS,
    REQUEST_MARGIN_TOKENS,
    fit_conversation,
)
from pi_tui.core.messages import AgentMessage
from pi_tui.core.tokens import count_tokens_exact, tail_within_tokens

PIPELINE_PREFIX = "Pipeline summary of the earlier conversation (JSON):\n"
"""``pipeline_summary.PIPELINE_SUMMARY_PREFIX`` (not imported: this module stays light)."""
SPLIT_MARK = "\n\n---\n\n**Turn Context (split turn):**\n\n"
_FILE_LISTS = re.compile(r"(?:\n\n<read-files>\n.*?\n</read-files>)?(?:\n\n<modified-files>\n.*?\n</modified-files>)?\s*\Z", re.S)
_HEADING = re.compile(r"^(?:#{1,6} .*|\*\*[^*\n]+\*\*:?)$", re.M)


class CappedSummary:
    __slots__ = ("cut_chars", "kept_tokens", "original_tokens", "text")

    def __init__(self, text: str, original_tokens: int, kept_tokens: int, cut_chars: int) -> None:
        self.text = text
        """The previous summary as the request carries it."""
        self.original_tokens = original_tokens
        self.kept_tokens = kept_tokens
        self.cut_chars = cut_chars
        """Characters of the stored summary left out of the request (0: sent whole)."""


def previous_summary_budget(
    summary: str, messages: Sequence[AgentMessage], *, context_window: int, system_prompt: str,
    prompt_text: Callable[[str], str],
) -> int | None:
    """Tokens the previous summary may take in the request; None when it fits whole.

    ``prompt_text(previous)`` is the request's user message with an empty conversation.
    """
    if not summary or context_window <= 0:
        return None
    framing = count_tokens_exact(prompt_text(" "))  # the instructions and the <previous-summary> tags
    room = context_window - count_tokens_exact(system_prompt) - framing - REQUEST_MARGIN_TOKENS - OUTPUT_FLOOR_TOKENS
    conversation = count_tokens_exact(fit_conversation(messages, budget_tokens=None)[0]) if messages else 0
    if count_tokens_exact(summary) <= room - conversation:
        return None
    return max(0, room - conversation, room // 2)


def cap_previous_summary(summary: str, budget_tokens: int) -> CappedSummary:
    """``summary`` within ``budget_tokens``, keeping its structure and the newest end of each part."""
    original = count_tokens_exact(summary)
    if original <= budget_tokens:
        return CappedSummary(summary, original, original, 0)
    lists = _FILE_LISTS.search(summary)
    core = summary[: lists.start()] if lists is not None else summary
    text = core if count_tokens_exact(core) <= budget_tokens else _cut_structured(core, budget_tokens)
    kept = count_tokens_exact(text)
    if kept > budget_tokens:  # no structure to keep (or a heading-only budget): the newest end
        text = _tail(core, budget_tokens)
        kept = count_tokens_exact(text)
    return CappedSummary(text, original, kept, max(0, len(summary) - _kept_chars(text)))


def capped_notice(what: str, capped: CappedSummary, model_id: str, context_window: int) -> str:
    return (
        f"{what}: the previous summary ({capped.original_tokens:,} tokens) was cut to {capped.kept_tokens:,} tokens "
        f"in the summary request so that it fits {model_id}'s {context_window:,}-token window "
        f"({capped.cut_chars:,} characters left out: its file lists and the oldest part of its longest sections). "
        f"The session file keeps the whole previous summary; the new summary is written from the cut one."
    )


# --------------------------------------------------------------------------- the cut


def _cut_structured(core: str, budget: int) -> str:
    # A pi compaction of a split turn that carried a pipeline summary stores the JSON whole and
    # pi's turn context after the split separator: both keep their shape, the JSON stays JSON.
    head, separator, rest = core.partition(SPLIT_MARK)
    if head.startswith(PIPELINE_PREFIX):
        fields = _json_fields(head[len(PIPELINE_PREFIX):])
        if fields is not None:
            turn_context = _sections(separator + rest) if separator else []
            bodies = {**{f"field:{k}": v for k, v in fields.items()},
                      **{str(i): body for i, (_, body) in enumerate(turn_context)}}

            def render_pipeline(share: int) -> str:
                cut = _share_out(bodies, share)
                text = PIPELINE_PREFIX + json.dumps({k: cut[f"field:{k}"] for k in fields}, indent=2, ensure_ascii=False)
                return text + "".join(h + cut[str(i)] for i, (h, _) in enumerate(turn_context))

            return _fit(budget, render_pipeline, parts=len(bodies))
    sections = _sections(core)
    bodies = {str(i): body for i, (_, body) in enumerate(sections)}

    def render(share: int) -> str:
        cut = _share_out(bodies, share)
        return "".join(head + cut[str(i)] for i, (head, _) in enumerate(sections))

    return _fit(budget, render, parts=len(bodies))


def _fit(budget: int, render: Callable[[int], str], *, parts: int) -> str:
    """Render with the largest body budget whose result fits (the framing's own tokens vary)."""
    skeleton = count_tokens_exact(render(0))
    share = budget - skeleton
    text = render(max(0, share))
    for _ in range(4):
        over = count_tokens_exact(text) - budget
        if over <= 0 or share <= 0:
            break
        share -= over + 8 * max(1, parts)
        text = render(max(0, share))
    return text


def _share_out(bodies: dict[str, str], budget: int) -> dict[str, str]:
    """Water-filling: bodies within an even share are kept whole, the rest split what is left."""
    sizes = {key: count_tokens_exact(body) for key, body in bodies.items()}
    out: dict[str, str] = {}
    left, pending = budget, sorted(bodies, key=lambda key: sizes[key])
    while pending:
        share = max(0, left) // len(pending)
        key = pending.pop(0)
        if sizes[key] <= share:
            out[key] = bodies[key]
            left -= sizes[key]
            continue
        out[key] = _tail(bodies[key], share)
        left -= share
    return {key: out[key] for key in bodies}


def _tail(text: str, budget: int) -> str:
    marker_tokens = 24
    if budget <= marker_tokens:
        return "[... cut to fit the summary request]\n" if text else ""
    start = tail_within_tokens(text, budget - marker_tokens)
    if start == 0:
        return text
    newline = text.find("\n", start, start + 200)  # start at a whole line where one is near
    start = newline + 1 if newline >= 0 else start
    return f"[... {start:,} earlier characters cut to fit the summary request]\n" + text[start:]


def _sections(core: str) -> list[tuple[str, str]]:
    """(heading with its line break, body) pairs; the split-turn separator and every markdown
    heading start a section; text before the first heading is a section without one."""
    sections: list[tuple[str, str]] = []
    for n, part in enumerate(core.split(SPLIT_MARK)):
        prefix = SPLIT_MARK if n else ""
        marks = list(_HEADING.finditer(part))
        if not marks or marks[0].start() > 0:
            end = marks[0].start() if marks else len(part)
            sections.append((prefix, part[:end]))
            prefix = ""
        for i, mark in enumerate(marks):
            end = marks[i + 1].start() if i + 1 < len(marks) else len(part)
            head_end = min(end, mark.end() + 1)
            sections.append((prefix + part[mark.start():head_end], part[head_end:end]))
            prefix = ""
    return sections


def _json_fields(text: str) -> dict[str, str] | None:
    try:
        value = json.loads(text)
    except ValueError:
        return None
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        return None
    return {str(k): v for k, v in value.items()}


def _kept_chars(text: str) -> int:
    """Characters of the original in ``text`` (the cut markers are ours)."""
    return len(re.sub(r"\[\.\.\. (?:[\d,]+ earlier characters cut|cut) to fit the summary request\]\n", "", text))
