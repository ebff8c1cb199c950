"""What a litellm stream carries beside text, kept on the assembled message so the next request
can send it back (pi-behaviour.md §15.12, §15.15).

``StreamAssembler`` reads the OpenAI chunk shape; litellm adds provider fields to it that only
the sender can interpret. ``Continuity.after_chunk`` runs after each chunk was fed and puts them
where pi's session file has them:

* **Gemini**: ``delta.provider_specific_fields.thought_signatures`` → the ``thinkingSignature``
  of the thinking block or the ``textSignature`` of the text block the chunk added to; a tool
  call's ``provider_specific_fields.thought_signature`` → that call's ``thoughtSignature``.
  A thinking block that got no signature has no ``thinkingSignature`` key (as pi stores it).
* **Anthropic family**: ``delta.thinking_blocks`` → the signature of the thinking block
  (appended, as pi appends ``signature_delta``s; ``""`` when none came), and each
  ``redacted_thinking`` block → ``{"type":"thinking","thinking":"[Reasoning redacted]",
  "thinkingSignature":<data>,"redacted":true}``.

Without this the assembler stores the name of the field the reasoning came in
(``reasoning_content``) as the signature, which no API accepts back.
"""

from __future__ import annotations

from typing import Any

from pi_tui.core.messages import AssistantMessage
from pi_tui.providers.litellm_encode import Family

REDACTED_THINKING_TEXT = "[Reasoning redacted]"


def _field(value: Any, name: str) -> Any:
    return value.get(name) if isinstance(value, dict) else getattr(value, name, None)


class Continuity:
    """Per-stream bookkeeping of signatures and redacted thinking."""

    def __init__(self, family: Family) -> None:
        self.family = family
        self._signed: set[int] = set()  # thinking blocks whose signature came from the stream

    def after_chunk(self, message: AssistantMessage, chunk: dict[str, Any]) -> None:
        if self.family not in ("gemini", "anthropic"):
            return
        choices = chunk.get("choices") or []
        if not choices:
            return
        delta = choices[0].get("delta") or {}
        if self.family == "gemini":
            self._gemini(message, delta)
        else:
            self._anthropic(message, delta)

    def finish(self, message: AssistantMessage) -> None:
        """Replace the placeholder signature of thinking blocks nothing signed."""
        if self.family not in ("gemini", "anthropic"):
            return
        content: list[Any] = message["content"]
        for index, block in enumerate(content):
            if block["type"] != "thinking" or block.get("redacted") or index in self._signed:
                continue
            if self.family == "gemini":
                block.pop("thinkingSignature", None)
            else:
                block["thinkingSignature"] = ""

    def _last_block(self, message: AssistantMessage, kind: str) -> tuple[int, dict[str, Any]] | None:
        content: list[Any] = message["content"]
        for index in range(len(content) - 1, -1, -1):
            block = content[index]
            if block["type"] == kind and not block.get("redacted"):
                return index, block
        return None

    def _gemini(self, message: AssistantMessage, delta: dict[str, Any]) -> None:
        calls = delta.get("tool_calls") or []
        content: list[Any] = message["content"]
        for call in calls:
            signature = (call.get("provider_specific_fields") or {}).get("thought_signature")
            if not signature:
                continue
            for block in content:
                if block["type"] == "toolCall" and block["id"] == call.get("id"):
                    block["thoughtSignature"] = str(signature)
        signatures = [s for s in (delta.get("provider_specific_fields") or {}).get("thought_signatures") or [] if s]
        if not signatures or calls:
            return  # a function call's signature is listed here too; it belongs to the call
        kind = "thinking" if delta.get("reasoning_content") else "text"
        found = self._last_block(message, kind) or self._last_block(message, "text")
        if found is None:
            return
        index, block = found
        if block["type"] == "thinking":
            block["thinkingSignature"] = str(signatures[-1])
            self._signed.add(index)
        else:
            block["textSignature"] = str(signatures[-1])

    def _anthropic(self, message: AssistantMessage, delta: dict[str, Any]) -> None:
        content: list[Any] = message["content"]
        for entry in delta.get("thinking_blocks") or []:
            kind = _field(entry, "type")
            if kind == "redacted_thinking":
                content.append({"type": "thinking", "thinking": REDACTED_THINKING_TEXT,
                                "thinkingSignature": str(_field(entry, "data") or ""), "redacted": True})
                continue
            signature = _field(entry, "signature")
            if kind != "thinking" or not signature:
                continue
            found = self._last_block(message, "thinking")
            if found is None:  # a signature before any thinking text: the block starts empty
                content.append({"type": "thinking", "thinking": "", "thinkingSignature": ""})
                found = len(content) - 1, content[-1]
            index, block = found
            previous = block.get("thinkingSignature", "") if index in self._signed else ""
            block["thinkingSignature"] = previous + str(signature)
            self._signed.add(index)


class NativeFinishWatch:
    """Whether the provider's own stream said it was finished.

    Gemini streams have no ``[DONE]``; litellm skips lines it cannot parse and ends every stream
    with ``finish_reason: "stop"``, even one that was cut off cleanly or answered with garbage,
    which would then pass for a short, successful answer. This watch looks at the provider's
    raw chunks (Gemini's ``finishReason``, Anthropic's ``message_delta``/``message_stop``) by
    wrapping the parser of litellm's stream iterator. When litellm's internals do not have the
    expected shape it stays silent (``ended_early`` is False): it can only add an error.
    """

    def __init__(self, family: Family) -> None:
        self.family = family
        self._watching = False
        self._finished = False

    async def attach(self, response: Any) -> None:
        """Open the stream now (HTTP errors raise here) and watch its raw chunks."""
        if self.family not in ("gemini", "anthropic") or not hasattr(response, "fetch_stream"):
            return
        stream = await response.fetch_stream()
        parse = getattr(stream, "chunk_parser", None)
        if parse is None:
            return

        def watched(chunk: Any) -> Any:
            if isinstance(chunk, dict) and self._says_finished(chunk):
                self._finished = True
            return parse(chunk)

        stream.chunk_parser = watched
        self._watching = True

    def _says_finished(self, chunk: dict[str, Any]) -> bool:
        if self.family == "gemini":
            return any(isinstance(c, dict) and c.get("finishReason") for c in chunk.get("candidates") or [])
        return chunk.get("type") in ("message_delta", "message_stop")

    @property
    def ended_early(self) -> bool:
        return self._watching and not self._finished
