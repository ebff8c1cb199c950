"""A minimal asyncio HTTP/1.1 client for one streamed POST (stdlib only).

Why not httpx: importing httpx here also imports httpcore, h2 and (through its CLI) rich —
about 0.3–0.5 s, a third of pi's whole round trip. A chat-completions call needs one POST with
a streamed body (chunked transfer encoding or a plain body), over TCP or TLS; that is all this
does. One connection per request (``Connection: close``), no proxies, no redirects.

Failures raise ``HttpStreamError`` subclasses: ``ConnectFailed`` (no connection, or what came
back is not HTTP), ``StreamCut`` (the body ended early or its framing is broken),
``ReadTimeout`` (no data for ``timeout`` seconds: an idle timeout, applied to the wait for the
headers and to every read of the body, so a stalled stream fails after ``timeout``, not when the
server gives up). A body that simply ends (no length, no chunking) is not an error here: the
caller decides whether its content was complete.

Bytes are not progress: a server can keep a connection busy forever with keep-alives (SSE
comments, Anthropic's ``ping`` events, empty chunks) while the reply never grows. So the body's
clock runs from the last ``progress()`` the caller reports (a piece of the reply decoded, or
``on_body`` seeing one arrive), not from the last byte; ``ReadTimeout.keepalives_only`` says
when bytes did come meanwhile.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from pi_tui.core.deadline import within


class HttpStreamError(Exception):
    pass


class ConnectFailed(HttpStreamError):
    pass


class StreamCut(HttpStreamError):
    pass


class ReadTimeout(HttpStreamError):
    def __init__(self, message: str, *, seconds: float = 0.0, keepalives_only: bool = False) -> None:
        super().__init__(message)
        self.seconds = seconds
        """The timeout that ran out."""
        self.keepalives_only = keepalives_only
        """Data kept coming, but none of it was progress (keep-alives only)."""


@dataclass(slots=True)
class StreamResponse:
    status: int
    headers: dict[str, str]
    _reader: asyncio.StreamReader
    _writer: asyncio.StreamWriter
    _timeout: float
    _chunked: bool = False
    _remaining: int | None = None
    _done: bool = False
    _pending: bytes = field(default=b"")
    reason: str = ""
    """The status line's reason phrase (``Bad Gateway``), as received."""
    on_body: Callable[[bytes], None] | None = None
    """Sees every piece of the body as it arrives (before any decoding): where the caller tells
    a reply dripping in, which is progress, from keep-alives, which are not."""
    _deadline: float = 0.0
    _bytes_since_progress: bool = False

    def __post_init__(self) -> None:
        self.progress()

    def progress(self) -> None:
        """The reply grew: the next ``timeout`` seconds start now (keep-alives never call this)."""
        self._deadline = asyncio.get_running_loop().time() + self._timeout
        self._bytes_since_progress = False

    async def _read(self, call: Coroutine[Any, Any, bytes]) -> bytes:
        remaining = self._deadline - asyncio.get_running_loop().time()
        try:
            if remaining <= 0:
                call.close()  # the time is up before the read began
                raise TimeoutError
            data = await within(call, remaining)
        except TimeoutError as err:
            if self._bytes_since_progress:
                raise ReadTimeout(f"only keep-alives for {self._timeout:g} s", seconds=self._timeout,
                                  keepalives_only=True) from err
            raise ReadTimeout(f"no data for {self._timeout:g} s", seconds=self._timeout) from err
        except asyncio.IncompleteReadError as err:
            raise StreamCut("the connection closed before the body was complete") from err
        except (ConnectionError, OSError, asyncio.LimitOverrunError) as err:
            raise StreamCut(str(err) or type(err).__name__) from err
        self._bytes_since_progress = self._bytes_since_progress or bool(data)
        return data

    def _body(self, data: bytes) -> bytes:
        if self.on_body is not None and data:
            self.on_body(data)
        return data

    async def iter_bytes(self) -> AsyncIterator[bytes]:
        while not self._done:
            if self._chunked:
                line = await self._read(self._reader.readuntil(b"\r\n"))
                try:
                    size = int(line.split(b";", 1)[0].strip() or b"0", 16)
                except ValueError as err:
                    raise StreamCut(f"bad chunk size line {line[:40]!r}") from err
                if size == 0:
                    while (await self._read(self._reader.readuntil(b"\r\n"))) != b"\r\n":
                        pass  # trailers
                    self._done = True
                    return
                data = await self._read(self._reader.readexactly(size + 2))
                yield self._body(data[:-2])
            elif self._remaining is not None:
                if self._remaining == 0:
                    self._done = True
                    return
                data = await self._read(self._reader.read(min(65536, self._remaining)))
                if not data:
                    raise StreamCut("the connection closed before the body was complete")
                self._remaining -= len(data)
                yield self._body(data)
            else:
                data = await self._read(self._reader.read(65536))
                if not data:
                    self._done = True
                    return
                yield self._body(data)

    async def iter_lines(self) -> AsyncIterator[str]:
        buffer = b""
        async for data in self.iter_bytes():
            buffer += data
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                yield line.rstrip(b"\r").decode("utf-8", errors="replace")
        if buffer:
            yield buffer.rstrip(b"\r").decode("utf-8", errors="replace")

    async def read(self, limit: int | None = None) -> bytes:
        """The body (at most ``limit`` bytes: an error page needs no more)."""
        parts: list[bytes] = []
        size = 0
        async for part in self.iter_bytes():
            parts.append(part)
            size += len(part)
            if limit is not None and size >= limit:
                break
        return b"".join(parts)[:limit]

    async def close(self) -> None:
        self._writer.close()
        try:
            await self._writer.wait_closed()
        except (ConnectionError, OSError):
            pass


async def post_stream(url: str, body: bytes, headers: dict[str, str], *, timeout: float,  # noqa: ASYNC109 (a per-read timeout, not a deadline)
                      connect_timeout: float = 30.0) -> StreamResponse:
    """Send the POST and read the status line and headers; the body is read by the caller."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConnectFailed(f"unsupported URL {url!r}")
    secure = parts.scheme == "https"
    port = parts.port or (443 if secure else 80)
    context = None
    if secure:
        import ssl  # 25 ms; local servers speak plain HTTP

        context = ssl.create_default_context()
    try:
        reader, writer = await within(
            asyncio.open_connection(parts.hostname, port, ssl=context, limit=1 << 20),
            connect_timeout,
        )
    except (TimeoutError, OSError) as err:
        raise ConnectFailed(str(err) or type(err).__name__) from err
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    host = parts.hostname if parts.port is None else f"{parts.hostname}:{parts.port}"
    lines = [f"POST {target} HTTP/1.1", f"Host: {host}", f"Content-Length: {len(body)}", "Connection: close"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    try:
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body)
        await within(writer.drain(), timeout)
        status_line = await within(reader.readuntil(b"\r\n"), timeout)
        received: dict[str, str] = {}
        while True:
            line = await within(reader.readuntil(b"\r\n"), timeout)
            if line == b"\r\n":
                break
            name, _, value = line.decode("latin-1").partition(":")
            received[name.strip().lower()] = value.strip()
    except TimeoutError as err:
        writer.close()
        raise ReadTimeout(f"no response for {timeout:g} s", seconds=timeout) from err
    except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError) as err:
        writer.close()
        raise ConnectFailed(str(err) or type(err).__name__) from err
    try:
        status = int(status_line.split(b" ", 2)[1])
    except (IndexError, ValueError) as err:
        writer.close()
        raise ConnectFailed(f"not an HTTP response: {status_line[:80]!r}") from err
    length = received.get("content-length")
    return StreamResponse(
        status=status,
        headers=received,
        _reader=reader,
        _writer=writer,
        _timeout=timeout,
        _chunked="chunked" in received.get("transfer-encoding", "").lower(),
        _remaining=int(length) if length and length.isdigit() else None,
        reason=status_line.split(b" ", 2)[2].strip().decode("latin-1") if status_line.count(b" ") >= 2 else "",
    )
