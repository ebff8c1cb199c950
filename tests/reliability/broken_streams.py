"""What the broken-stream reliability tests share: the wires, the faults, where a cut lands, the
agent dir pointing a real session at a fake server, and what a session file must (not) hold.

A **wire** is a way pi-tui talks to a model, each against a strict local fake:

* ``openai``: a models.json ``openai-completions`` provider → the direct client
  (``providers/openai_http.py``) → the OpenAI-compatible fake;
* ``openai-litellm``: the same provider forced through litellm (``PI_TUI_FORCE_LITELLM=1``);
* ``anthropic``: a models.json ``anthropic-messages`` provider → the direct Anthropic client
  (``providers/anthropic_http.py``) → the Anthropic fake;
* ``anthropic-litellm``: the same through litellm's Anthropic client (``PI_TUI_FORCE_LITELLM=1``);
* ``gemini``: a models.json ``google-generative-ai`` provider → the direct Gemini client
  (``providers/gemini_http.py``) → the Gemini fake;
* ``gemini-litellm``: the same through litellm's Gemini client (``PI_TUI_FORCE_LITELLM=1``);
* ``responses``: a models.json ``openai-responses`` provider → the direct Responses client
  (``providers/responses_http.py``) → the Responses fake (it has no litellm twin here);
* ``scripted``: the in-process scripted provider (SDK only), which decodes the same bytes.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pi_tui.testing.fake_anthropic_server import FakeAnthropicServer
from pi_tui.testing.fake_server import FakeServer
from pi_tui.testing.gemini_fake import GeminiFakeServer
from pi_tui.testing.responses_fake import ResponsesFakeServer

WIRES = ("openai", "openai-litellm", "anthropic", "anthropic-litellm", "gemini", "gemini-litellm", "responses")
PLACES = ("thinking", "text", "tool_args", "between_tool_calls", "before_usage")
KEEPALIVE_PLACES = ("start", "text", "tool_args")
TIMEOUT_MS = 600
"""``retry.provider.timeoutMs`` in these tests: a stall ends after 0.6 s without data."""

CUT = "Connection error: the stream ended before it was complete"
ANTHROPIC_ENDED = "Anthropic stream ended before message_stop"
"""pi's text for an Anthropic stream that ended cleanly before its end marker (kept verbatim by
the direct Anthropic client, which does not name the place)."""
TIMED_OUT = "Request timed out"
ONLY_KEEPALIVES = "Request timed out: only keep-alives from the provider for "
MALFORMED = "Malformed stream from the provider"
HTML = "The provider answered 200 with an HTML page"
NOT_RUN = "not run"

FIRST_OUTPUT = "the first command ran; its arguments are long enough to be cut in the middle of them"
COMMANDS = (f"touch ran-first; echo '{FIRST_OUTPUT}'", "touch ran-second")
"""Each tool call leaves a marker file when it runs. The first streams in 4 fragments, the first
being ``{"command": "touch ran-first; ec``: cut there, a partial parse is a command that would
create the marker."""
MARKERS = ("ran-first", "ran-second")


def answer_turn(**extra: Any) -> dict[str, Any]:
    """A reply with every place a cut can land: thinking, text, two tool calls, usage."""
    return {
        "thinking": "The user wants two commands run; first one, then the other.",
        "text": "I will run both commands now.",
        "tool_calls": [
            {"id": "call_first", "name": "bash", "arguments": {"command": COMMANDS[0]}, "chunks": 4},
            {"id": "call_second", "name": "bash", "arguments": {"command": COMMANDS[1]}, "chunks": 2},
        ],
        "usage": {"prompt_tokens": 900, "completion_tokens": 60},
        **extra,
    }


FINAL_TURN = {"text": "Both commands ran.", "usage": {"prompt_tokens": 1000, "completion_tokens": 5}}


@dataclass(frozen=True)
class Fault:
    """One way a stream goes wrong, and what the error must say."""

    name: str
    fault: dict[str, Any]
    cause: str
    kind: str = "transient"
    where: str | None = None
    """The place in the reply (a ``script_faults`` PLACE), if the fault lands at one."""
    by_text: bool = False
    """Retried although not transient: its text matches pi's retryable pattern (§13.7)."""

    @property
    def retried(self) -> bool:
        return self.by_text or self.kind in ("transient", "rate_limit")


def stream_faults(wire: str) -> list[Fault]:
    """Every fault × place this wire can show. litellm, and Anthropic's SSE framing, skip lines
    that are not events, so there garbage is a whole body of it (between valid events the
    stream is judged by its end marker)."""
    clean_cut = ANTHROPIC_ENDED if wire == "anthropic" else CUT
    faults = [Fault(f"cut-{style}@{at}", {"kind": "cut", "at": at, "style": style},
                    CUT if style == "reset" else clean_cut, where=at)
              for style in ("clean", "eof", "reset") for at in PLACES]
    faults += [Fault(f"stall@{at}", {"kind": "stall", "at": at}, TIMED_OUT, where=at) for at in PLACES]
    # a server that keeps the connection busy with keep-alives and never sends the rest (8 s
    # here: forever for a real one; the timeout must end it long before). Keep-alives go between
    # events: Gemini's "tool_args" place is inside its one function-call event, not between two
    faults += [Fault(f"keepalive-stall@{at}", {"kind": "stall", "at": at, "keepalive_ms": 100, "seconds": 8},
                     ONLY_KEEPALIVES, where=at) for at in KEEPALIVE_PLACES if not (wire.startswith("gemini") and at == "tool_args")]
    if wire in ("openai", "scripted", "gemini", "responses"):
        faults += [Fault(f"garbage@{at}", {"kind": "garbage", "at": at}, MALFORMED, where=at) for at in ("start", "text", "tool_args")]
    elif wire == "anthropic":
        faults.append(Fault("garbage-body", {"kind": "garbage", "whole_body": True}, "Anthropic stream ended without a message",
                            kind="unknown", by_text=True))  # "ended without"
    else:
        faults.append(Fault("garbage-body", {"kind": "garbage", "whole_body": True}, CUT))
    if wire.endswith("litellm"):
        faults.append(Fault("html-200", {"kind": "html"}, CUT))
    else:
        faults.append(Fault("html-200", {"kind": "html"}, HTML, kind="unknown"))
    faults.append(Fault("html-502", {"kind": "html", "status": 502}, "502 "))  # one line naming the page, not the page
    return faults


def expected_place(wire: str, at: str | None) -> str:
    """How the error names where the stream stopped. Through litellm the usage is held back to
    the end (an OpenAI cut before the usage reads "after the finish reason"); on Anthropic's wire
    the finish reason and the usage come together, so a cut before them is after the last block,
    and so on Gemini's (they ride on its last chunk, with the second call). A function call cut
    in the middle of its event on Gemini's wire is named as cut in its arguments (through litellm,
    which never shows the half-received event, the place is the block before it). The direct
    Anthropic client keeps pi's texts, which do not name the place."""
    if at is None or wire == "anthropic":
        return ""
    if wire == "openai-litellm" and at == "before_usage":
        return "after the finish reason"
    if wire == "gemini-litellm" and at == "tool_args":  # litellm never shows the half-received call
        return "during the text"
    return {
        "thinking": "during the thinking",
        "text": "during the text",
        "tool_args": "in the middle of the arguments of tool call 'bash'",
        "between_tool_calls": "after tool call 'bash'",
        "before_usage": "after tool call 'bash'" if wire in ("anthropic-litellm", "gemini", "gemini-litellm", "responses")
        else "after the finish reason, before the usage",
        "start": "before any content",
    }[at]


@contextmanager
def fake_for(wire: str, turns: list[dict[str, Any]]) -> Iterator[Any]:
    server: Any = FakeAnthropicServer(turns) if wire.startswith("anthropic") else \
        GeminiFakeServer(turns) if wire.startswith("gemini") else ResponsesFakeServer(turns) if wire == "responses" else FakeServer(turns)
    with server:
        yield server


def write_agent_dir(agent: Path, wire: str, base_url: str, *, max_retries: int = 1) -> str:
    """models.json for the wire's fake and settings with fast retries and a short idle timeout;
    returns the ``provider/model`` to select."""
    agent.mkdir(parents=True, exist_ok=True)
    if wire.startswith("anthropic"):
        provider = {"baseUrl": base_url, "api": "anthropic-messages", "apiKey": "sk-ant-reliability",
                    "models": [{"id": "claude-sonnet-4-5", "reasoning": True, "contextWindow": 200000, "maxTokens": 4000}]}
        ref = "anthro/claude-sonnet-4-5"
    elif wire.startswith("gemini"):
        provider = {"baseUrl": base_url, "api": "google-generative-ai", "apiKey": "gk-reliability",
                    "models": [{"id": "gemini-2.5-flash", "reasoning": True, "contextWindow": 1048576, "maxTokens": 4000}]}
        ref = "google/gemini-2.5-flash"
    elif wire == "responses":
        provider = {"baseUrl": base_url, "api": "openai-responses", "apiKey": "sk-reliability",
                    "models": [{"id": "o4-mini", "reasoning": True, "contextWindow": 200000, "maxTokens": 4000}]}
        ref = "oai/o4-mini"
    else:
        provider = {"baseUrl": base_url, "api": "openai-completions", "apiKey": "sk-reliability",
                    "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
                    "models": [{"id": "fake-model", "reasoning": True, "contextWindow": 128000, "maxTokens": 4000}]}
        ref = "fake/fake-model"
    (agent / "models.json").write_text(json.dumps({"providers": {ref.split("/")[0]: provider}}))
    settings = {"retry": {"maxRetries": max_retries, "baseDelayMs": 1, "provider": {"timeoutMs": TIMEOUT_MS}}}
    (agent / "settings.json").write_text(json.dumps(settings))
    return ref


def session_messages(path: Path) -> list[dict[str, Any]]:
    entries = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [e["message"] for e in entries if e.get("type") == "message"]


def assert_no_answer_and_nothing_ran(messages: list[dict[str, Any]], project: Path) -> None:
    """The file holds the prompt and error replies only: no reply that looks like an answer, no
    tool result, and no tool left a marker."""
    replies = [m for m in messages if m["role"] == "assistant"]
    assert replies, "the failed replies are kept in the file, as errors"
    for reply in replies:
        assert reply["stopReason"] == "error" and reply.get("errorMessage"), reply
    assert not [m for m in messages if m["role"] == "toolResult"]
    assert not [name for name in MARKERS if (project / name).exists()]
