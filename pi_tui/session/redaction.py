"""Known keys out of every model call's error text and reply, and every tool's output (the
redaction seams).

Every model call the session makes — the agent's turns, retries, compaction and branch
summaries — goes through the provider ``AgentSession.provider_for`` hands out, so this wrapper
sees each error text as it is born, before anything stores or shows it: the final message's
``errorMessage`` (then the session file, the HTML export, JSON/RPC events, stderr, the TUI, retry
notices and compaction errors all carry the redacted text) and the text of an exception a
provider raised against its contract (the agent loop turns that into ``errorMessage`` too).
Providers themselves stay untouched (they may redact their own key as well). ``RedactingTool``
does the same for what tools return, which is the other way text from outside enters.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator, Mapping
from typing import Any, cast

from pi_tui.core.errors import ToolError
from pi_tui.core.messages import JsonValue, UserContent
from pi_tui.core.provider import AssistantMessageEvent, CompletionRequest, Provider
from pi_tui.core.redact import SECRET_HEADER, Redactor, TextStreamRedactor, secret_env_values
from pi_tui.core.tool import Tool, ToolAborted, ToolContext, ToolResult


def known_secrets(registry: Any, api_key: str | None, env: Mapping[str, str]) -> list[str]:
    """The keys a session knows at start: ``--api-key``, secret-named env values, and models.json
    ``apiKey``s and credential headers written as literals or env names. ``!command`` values are
    not run for this; each becomes known when a request resolves it (``api_key_for``)."""
    from pi_tui.providers.models_json import resolve_config_value

    found: list[str | None] = [api_key, *secret_env_values(env)]
    providers = getattr(registry, "providers", None) or {}
    for config in providers.values():
        raw = [config.api_key, *(v for k, v in config.headers.items() if SECRET_HEADER.search(k))]
        values = [resolve_config_value(value, dict(env)) for value in raw if value and not value.startswith("!")]
        found += values
        found += [credential_without_scheme(value) for value in values if value]
    return [value for value in found if value]


def credential_without_scheme(value: str) -> str | None:
    """``"Bearer TOKEN"`` -> ``"TOKEN"``: a proxy quoting the token, or a model printing it, does
    not repeat the scheme word. None when the value is not ``<word> <credential>``."""
    scheme, _, credential = value.strip().partition(" ")
    credential = credential.strip()
    if scheme.isalpha() and credential and " " not in credential:
        return credential
    return None


class ProviderRedactionError(RuntimeError):
    """A provider's exception whose text held a secret, re-raised with the secret redacted."""


class RedactingProvider:
    """``inner`` with the session's known secrets redacted from everything it streams: error
    texts, and what the model says — text, thinking and tool-call arguments, as they stream and
    in the final message. A model can know a key (a context file symlinked to models.json, a
    proxy echoing the request); what it says is stored, shown and *run*, so a tool call that
    carries a key runs with ``[redacted]`` instead (``ReplyRedactor``)."""

    def __init__(self, inner: Provider, redactor: Redactor) -> None:
        self.inner = inner
        self._redactor = redactor

    def stream(self, request: CompletionRequest) -> AsyncIterator[AssistantMessageEvent]:
        return self._stream(request)

    async def _stream(self, request: CompletionRequest) -> AsyncIterator[AssistantMessageEvent]:
        self._redactor.add(request.api_key)  # known before the reply that might quote it
        reply = ReplyRedactor(self._redactor)
        try:
            async for event in self.inner.stream(request):
                yield reply.clean(event)
        except Exception as err:
            text = str(err)
            clean = self._redactor.redact(text)
            if clean != text:
                raise ProviderRedactionError(clean) from None
            raise


_STREAMED = {"text_delta": "text", "thinking_delta": "thinking", "toolcall_delta": "arguments"}


class ReplyRedactor:
    """One reply's events with known keys taken out. Streamed text goes through a
    ``TextStreamRedactor`` per block, so a key split between deltas never shows, not even its
    beginning; each ``partial`` snapshot shows the blocks as redacted so far (the arguments of a
    tool call redacted once per parse, not per delta); block ends and the final message are
    redacted whole. Signatures and other opaque fields are left alone."""

    def __init__(self, redactor: Redactor) -> None:
        self._redactor = redactor
        self._keys = redactor.values
        self._streams: dict[tuple[int, str], TextStreamRedactor] = {}
        self._final: dict[tuple[int, str], str] = {}
        self._previews: dict[tuple[int, str], str] = {}
        self._shown: dict[tuple[int, str], str] = {}
        self._arguments: dict[int, tuple[Any, Any]] = {}

    def clean(self, event: AssistantMessageEvent) -> AssistantMessageEvent:
        if not self._keys:
            return event
        out: dict[str, Any] = dict(event)
        kind = event["type"]
        index = out.get("contentIndex")
        if kind in _STREAMED and isinstance(index, int):
            out["delta"] = self._delta(index, _STREAMED[kind], str(out.get("delta") or ""))
        elif kind in ("text_end", "thinking_end") and isinstance(index, int):
            out["content"] = self._redactor.redact(str(out.get("content") or ""))
            self._shown[(index, "text" if kind == "text_end" else "thinking")] = out["content"]
        elif kind == "toolcall_end":
            out["toolCall"] = self._block(-1, out["toolCall"], final=True)
        for field in ("partial", "message", "error"):
            if isinstance(out.get(field), dict):
                out[field] = self._message(out[field], final=field != "partial")
        return cast(AssistantMessageEvent, out)

    def _delta(self, index: int, field: str, delta: str) -> str:
        """The delta as shown; the block's text so far goes into ``_shown`` for its partials."""
        key = (index, field)
        stream = self._streams.setdefault(key, TextStreamRedactor(self._keys))
        ready, preview_before = stream.feed(delta), self._previews.get(key, "")
        final = self._final[key] = self._final.get(key, "") + ready
        preview = self._previews[key] = stream.preview()
        self._shown[key] = final + preview
        tail = ready + preview  # the shown text grows by this past what was final before
        return tail[len(preview_before):] if tail.startswith(preview_before) else tail

    def _message(self, message: dict[str, Any], *, final: bool) -> dict[str, Any]:
        out = dict(message)
        content = out.get("content")
        if isinstance(content, list):
            out["content"] = [self._block(i, b, final=final) if isinstance(b, dict) else b
                              for i, b in enumerate(content)]
        if isinstance(out.get("errorMessage"), str):
            out["errorMessage"] = self._redactor.redact(out["errorMessage"])
        return out

    def _block(self, index: int, block: dict[str, Any], *, final: bool) -> dict[str, Any]:
        kind = block.get("type")
        field = "text" if kind == "text" else "thinking" if kind == "thinking" else None
        if field is not None and isinstance(block.get(field), str):
            shown = None if final else self._shown.get((index, field))
            return {**block, field: shown if shown is not None else self._redactor.redact(block[field])}
        if kind != "toolCall":
            return block
        out = dict(block)
        for name in ("id", "name"):
            if isinstance(out.get(name), str):
                out[name] = self._redactor.redact(out[name])
        arguments = block.get("arguments")
        cached = self._arguments.get(index)
        if not final and cached is not None and cached[0] is arguments:
            out["arguments"] = cached[1]  # the same parse as the last delta's: redacted once
        else:
            out["arguments"] = _redacted(arguments, self._redactor)
            self._arguments[index] = (arguments, out["arguments"])
        return out


class RedactingTool:
    """``inner`` with the session's known secrets redacted from what it returns: the result, every
    live update and the text of a failure. Tool output is how a key would otherwise reach the
    conversation (a model told to ``cat ~/.pi/agent/models.json`` or to read a ``.env``); the
    result passes here before the events, the session file and the next request see it.
    (A huge output's full-output file is written as the command prints, before any result exists:
    the shell tools redact it on the way with ``ToolContext.secret_values``, ``tools/output.py``.)"""

    def __init__(self, inner: Tool, redactor: Redactor) -> None:
        self.inner = inner
        self._redactor = redactor
        self.name = inner.name
        self.label = inner.label
        self.description = inner.description
        self.parameters = inner.parameters
        self.prompt_snippet = inner.prompt_snippet
        self.prompt_guidelines = inner.prompt_guidelines
        self.execution_mode = inner.execution_mode

    def __getattr__(self, name: str) -> Any:  # prepare_arguments and other optional hooks
        return getattr(self.inner, name)

    async def execute(self, call_id: str, args: dict[str, JsonValue], ctx: ToolContext) -> ToolResult:
        def on_update(result: ToolResult) -> None:
            ctx.on_update(self._clean(result))

        try:
            result = await self.inner.execute(call_id, args, dataclasses.replace(ctx, on_update=on_update))
        except ToolAborted as aborted:
            raise ToolAborted(self._clean(aborted.result)) from None
        except asyncio.CancelledError:
            raise
        except Exception as err:
            text = str(err)
            clean = self._redactor.redact(text)
            if clean != text:
                raise ToolError(clean) from None
            raise
        return self._clean(result) if isinstance(result, ToolResult) else result

    def _clean(self, result: ToolResult) -> ToolResult:
        if not self._redactor.values:
            return result
        content = cast(list[UserContent], _redacted(result.content, self._redactor))
        return dataclasses.replace(result, content=content, details=_redacted(result.details, self._redactor))


def _redacted(value: Any, redactor: Redactor) -> Any:
    """``value`` with every string in it redacted (JSON-shaped data)."""
    if isinstance(value, str):
        return redactor.redact(value)
    if isinstance(value, list):
        return [_redacted(v, redactor) for v in value]
    if isinstance(value, dict):
        return {k: _redacted(v, redactor) for k, v in value.items()}
    return value
