"""The provider for real models: one streamed call through litellm (pi-behaviour.md §7.1, §14).

litellm costs several seconds and ~200 MB to import, so nothing imports it until a real model is
first needed (``load_litellm``), and the TUI can warm it in a thread after its first frame
(``preload``). Before the import we set what stack-facts.md found necessary:

* ``LITELLM_OFFLINE_MODE=true`` — no model-cost-map fetch at import (5 s timeout, then retries);
* ``LITELLM_MODE=PRODUCTION`` — no ``.env`` loading from the user's repository;
* ``TIKTOKEN_CACHE_DIR`` at litellm's bundled tokenizer files — tiktoken never downloads;
* after the import, ``suppress_debug_info`` — no help text on stdout, which print/JSON modes own.

Calls pass ``max_retries=0``: retries are the session's job, with visible events.

``stream()`` never raises for model, HTTP or network failures: they end the stream with an
``error`` event whose message carries ``errorMessage``, ``errorKind`` and, for rate limits,
``retryAfterMs``. Cancellation (``asyncio.CancelledError``) propagates and closes the HTTP stream.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from collections.abc import AsyncIterator
from types import ModuleType
from typing import Any

from pi_tui.core.deadline import within
from pi_tui.core.provider import AssistantMessageEvent, CompletionRequest
from pi_tui.providers.litellm_catalog import point_tiktoken_at_bundled_files
from pi_tui.providers.litellm_continuity import Continuity, NativeFinishWatch
from pi_tui.providers.litellm_convert import (
    chunk_to_dict,
    classify_exception,
    completion_kwargs,
    encoded_body,
    family_body,
)
from pi_tui.providers.litellm_encode import family_of, litellm_name
from pi_tui.providers.stream_assembler import StreamAssembler
from pi_tui.providers.stream_failures import (
    CONNECTION_CUT_MESSAGE,
    TIMEOUT_MESSAGE,
    keepalive_timeout_message,
)

DEFAULT_TIMEOUT_S = 600.0
"""Per-read timeout (pi's SDK default is 10 minutes); a stalled stream fails after this long, and
so (``ReplyDeadline``) does one whose reply stops growing while keep-alives keep coming."""

_ENV_BEFORE_IMPORT = {"LITELLM_OFFLINE_MODE": "true", "LITELLM_MODE": "PRODUCTION"}
_lock = threading.Lock()
_litellm: ModuleType | None = None


def prepare_environment() -> None:
    """The environment litellm must see at import (explicit user settings are kept)."""
    for name, value in _ENV_BEFORE_IMPORT.items():
        os.environ.setdefault(name, value)
    point_tiktoken_at_bundled_files()


def load_litellm() -> ModuleType:
    """Import and configure litellm once (thread-safe; the first caller pays the import)."""
    global _litellm
    if _litellm is not None:
        return _litellm
    with _lock:
        if _litellm is None:
            prepare_environment()
            import litellm

            litellm.suppress_debug_info = True
            litellm.telemetry = False
            # litellm logs warnings (e.g. dropped params) to stderr, which would corrupt the TUI;
            # everything that matters reaches the user as the reply's errorMessage instead.
            for name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy"):
                logging.getLogger(name).setLevel(logging.CRITICAL)
            _litellm = litellm
    return _litellm


def is_loaded() -> bool:
    return _litellm is not None


def warm_up(litellm_model: str | None = None) -> None:
    """Import litellm and, given a model name, pay its first-call cost too.

    litellm's first call imports another ~90 modules (its logging, the provider's
    transformation) and builds its per-provider state: 0.5–1.3 s measured here, on the critical
    path of the first answer. A ``mock_response`` call (litellm answers it itself, no network)
    does that work ahead of time; a later real call takes ~0.05 s more than the next ones.
    """
    litellm: Any = load_litellm()
    if not litellm_model:
        return
    try:
        response = litellm.completion(model=litellm_model, messages=[{"role": "user", "content": "warm-up"}], stream=True,
                                      mock_response="ok", api_key="warm-up", max_retries=0)
        for _ in response:
            pass
    except Exception:  # only a speed-up: the real call reports any real problem
        pass


def preload(litellm_model: str | None = None) -> threading.Thread:
    """Start ``warm_up`` on a daemon thread (the TUI after its first frame; print, JSON and RPC
    mode at process start, ``modes/litellm_warmup.py``).

    A thread still importing delays interpreter exit by the rest of the import; callers that
    quit early should end the process with ``os._exit`` after flushing.
    """
    thread = threading.Thread(target=warm_up, args=(litellm_model,), name="litellm-preload", daemon=True)
    thread.start()
    return thread


class LiteLLMProvider:
    """Streams one assistant response from any model litellm can call."""

    def __init__(self, *, timeout: float = DEFAULT_TIMEOUT_S) -> None:
        self.timeout = timeout

    async def stream(self, request: CompletionRequest) -> AsyncIterator[AssistantMessageEvent]:
        assembler = StreamAssembler(request.model)
        family = family_of(litellm_name(request.model))
        continuity = Continuity(family)
        finish_watch = NativeFinishWatch(family)
        try:
            litellm: Any = _litellm or await asyncio.to_thread(load_litellm)
            body = encoded_body(request) if family == "openai" else family_body(request)
            timeout = request.timeout_ms / 1000 if request.timeout_ms else self.timeout
            kwargs = completion_kwargs(request, body, timeout=timeout)
            response = await litellm.acompletion(**kwargs)
            await finish_watch.attach(response)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            for event in _failure(assembler, exc):
                yield event
            return
        yield assembler.start()
        progress = ReplyDeadline(timeout)
        try:
            async for chunk in progress.watch(response):
                data = chunk_to_dict(chunk, family)
                # litellm reports the requested model on every chunk; the served one (pi's
                # responseModel) is kept on the stream wrapper.
                served = getattr(response, "_provider_response_model", None)
                if isinstance(served, str) and served:
                    data["model"] = served
                if _has_finish_reason(data) and (finish_watch.ended_early or _ended_without_finish_reason(response)):
                    break  # litellm made this finish up: the stream ended without one
                events = assembler.feed(data)
                continuity.after_chunk(assembler.message, data)
                for event in events:
                    yield event
                if events:  # the reply grew; counted from now, not from before the consumer took its time
                    progress.made()
        except asyncio.CancelledError:
            await _close_quietly(response)
            raise
        except ReplyStalled:
            await _close_quietly(response)
            continuity.finish(assembler.message)
            for event in assembler.interrupted(keepalive_timeout_message(progress.seconds)):
                yield event
            return
        except Exception as exc:
            continuity.finish(assembler.message)
            for event in _failure(assembler, exc):
                yield event
            return
        continuity.finish(assembler.message)
        if finish_watch.ended_early or _ended_without_finish_reason(response):
            for event in assembler.interrupted(CONNECTION_CUT_MESSAGE + " (no finish reason)"):
                yield event
            return
        if (kwargs.get("stream_options") or {}).get("include_usage") and not _provider_sent_usage(response):
            # the usage comes after the finish reason; without it the stream was cut there
            for event in assembler.interrupted(CONNECTION_CUT_MESSAGE + " (no usage)"):
                yield event
            return
        for event in assembler.finish():
            yield event


class ReplyStalled(Exception):
    """The reply did not grow for the whole deadline although the stream stayed open."""


class ReplyDeadline:
    """The read timeout counted from the last piece of the reply, not the last byte.

    litellm's HTTP client times out a silent stream by itself (its read timeout, reported as
    ``TIMEOUT_MESSAGE``), but a server that keeps the connection busy with keep-alives (SSE
    comments, Anthropic ``ping`` events, empty chunks) resets that clock forever. Chunks are
    awaited here with what is left of ``timeout`` since the last ``made()`` plus a short grace,
    so a silent stream is still litellm's timeout and a busy one that never grows is ours.

    litellm shows whole events only, never the bytes of one still arriving: unlike the own
    clients (``http_wire.ReplyWatch``), this route takes a single event that drips in for longer
    than ``seconds`` for a stalled reply.
    """

    GRACE_S = 1.0

    def __init__(self, timeout: float) -> None:
        self.seconds = timeout + self.GRACE_S
        """How long the reply may go without growing."""
        self._deadline = 0.0

    def made(self) -> None:
        self._deadline = asyncio.get_running_loop().time() + self.seconds

    async def watch(self, chunks: Any) -> AsyncIterator[Any]:
        iterator = chunks.__aiter__()
        self.made()
        while True:
            remaining = self._deadline - asyncio.get_running_loop().time()
            try:
                chunk = await within(iterator.__anext__(), max(remaining, 0.0))
            except StopAsyncIteration:
                return
            except TimeoutError:
                raise ReplyStalled from None
            yield chunk


def _failure(assembler: StreamAssembler, exc: Exception) -> list[AssistantMessageEvent]:
    message, kind, retry_after = classify_exception(exc)
    if message in (CONNECTION_CUT_MESSAGE, TIMEOUT_MESSAGE):  # a broken stream: say where it broke
        return assembler.interrupted(message)
    return assembler.fail(message, kind, retry_after_ms=retry_after)


def _ended_without_finish_reason(response: Any) -> bool:
    """litellm ends some streams that were cut cleanly (no finish reason: an empty body, an
    Anthropic stream without ``message_delta``) as if they had finished, making up ``stop``; its
    stream wrapper still knows that no finish reason arrived. Such a stream is not an answer."""
    if not hasattr(response, "received_finish_reason"):
        return False
    return response.received_finish_reason is None and getattr(response, "intermittent_finish_reason", None) is None


def _provider_sent_usage(response: Any) -> bool:
    """Whether the server's stream carried usage. litellm makes up usage (its own token count)
    for a stream that ended without it, so the usage the adapter sees proves nothing; the
    wrapper's recorded chunks keep what really came."""
    chunks = getattr(response, "chunks", None)
    if not isinstance(chunks, list):
        return True
    return any(getattr(chunk, "usage", None) is not None for chunk in chunks)


def _has_finish_reason(chunk: dict[str, Any]) -> bool:
    choices = chunk.get("choices") or []
    return bool(choices and isinstance(choices[0], dict) and choices[0].get("finish_reason"))


async def _close_quietly(response: Any) -> None:
    """Drop the HTTP stream of a cancelled call (best effort: litellm wraps it differently per
    provider)."""
    for target in (response, getattr(response, "completion_stream", None)):
        close = getattr(target, "aclose", None)
        if close is None:
            continue
        try:
            await close()
        except Exception:
            pass
        return
