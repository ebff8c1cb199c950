"""``retry.provider.timeoutMs`` on every model call the session makes (spec §13.7, §13.8).

The setting reaches the provider as ``CompletionRequest.timeout_ms``, which the providers apply
as an idle timeout: to connecting, to the wait for the response headers and, on the stream, to
the time since the last piece of the reply (keep-alives do not count), so a stalled stream fails
after that long (a transient error, retried per the retry settings) instead of waiting until the
server gives up, even when the server keeps pinging. Applied where the session hands out its
providers, so the agent's turns, compaction and branch summaries all get it; read at each call,
so a changed setting counts from the next call.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Callable

from pi_tui.core.provider import AssistantMessageEvent, CompletionRequest, Provider


class ProviderWithTimeout:
    """A provider whose requests carry the session's timeout (unless one is set already)."""

    def __init__(self, inner: Provider, timeout_ms: Callable[[], int | None]) -> None:
        self.inner = inner
        self._timeout_ms = timeout_ms

    def stream(self, request: CompletionRequest) -> AsyncIterator[AssistantMessageEvent]:
        timeout = self._timeout_ms()
        if request.timeout_ms is None and timeout is not None and timeout > 0:
            request = dataclasses.replace(request, timeout_ms=timeout)
        return self.inner.stream(request)


def settings_timeout_ms(settings: object) -> int | None:
    """``retry.provider.timeoutMs`` from the session's settings (None: the provider default)."""
    retry = getattr(settings, "retry_settings", None)
    if not callable(retry):
        return None
    value = retry().provider_timeout_ms
    return value if isinstance(value, int) and value > 0 else None
