"""One summarizer call: no tools, its own output budget, one user message (pi-behaviour.md §2.7).

Shared by compaction, the turn-prefix summary, branch summaries and the pipeline's JSON summary.
Summaries pass no session id (pi: they are one-off requests a prompt cache cannot reuse).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from pi_tui.core.context.compaction import SummaryRequestSpec
from pi_tui.core.errors import PiError
from pi_tui.core.messages import AssistantMessage, assistant_text, user_message
from pi_tui.core.provider import CompletionRequest, ModelInfo, Provider


class SummaryCancelled(PiError):
    """The summarizer call was aborted (Esc, ``abort()``)."""


class ExtensionHooks(Protocol):
    """The part of ``ExtensionRunner`` the runner uses (all optional at runtime)."""

    async def emit_session_before_compact(self, **kwargs: Any) -> Any: ...


def summary_request(model: ModelInfo, spec: SummaryRequestSpec, api_key: str | None) -> CompletionRequest:
    return CompletionRequest(
        model=model,
        system_prompt=spec.system_prompt,
        messages=[user_message(spec.prompt_text)],
        tools=[],
        max_tokens=spec.max_tokens,
        reasoning=spec.reasoning,  # type: ignore[arg-type]
        session_id=None,
        api_key=api_key,
    )


async def call_summarizer(provider: Provider, request: CompletionRequest) -> AssistantMessage:
    """Stream the call to its end and return the final assistant message (error or not)."""
    final: AssistantMessage | None = None
    async for event in provider.stream(request):
        if event["type"] == "done":
            final = event["message"]
        elif event["type"] == "error":
            final = event["error"]
    if final is None:
        raise PiError("the summarizer's stream ended without a final message")
    return final


def summary_text_or_raise(message: Mapping[str, Any], failure_prefix: str | None, *, max_tokens: int | None = None) -> str:
    """The answer's text blocks joined by ``\\n``; ``<prefix>: <error>`` when the call failed
    (without a prefix, pi's branch summary: the provider's message, else ``Summarization failed``).

    With ``max_tokens`` (compaction summaries) the answer must also be a whole, non-empty text:
    an empty answer, one with only thinking (a reasoning model that spent its budget thinking)
    or one cut off at the output limit would replace real history with nothing or with half a
    summary, so each is a failure and nothing is written. pi accepts all three.
    """
    stop = message.get("stopReason")
    if stop == "aborted":
        raise SummaryCancelled("Compaction cancelled")
    if stop == "error":
        if failure_prefix is None:
            raise PiError(str(message.get("errorMessage") or "Summarization failed"))
        raise PiError(f"{failure_prefix}: {message.get('errorMessage') or 'unknown error'}")
    text = assistant_text(message)  # type: ignore[arg-type]
    if max_tokens is None:
        return text
    if not text.strip():
        thought = any(b.get("type") == "thinking" for b in message.get("content") or [] if isinstance(b, Mapping))
        why = " (only thinking, stop reason " + repr(stop) + ")" if thought else f" (stop reason {stop!r})"
        raise PiError(f"{failure_prefix}: the summarizer returned no summary text{why}")
    if stop == "length":
        raise PiError(f"{failure_prefix}: the summary was cut off at its output limit ({max_tokens} tokens)")
    return text
