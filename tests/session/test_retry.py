"""Automatic retry (§7.5, §13.7): backoff 2/4/8 s, retry-after, exhausted, overflow never retried."""

from __future__ import annotations

import asyncio

from pi_tui.session.retry import is_retryable
from tests.session.conftest import FakeClock, entries_of


def _retry_events(events: list[dict]) -> list[dict]:
    return [e for e in events if e["type"].startswith("auto_retry")]


async def test_retry_then_success(make_session, clock: FakeClock) -> None:
    session, provider, events = make_session([{"error": {"status": 503}}, {"text": "recovered"}])
    await session.prompt("hi")
    assert clock.sleeps == [2.0]
    assert _retry_events(events) == [
        {"type": "auto_retry_start", "attempt": 1, "maxAttempts": 3, "delayMs": 2000,
         "errorMessage": "503 Service unavailable"},
        {"type": "auto_retry_end", "success": True, "attempt": 1},
    ]
    # the failed reply left the agent's state but stays in the file
    assert [m["role"] for m in session.messages] == ["user", "assistant"]
    assert session.messages[-1]["content"][0]["text"] == "recovered"
    stored = [e["message"] for e in entries_of(session) if e["type"] == "message"]
    assert [m.get("stopReason") for m in stored] == [None, "error", "stop"]
    assert len(provider.requests) == 2
    assert [m["role"] for m in provider.requests[1].messages] == ["user"]


async def test_retry_exhausted_uses_backoff_2_4_8(make_session, clock: FakeClock) -> None:
    session, provider, events = make_session([{"error": {"status": 500}}] * 4)
    await session.prompt("hi")
    assert clock.sleeps == [2.0, 4.0, 8.0]
    retry = _retry_events(events)
    assert [e["attempt"] for e in retry if e["type"] == "auto_retry_start"] == [1, 2, 3]
    assert retry[-1] == {"type": "auto_retry_end", "success": False, "attempt": 3,
                         "finalError": "500 Internal server error"}
    assert session.messages[-1]["stopReason"] == "error"
    assert len(provider.requests) == 4


async def test_retry_after_is_honoured(make_session, clock: FakeClock) -> None:
    session, _, events = make_session([{"error": {"status": 429, "retry_after": 5}}, {"text": "ok"}])
    await session.prompt("hi")
    assert clock.sleeps == [5.0]
    assert _retry_events(events)[0]["delayMs"] == 5000


async def test_overflow_and_auth_errors_are_not_retried(make_session, clock: FakeClock) -> None:
    for error, kind in (({"status": 400, "code": "context_length_exceeded"}, "context_overflow"),
                        ({"status": 401}, "auth"), ({"status": 400}, "bad_request")):
        session, provider, events = make_session([{"error": error}, {"text": "never"}],
                                                 settings={"compaction": {"enabled": False}})
        await session.prompt("hi")
        assert _retry_events(events) == []
        assert session.messages[-1]["errorKind"] == kind
        assert len(provider.requests) == 1
    assert clock.sleeps == []


async def test_retry_disabled_by_setting(make_session, clock: FakeClock) -> None:
    session, provider, events = make_session([{"error": {"status": 503}}, {"text": "ok"}],
                                             settings={"retry": {"enabled": False}})
    await session.prompt("hi")
    assert _retry_events(events) == [] and len(provider.requests) == 1


async def test_abort_cancels_a_pending_retry(make_session) -> None:
    class SlowClock(FakeClock):
        async def sleep(self, seconds: float) -> None:
            await asyncio.sleep(10)

    session, provider, events = make_session([{"error": {"status": 503}}, {"text": "never"}], clock=SlowClock())
    run = asyncio.ensure_future(session.prompt("hi"))
    for _ in range(100):
        await asyncio.sleep(0.01)
        if session.state.is_retrying:
            break
    await session.abort()
    await asyncio.wait_for(run, 2)
    assert _retry_events(events)[-1] == {"type": "auto_retry_end", "success": False, "attempt": 1,
                                         "finalError": "Retry cancelled"}
    assert len(provider.requests) == 1


def test_retryable_patterns() -> None:
    def error(text: str, kind: str | None = None) -> dict:
        message = {"role": "assistant", "stopReason": "error", "errorMessage": text}
        if kind:
            message["errorKind"] = kind
        return message

    assert is_retryable(error("Connection error."), 1000)
    assert is_retryable(error("socket hang up"), 1000)
    assert is_retryable(error("Request timed out"), 1000)
    assert not is_retryable(error("400 prompt is too long: 5000 tokens"), 1000)
    assert not is_retryable(error("401 Incorrect API key provided"), 1000)
    assert not is_retryable({"role": "assistant", "stopReason": "aborted", "errorMessage": "503"}, 1000)
