"""Known keys out of every model call's error text (the one redaction choke point).

Every model call the session makes — the agent's turns, retries, compaction and branch
summaries — goes through the provider ``AgentSession.provider_for`` hands out, so this wrapper
sees each error text as it is born, before anything stores or shows it: the final message's
``errorMessage`` (then the session file, the HTML export, JSON/RPC events, stderr, the TUI, retry
notices and compaction errors all carry the redacted text) and the text of an exception a
provider raised against its contract (the agent loop turns that into ``errorMessage`` too).
Providers themselves stay untouched (they may redact their own key as well).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import Any, cast

from pi_tui.core.provider import AssistantMessageEvent, CompletionRequest, Provider
from pi_tui.core.redact import SECRET_HEADER, Redactor, secret_env_values


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
