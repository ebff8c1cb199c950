"""Computed views of a session for the modes (``get_context_usage``; §2.2)."""

from __future__ import annotations

from typing import Any

from pi_tui.core.messages import AgentMessage, empty_usage
from pi_tui.core.provider import ModelInfo
from pi_tui.core.tokens import calculate_context_tokens, estimate_context_tokens
from pi_tui.session.state import ContextUsage


def context_usage(model: ModelInfo | None, messages: list[AgentMessage], branch: list[Any]) -> ContextUsage | None:
    """None without a model (or a window ≤ 0). With a compaction on the branch and no good reply
    since, the tokens are unknown (``tokens``/``percent`` None): the kept messages would still
    report their pre-compaction usage."""
    if model is None or model.context_window <= 0:
        return None
    window = model.context_window
    if not _usage_known_since_compaction(branch):
        return ContextUsage(tokens=None, context_window=window, percent=None, estimated=False)
    estimate = estimate_context_tokens(messages)
    return ContextUsage(
        tokens=estimate.tokens,
        context_window=window,
        percent=100.0 * estimate.tokens / window,
        estimated=estimate.trailing_tokens > 0 or estimate.usage_tokens == 0,
    )


def _usage_known_since_compaction(branch: list[Any]) -> bool:
    compaction_at = next((i for i in range(len(branch) - 1, -1, -1) if branch[i].get("type") == "compaction"), None)
    if compaction_at is None:
        return True
    for entry in reversed(branch[compaction_at + 1:]):
        message = entry.get("message") if entry.get("type") == "message" else None
        if isinstance(message, dict) and message.get("role") == "assistant" \
                and message.get("stopReason") not in ("error", "aborted"):
            return calculate_context_tokens(message.get("usage") or empty_usage()) > 0
    return False
