"""Known keys out of every model call's error text and every tool's output (the redaction seams).

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
from pi_tui.core.redact import SECRET_HEADER, Redactor, secret_env_values
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
        found += [resolve_config_value(value, dict(env)) for value in raw if value and not value.startswith("!")]
    return [value for value in found if value]


class ProviderRedactionError(RuntimeError):
    """A provider's exception whose text held a secret, re-raised with the secret redacted."""


class RedactingProvider:
    """``inner`` with the session's known secrets redacted from its error texts."""

    def __init__(self, inner: Provider, redactor: Redactor) -> None:
        self.inner = inner
        self._redactor = redactor

    def stream(self, request: CompletionRequest) -> AsyncIterator[AssistantMessageEvent]:
        return self._stream(request)

    async def _stream(self, request: CompletionRequest) -> AsyncIterator[AssistantMessageEvent]:
        try:
            async for event in self.inner.stream(request):
                yield self._clean(event)
        except Exception as err:
            text = str(err)
            clean = self._redactor.redact(text)
            if clean != text:
                raise ProviderRedactionError(clean) from None
            raise

    def _clean(self, event: AssistantMessageEvent) -> AssistantMessageEvent:
        kind = event.get("type")
        if kind not in ("error", "done"):
            return event
        field = "error" if kind == "error" else "message"
        message: Any = event.get(field)
        if not isinstance(message, dict):
            return event
        text = message.get("errorMessage")
        if not isinstance(text, str):
            return event
        clean = self._redactor.redact(text)
        if clean == text:
            return event
        return cast(AssistantMessageEvent, {**event, field: {**message, "errorMessage": clean}})


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
