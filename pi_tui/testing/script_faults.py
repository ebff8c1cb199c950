"""Fault steps of a scripted turn: a reply broken the way networks, proxies and servers break
them, for the fake servers (either wire) and the scripted provider.

A fake renders a successful turn into body **frames** (one server-sent event each), tagged with
what they carry: ``thinking``, ``text``, ``tool:<i>`` (argument fragments of tool call *i*),
``finish``, ``usage``, ``done`` (the end-of-stream marker). ``response_plan`` then applies the
turn's ``fault`` and returns what the server does: a status, headers, and **steps** (send bytes,
pause, stall) ending cleanly or abruptly. Tags keep this wire-neutral: "cut in the middle of the
tool arguments" means the same place on the OpenAI and the Anthropic wire.

A turn's ``fault`` (an object; ``kind`` says which)::

    {"kind": "cut", "at": PLACE | "after_bytes": N | "after_frames": N,
     "style": "clean" | "eof" | "reset"}
        the body stops there. clean: the body is properly terminated (final chunk sent), so
        only the missing end-of-stream marker tells; eof: no length and no chunking, the
        connection just closes; reset: dropped mid-body without the final chunk.
    {"kind": "stall", "at" | "after_bytes" | "after_frames", "seconds": S, "keepalive_ms"?: N,
     "keepalive"?: "comment" | "blank" | "empty"}
        stop sending and keep the connection open for S seconds (default: until the server
        stops), then drop it. With ``keepalive_ms`` the server sends a keep-alive every N ms
        meanwhile: bytes keep coming, the reply never grows. Which one: the wire's usual (an SSE
        comment; a ``ping`` event on Anthropic's wire), or ``comment``, ``blank`` (an empty
        line) or ``empty`` (a chunk with nothing in it, on wires that give one).
    {"kind": "garbage", "at"?: PLACE (default "start"), "data"?: str, "whole_body"?: false}
        bytes that are not the wire's format inserted there; the rest follows normally (with
        ``whole_body``, the body is the garbage alone).
    {"kind": "html", "status"?: 200, "title"?: str}
        an HTML page (a login portal, a proxy's error page) instead of the stream.
    {"kind": "drip", "bytes"?: 1, "interval_ms"?: 20}
        the whole valid stream, a few bytes at a time.
    {"kind": "echo_auth", "status"?: 401}
        an error whose body quotes the request's credential (a badly written proxy), for
        redaction tests.

PLACE is where a cut, stall or garbage lands: ``start`` (before any event), ``thinking``,
``text`` (after the first delta of that kind), ``tool_args`` (after the first argument fragment
of the first tool call: its JSON is unfinished), ``between_tool_calls`` (after the first tool
call's last fragment), ``before_finish``, ``before_usage``, ``before_done``.

HTTP errors with ``retry-after`` (5xx, 429) are the turn's ``error`` key (``script.py``).
"""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pi_tui.core.errors import ConfigError

FAULT_KINDS = ("cut", "stall", "garbage", "html", "drip", "echo_auth")
PLACES = ("start", "thinking", "text", "tool_args", "between_tool_calls", "before_finish", "before_usage", "before_done")
CUT_STYLES = ("clean", "eof", "reset")
STALL_SECONDS = 3600.0
"""How long a stall lasts by default (servers release it early when they stop)."""
SSE_KEEPALIVE = b": keep-alive\n\n"
"""An SSE comment, as servers and proxies (OpenRouter) send while a model works."""
KEEPALIVE_STYLES = ("comment", "blank", "empty")
DEFAULT_GARBAGE = "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR garbage that is not an event stream\n\n"


@dataclass(frozen=True, slots=True)
class Frame:
    """One server-sent event of a reply, with tags saying what it carries."""

    data: bytes
    tags: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class Send:
    data: bytes


@dataclass(frozen=True, slots=True)
class Pause:
    seconds: float


@dataclass(frozen=True, slots=True)
class Stall:
    seconds: float
    keepalive: bytes = b""
    """Sent every ``interval`` seconds while stalled (nothing when empty)."""
    interval: float = 0.0


Step = Send | Pause | Stall


@dataclass(slots=True)
class ResponsePlan:
    """What the server answers: status line, headers, body steps and how the body ends."""

    status: int = 200
    content_type: str = "text/event-stream"
    steps: list[Step] = field(default_factory=list)
    ending: Literal["clean", "reset"] = "clean"
    framing: Literal["chunked", "length", "eof"] = "chunked"
    headers: dict[str, str] = field(default_factory=dict)

    @property
    def body(self) -> bytes:
        return b"".join(step.data for step in self.steps if isinstance(step, Send))


ErrorBody = Callable[[int, str], Any]
"""The wire's error body for a status and message (a JSON-able object)."""


def validate_fault(fault: Any, where: str) -> None:
    """A clear ConfigError for a fault the fakes would not understand."""
    if not isinstance(fault, dict) or fault.get("kind") not in FAULT_KINDS:
        raise ConfigError(f"{where}: 'fault' must be an object whose kind is one of {', '.join(FAULT_KINDS)}")
    if fault.get("at") is not None and fault["at"] not in PLACES:
        raise ConfigError(f"{where}: fault 'at' must be one of {', '.join(PLACES)}, not {fault['at']!r}")
    if fault.get("style") is not None and fault["style"] not in CUT_STYLES:
        raise ConfigError(f"{where}: fault 'style' must be one of {', '.join(CUT_STYLES)}")
    if fault["kind"] in ("cut", "stall") and not any(k in fault for k in ("at", "after_bytes", "after_frames")):
        raise ConfigError(f"{where}: a {fault['kind']} fault needs 'at', 'after_bytes' or 'after_frames'")


def legacy_fault(turn: dict[str, Any]) -> dict[str, Any] | None:
    """The turn's fault, including the older ``cut_after_chunks``/``stall_after_chunks`` keys."""
    if turn.get("fault") is not None:
        return dict(turn["fault"])
    if turn.get("cut_after_chunks") is not None:
        return {"kind": "cut", "after_frames": int(turn["cut_after_chunks"]), "style": "reset"}
    if turn.get("stall_after_chunks") is not None:
        return {"kind": "stall", "after_frames": int(turn["stall_after_chunks"])}
    return None


def response_plan(
    frames: Sequence[Frame], fault: dict[str, Any] | None, *, error_body: ErrorBody, credential: str = "",
    encode_json: Callable[[Any], bytes], keepalive: bytes = SSE_KEEPALIVE, empty_chunk: bytes = b"",
) -> ResponsePlan:
    """The server's answer for a turn rendered as ``frames`` with ``fault`` applied
    (``keepalive``: the wire's usual keep-alive, ``empty_chunk``: its event with nothing in it,
    for a stall that sends them)."""
    kind = fault.get("kind") if fault else None
    if fault is None or kind is None:
        return ResponsePlan(steps=[Send(f.data) for f in frames])
    if kind == "html":
        status = int(fault.get("status", 200))
        return ResponsePlan(status=status, content_type="text/html; charset=utf-8", framing="length",
                            steps=[Send(_html_page(str(fault.get("title") or "Sign in to continue")))])
    if kind == "echo_auth":
        status = int(fault.get("status", 401))
        message = f"Invalid credentials in request: {credential or '(none sent)'}"
        return ResponsePlan(status=status, content_type="application/json", framing="length",
                            steps=[Send(encode_json(error_body(status, message)))])
    if kind == "drip":
        size = max(1, int(fault.get("bytes", 1)))
        pause = float(fault.get("interval_ms", 20)) / 1000
        data = b"".join(f.data for f in frames)
        steps: list[Step] = []
        for start in range(0, len(data), size):
            steps += [Send(data[start : start + size]), Pause(pause)]
        return ResponsePlan(steps=steps[:-1])
    if kind == "garbage":
        at = _frames_before(frames, fault.get("at") or "start")
        garbage = str(fault.get("data", DEFAULT_GARBAGE)).encode("utf-8")
        if fault.get("whole_body"):
            return ResponsePlan(steps=[Send(garbage)])
        parts = [f.data for f in frames]
        return ResponsePlan(steps=_sends([*parts[:at], garbage, *parts[at:]]))
    kept = _kept_bytes(frames, fault)
    if kind == "stall":
        every = fault.get("keepalive_ms")
        ping = _keepalive(fault.get("keepalive"), keepalive, empty_chunk) if every else b""
        stall = Stall(float(fault.get("seconds", STALL_SECONDS)), ping, float(every or 0) / 1000)
        return ResponsePlan(steps=[*_sends(kept), stall], ending="reset")
    style = fault.get("style") or "clean"
    return ResponsePlan(steps=_sends(kept), ending="reset" if style == "reset" else "clean",
                        framing="eof" if style == "eof" else "chunked")


def _sends(parts: list[bytes]) -> list[Step]:
    return [Send(part) for part in parts if part]


def _keepalive(style: Any, usual: bytes, empty_chunk: bytes) -> bytes:
    if style is None:
        return usual
    if style not in KEEPALIVE_STYLES:
        raise ValueError(f"unknown keep-alive {style!r}: expected one of {', '.join(KEEPALIVE_STYLES)}")
    if style == "empty" and not empty_chunk:
        raise ValueError("this wire has no empty chunk to send as a keep-alive")
    return {"comment": SSE_KEEPALIVE, "blank": b"\n", "empty": empty_chunk}[style]


def _kept_bytes(frames: Sequence[Frame], fault: dict[str, Any]) -> list[bytes]:
    data = [f.data for f in frames]
    if fault.get("after_frames") is not None:
        return data[: int(fault["after_frames"])]
    if fault.get("after_bytes") is not None:
        whole = b"".join(data)
        return [whole[: int(fault["after_bytes"])]]
    return data[: _frames_before(frames, fault["at"])]


def _frames_before(frames: Sequence[Frame], place: str) -> int:
    """How many frames go out before a fault at ``place``; ConfigError when the turn has no
    such place (a cut "in the tool arguments" of a turn without tool calls would test nothing)."""

    def first(tag: str) -> int | None:
        return next((i for i, f in enumerate(frames) if tag in f.tags), None)

    def last(tag: str) -> int | None:
        found = [i for i, f in enumerate(frames) if tag in f.tags]
        return found[-1] if found else None

    found: int | None
    if place == "start":
        found = 0
    elif place in ("thinking", "text"):
        index = first(place)
        found = None if index is None else index + 1
    elif place == "tool_args":
        fragments = [i for i, f in enumerate(frames) if "tool:0" in f.tags]
        found = fragments[0] + 1 if len(fragments) >= 2 else None
    elif place == "between_tool_calls":  # after the first call's block end where the wire has one
        end, second = last("tool_end:0") or last("tool:0"), first("tool:1")
        found = None if end is None or second is None else end + 1
    else:
        found = first(place.removeprefix("before_"))
    if found is None:
        raise ConfigError(f"fault at {place!r}: the turn has no such place (add the content it needs, "
                          "e.g. two tool calls, or arguments in at least 2 chunks)")
    return found


def _html_page(title: str) -> bytes:
    safe = html.escape(title)
    return (f"<!DOCTYPE html>\n<html><head><title>{safe}</title></head>\n"
            f"<body><h1>{safe}</h1><p>Please sign in to the network to continue.</p></body></html>\n").encode()
