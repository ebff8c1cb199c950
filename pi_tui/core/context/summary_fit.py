"""A summarizer request must fit the model's window (a pi-tui bound; pi sends it as it is).

Counted in real tokens (o200k, ``core.tokens.count_tokens_exact``, the tokenizer ``/context``
uses), not chars/4: chars/4 undercounts CJK text ~2.4×, so a request believed to be 6,328 tokens
was 14,688 and a real 8k model refused it on every try — neither automatic compaction nor
``/compact`` could ever shrink such a session.

What gives way, in this order, when the request would not fit:

1. the output budget: ``floor(0.8 × reserve)`` (13,107 tokens with the defaults) is far more than
   a summary needs, and on a 32k window it left ~19k tokens for the conversation. It is lowered
   to what the window leaves, but not below ``OUTPUT_FLOOR_TOKENS`` (a summary cut off there is
   a failure, never written);
2. the tool results: pi's 2,000-character cap, then 1,000, 500, 200, 0;
3. last, the oldest text is dropped behind a marker, and the caller says so in the events pane
   with what was dropped (``dropped_notice``): the session file keeps it, the summary does not.
"""

from __future__ import annotations

from collections.abc import Sequence

from pi_tui.core.context.compaction_prompts import SUMMARIZATION_SYSTEM_PROMPT
from pi_tui.core.context.convert import convert_to_llm
from pi_tui.core.context.serialize import TOOL_RESULT_MAX_CHARS, serialize_conversation
from pi_tui.core.messages import AgentMessage
from pi_tui.core.tokens import count_tokens_exact, tail_within_tokens

OUTPUT_FLOOR_TOKENS = 4096
"""The least output budget a summary request is given to make room for its input."""
REQUEST_MARGIN_TOKENS = 256
"""Slack for the wire encoding around the prompt (roles, chat-template framing)."""
_TRIM_STEPS = (TOOL_RESULT_MAX_CHARS, 1000, 500, 200, 0)


class Fitted:
    """A plain class, not a dataclass: this module is imported on the way to ``-p``'s answer."""

    __slots__ = ("dropped", "max_tokens", "text")

    def __init__(self, text: str, max_tokens: int, dropped: str = "") -> None:
        self.text = text
        """The serialized conversation as it is sent."""
        self.max_tokens = max_tokens
        """The output budget of the request (lowered only when the window asked for it)."""
        self.dropped = dropped
        """The oldest serialized text left out so that the request fits ("" when nothing was)."""


def fit_conversation(messages: Sequence[AgentMessage], *, budget_tokens: int | None) -> tuple[str, str]:
    """Serialize for a summarizer within ``budget_tokens``: (text, dropped oldest text).

    Without a budget the text is exactly pi's serialization.
    """
    llm = convert_to_llm(list(messages))
    text = serialize_conversation(llm)
    if budget_tokens is None or count_tokens_exact(text) <= budget_tokens:
        return text, ""
    for cap in _TRIM_STEPS[1:]:
        text = serialize_conversation(llm, tool_result_max_chars=cap)
        if count_tokens_exact(text) <= budget_tokens:
            return text, ""
    start = tail_within_tokens(text, max(0, budget_tokens - 40))  # the marker's own tokens
    marker = f"[... {start} earlier characters omitted so the summary request fits the context window]\n\n"
    return marker + text[start:], text[:start]


def fit_summary_request(
    messages: Sequence[AgentMessage], *, context_window: int | None, max_tokens: int, fixed_text: str,
    system_prompt: str = SUMMARIZATION_SYSTEM_PROMPT,
) -> Fitted:
    """The conversation and output budget of one summarizer request that fits the window.

    ``fixed_text`` is the rest of the user message (instructions, a previous summary).
    """
    if not context_window or context_window <= 0:
        text, _ = fit_conversation(messages, budget_tokens=None)
        return Fitted(text, max_tokens)
    fixed = count_tokens_exact(system_prompt) + count_tokens_exact(fixed_text) + REQUEST_MARGIN_TOKENS
    whole, _ = fit_conversation(messages, budget_tokens=None)
    room = context_window - fixed - count_tokens_exact(whole)
    if room < max_tokens:
        max_tokens = max(min(max_tokens, OUTPUT_FLOOR_TOKENS), room)
    text, dropped = fit_conversation(messages, budget_tokens=max(0, context_window - fixed - max_tokens))
    return Fitted(text, max_tokens, dropped)


def dropped_notice(what: str, dropped: str, model_id: str, context_window: int) -> str:
    """The events-pane warning for a request that had to leave its oldest text out."""
    head = _snippet(dropped[:80])
    tail = _snippet(dropped[-80:])
    return (
        f"{what}: the oldest {len(dropped):,} characters of the history were left out of the summary request "
        f"so that it fits {model_id}'s {context_window:,}-token window (from \u201c{head}\u2026\u201d to "
        f"\u201c\u2026{tail}\u201d). The session file keeps them; the summary does not."
    )


def _snippet(text: str) -> str:
    from pi_tui.core.terminal_text import printable  # only when a notice is shown

    return " ".join(printable(text).split())
