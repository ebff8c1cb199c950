"""The host-side proxy for ``sandbox.network`` = a list of domains.

The sandbox has its own, empty network namespace; the only way out is this proxy's Unix socket,
bound into the sandbox and reached through ``forwarder.py`` (127.0.0.1:3128 inside, with
``HTTP_PROXY``/``HTTPS_PROXY`` pointing there). It speaks the two forms every HTTP client uses
through a proxy:

* ``CONNECT host:port`` (HTTPS, git over https, pip, npm): the tunnel is opened only to a listed
  host; the TLS inside is the client's own, end to end.
* ``GET http://host/path`` (plain HTTP): forwarded to a listed host as an origin-form request
  with ``Connection: close``, so one connection never reaches a second host.

A host is allowed when it equals a listed domain or, for an entry ``*.example.com``, is a
subdomain of it. A raw IP address (``1.2.3.4``, ``[::1]``) is always denied: the list names
hosts. A denial is a ``403`` whose reason phrase and body say what was blocked and why, and is
recorded (``denials``) for the tool result.
"""

from __future__ import annotations

import contextlib
import ipaddress
import socket
import socketserver
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

Resolver = Callable[[str, int], tuple[str, int]]
INSIDE_PORT = 3128
MAX_HEAD = 64 * 1024
IDLE_TIMEOUT_S = 300.0
"""A tunnel with no byte either way for this long is closed."""
DENIAL_PREFIX = "Forbidden by the pi-tui sandbox: "
"""The reason phrase of a denial (``forwarder.py`` shows it on the command's stderr)."""


def resolve_host(host: str, port: int) -> tuple[str, int]:
    """The host's own resolver (looked up at each call: a test maps a name to 127.0.0.1 here)."""
    info = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    address = info[0][4]
    return str(address[0]), int(address[1])


def is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    return True


def host_allowed(host: str, domains: Sequence[str]) -> bool:
    name = host.lower().rstrip(".")
    for entry in domains:
        domain = entry.lower().rstrip(".")
        if domain.startswith("*."):
            if name.endswith(domain[1:]) and name != domain[2:]:
                return True
        elif name == domain:
            return True
    return False


def split_host_port(authority: str, default_port: int) -> tuple[str, int]:
    if authority.startswith("["):  # [v6]:port
        host, _, rest = authority[1:].partition("]")
        return host, int(rest[1:]) if rest.startswith(":") and rest[1:].isdigit() else default_port
    host, sep, port = authority.rpartition(":")
    if sep and port.isdigit() and host:
        return host, int(port)
    return authority, default_port


@dataclass(slots=True)
class DomainProxy:
    """One session's proxy: a Unix socket in its own folder (bound into every sandboxed command)."""

    domains: tuple[str, ...]
    folder: Path
    resolver: Resolver | None = None
    """None: ``resolve_host``."""
    denials: list[str] = field(default_factory=list)
    _server: socketserver.ThreadingUnixStreamServer | None = None

    @property
    def socket_path(self) -> Path:
        return self.folder / "proxy.sock"

    def start(self) -> DomainProxy:
        if self._server is not None:
            return self
        self.folder.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileNotFoundError):
            self.socket_path.unlink()
        proxy = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                proxy.handle(self.request)

        server = socketserver.ThreadingUnixStreamServer(str(self.socket_path), Handler)
        server.daemon_threads = True
        self._server = server
        threading.Thread(target=server.serve_forever, name="pi-sandbox-proxy", daemon=True).start()
        return self

    def close(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    # ------------------------------------------------------------------ one connection

    def handle(self, client: socket.socket) -> None:
        client.settimeout(30)
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = client.recv(4096)
            if not chunk or len(head) > MAX_HEAD:
                return
            head += chunk
        raw_head, _, rest = head.partition(b"\r\n\r\n")
        lines = raw_head.decode("latin-1").split("\r\n")
        parts = lines[0].split(" ")
        if len(parts) != 3:
            self._refuse(client, 400, "Bad Request", "not an HTTP proxy request")
            return
        method, target, version = parts
        if method.upper() == "CONNECT":
            host, port = split_host_port(target, 443)
            upstream = self._open(client, host, port)
            if upstream is not None:
                client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
                if rest:
                    upstream.sendall(rest)
                self._splice(client, upstream)
            return
        if not target.lower().startswith("http://"):
            self._refuse(client, 400, "Bad Request", "only CONNECT and absolute http:// requests go through the proxy")
            return
        authority, _, path = target[7:].partition("/")
        host, port = split_host_port(authority, 80)
        upstream = self._open(client, host, port)
        if upstream is None:
            return
        headers = [line for line in lines[1:] if line.split(":", 1)[0].strip().lower()
                   not in ("connection", "proxy-connection", "proxy-authorization", "keep-alive")]
        request = "\r\n".join([f"{method} /{path} {version}", *headers, "Connection: close", "", ""])
        upstream.sendall(request.encode("latin-1") + rest)
        self._splice(client, upstream)

    def _open(self, client: socket.socket, host: str, port: int) -> socket.socket | None:
        if is_ip(host):
            self._deny(client, f"a raw IP address ({host}): sandbox.network allows listed hosts only")
            return None
        if not host_allowed(host, self.domains):
            self._deny(client, f"{host} is not in sandbox.network ({', '.join(self.domains)})")
            return None
        try:
            address = (self.resolver or resolve_host)(host, port)
            return socket.create_connection(address, timeout=30)
        except OSError as error:
            self._refuse(client, 502, "Bad Gateway", f"cannot reach {host}:{port}: {error}")
            return None

    def _deny(self, client: socket.socket, why: str) -> None:
        self.denials.append(why)
        self._refuse(client, 403, DENIAL_PREFIX + why, f"pi-tui sandbox: denied {why}")

    @staticmethod
    def _refuse(client: socket.socket, status: int, reason: str, body: str) -> None:
        data = (body + "\n").encode()
        head = (f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain\r\nContent-Length: {len(data)}\r\n"
                "Connection: close\r\n\r\n")
        with contextlib.suppress(OSError):
            client.sendall(head.encode("latin-1", "replace") + data)

    @staticmethod
    def _splice(client: socket.socket, upstream: socket.socket) -> None:
        client.settimeout(IDLE_TIMEOUT_S)
        upstream.settimeout(IDLE_TIMEOUT_S)

        def pump(source: socket.socket, sink: socket.socket) -> None:
            try:
                while data := source.recv(65536):
                    sink.sendall(data)
            except OSError:
                pass
            finally:
                with contextlib.suppress(OSError):
                    sink.shutdown(socket.SHUT_WR)

        back = threading.Thread(target=pump, args=(upstream, client), daemon=True)
        back.start()
        pump(client, upstream)
        back.join(timeout=IDLE_TIMEOUT_S)
        upstream.close()
