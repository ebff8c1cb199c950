"""The errorMessages every wire gives a stream that broke, in one place below the wires and the fakes.

The real clients (``http_wire``, ``openai_sse``, the litellm adapter, the Responses, Gemini and
Anthropic decoders) and the test doubles in ``pi_tui.testing`` report a cut or a stall with the
same words, so a test can compare the two and pi's retry pattern (§13.7) matches both.
"""

from __future__ import annotations

CONNECTION_CUT_MESSAGE = "Connection error: the stream ended before it was complete"
"""The errorMessage of a stream cut mid-way (every wire, both doubles and the litellm adapter)."""

TIMEOUT_MESSAGE = "Request timed out: no data from the provider within the read timeout"
"""The errorMessage of a stalled stream (matches pi's retryable ``timed? out``)."""


def keepalive_timeout_message(seconds: float) -> str:
    """The errorMessage of a stream whose reply stopped growing while the server kept the
    connection busy (SSE comments, Anthropic ``ping`` events, empty chunks, blank lines) for
    ``seconds``: the read timeout counts from the last piece of the reply, not the last byte.
    Says "timed out", like every timeout, so pi's retry pattern (§13.7) matches it too."""
    return f"Request timed out: only keep-alives from the provider for {seconds:g} s, no more of the reply"
