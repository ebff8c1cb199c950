"""Run inside the sandbox when ``sandbox.network`` lists domains: listens on 127.0.0.1:PORT in
the sandbox's own (empty) network namespace, hands each connection to the host-side proxy's Unix
socket bound into the sandbox, and runs the command as its child (its exit status is ours).

    python -I -S forwarder.py SOCKET PORT -- COMMAND...

Standalone and stdlib-only (``-S``: no site, a fast start): it imports nothing from pi_tui. It
decides nothing — the host-side proxy (``proxy.py``) allows or denies each host.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading

DENIAL = b"HTTP/1.1 403 Forbidden by the pi-tui sandbox: "
"""What the proxy answers a denied host with (``proxy.DENIAL_PREFIX``)."""


def pipe(source: socket.socket, sink: socket.socket, *, tell: bool = False) -> None:
    """Copy until the end; ``tell``: a denial from the proxy is said on stderr too (curl shows
    only "CONNECT tunnel failed, response 403")."""
    try:
        first = True
        while True:
            data = source.recv(65536)
            if not data:
                break
            if tell and first and data.startswith(DENIAL):
                reason = data[len(DENIAL):].split(b"\r\n", 1)[0].decode("utf-8", "replace")
                sys.stderr.write(f"pi-tui sandbox: network access denied: {reason}\n")
                sys.stderr.flush()
            first = False
            sink.sendall(data)
    except OSError:
        pass
    finally:
        for end, how in ((sink, socket.SHUT_WR), (source, socket.SHUT_RD)):
            try:
                end.shutdown(how)
            except OSError:
                pass


def serve(listener: socket.socket, path: str) -> None:
    while True:
        try:
            client, _ = listener.accept()
        except OSError:
            return
        try:
            upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            upstream.connect(path)
        except OSError:
            client.close()
            continue
        threading.Thread(target=pipe, args=(client, upstream), daemon=True).start()
        threading.Thread(target=pipe, args=(upstream, client), kwargs={"tell": True}, daemon=True).start()


def main(argv: list[str]) -> int:
    if len(argv) < 4 or argv[2] != "--":
        sys.stderr.write("usage: forwarder.py SOCKET PORT -- COMMAND...\n")
        return 2
    path, port, command = argv[0], int(argv[1]), argv[3:]
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(64)
    threading.Thread(target=serve, args=(listener, path), daemon=True).start()
    child = subprocess.Popen(command)
    for number in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(number, lambda signum, _frame: child.send_signal(signum))
    code = child.wait()
    sys.stdout.flush()
    os._exit(128 - code if code < 0 else code)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
