"""``sandbox.network`` as a list of domains: the sandbox has no network of its own, and the
host-side proxy (reached through its Unix socket bound into the sandbox) lets listed hosts
through — plain HTTP and CONNECT tunnels — and denies the rest and raw IP addresses, saying so.
A local server stands in for the internet: the proxy's resolver maps the test names to it."""

from __future__ import annotations

import asyncio
import http.server
import shutil
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from pi_tui.permissions import proxy
from pi_tui.permissions.proxy import host_allowed, split_host_port
from pi_tui.permissions.sandbox import find_bwrap
from pi_tui.permissions.setup import PermissionOptions, build_gate
from pi_tui.tools.shell import run_shell
from tests.permissions.conftest import FakeWorld

needs_bwrap = pytest.mark.skipif(find_bwrap() is None or shutil.which("curl") is None,
                                 reason="NO SANDBOX TESTED: bwrap or curl is not installed")


class _Settings:
    def __init__(self, global_file: dict[str, Any]) -> None:
        self.global_file = global_file

    def file_settings(self, scope: str) -> dict[str, Any]:
        return self.global_file if scope == "global" else {}


class _Hello(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = f"hello from {self.headers.get('Host')}\n".encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[int]:
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Hello)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    port = httpd.server_address[1]
    resolved: list[str] = []

    def resolve(host: str, wanted: int) -> tuple[str, int]:
        resolved.append(host)
        if host.endswith(".test"):
            return "127.0.0.1", wanted
        raise OSError(f"no such host {host}")

    monkeypatch.setattr(proxy, "resolve_host", resolve)
    try:
        yield port
    finally:
        httpd.shutdown()
        httpd.server_close()


def run(gate: Any, world: FakeWorld, command: str) -> tuple[int | None, str]:
    chunks: list[bytes] = []
    outcome = asyncio.run(run_shell(command, cwd=world.project, settings={}, on_output=chunks.append,
                                    timeout_seconds=30, sandbox=gate, call_id="c"))
    return outcome.exit_code, b"".join(chunks).decode("utf-8", "replace")


@pytest.fixture
def gate(fake_world: FakeWorld) -> Iterator[Any]:
    options = PermissionOptions(mode="auto")
    settings = _Settings({"sandbox": {"network": ["allowed.test", "*.wild.test"]}})
    made = build_gate(options, cwd=fake_world.project, agent_dir=fake_world.agent, settings=settings, trusted=True)
    assert made.sandboxed, options.notices
    assert not options.notices
    yield made
    made.sandbox.close()


@needs_bwrap
def test_a_listed_domain_works_over_http_and_connect(gate: Any, fake_world: FakeWorld, server: int) -> None:
    code, out = run(gate, fake_world, f"curl -sS http://allowed.test:{server}/ && "
                                      f"curl -sS --proxytunnel http://api.wild.test:{server}/")
    assert code == 0, out
    assert out == f"hello from allowed.test:{server}\nhello from api.wild.test:{server}\n"


@needs_bwrap
def test_another_domain_and_raw_ips_get_a_clear_denial(gate: Any, fake_world: FakeWorld, server: int) -> None:
    code, out = run(gate, fake_world, f"curl -sS http://other.test:{server}/")
    assert "pi-tui sandbox: denied other.test is not in sandbox.network (allowed.test, *.wild.test)" in out
    code, out = run(gate, fake_world, f"curl -sS --proxytunnel http://wild.test:{server}/")
    assert code != 0
    assert "pi-tui sandbox: network access denied: wild.test is not in sandbox.network" in out
    assert "CONNECT tunnel failed, response 403" in out
    code, out = run(gate, fake_world, f"curl -sS --noproxy '' --proxytunnel http://127.0.0.1:{server}/")
    assert code != 0 and "a raw IP address (127.0.0.1): sandbox.network allows listed hosts only" in out
    denials = gate.sandbox.proxy_box[0].denials
    assert len(denials) == 3


@needs_bwrap
def test_without_the_proxy_there_is_no_network(gate: Any, fake_world: FakeWorld, server: int) -> None:
    _code, out = run(gate, fake_world, f"curl -sS --noproxy '*' --max-time 5 http://127.0.0.1:{server}/; "
                                      f"echo > /dev/tcp/127.0.0.1/{server} && echo LEAK")
    assert "hello" not in out and "LEAK" not in out


@needs_bwrap
def test_plan_mode_has_no_proxy(gate: Any, fake_world: FakeWorld, server: int) -> None:
    gate.mode = "plan"
    code, out = run(gate, fake_world, f"curl -sS --max-time 5 http://allowed.test:{server}/")
    assert code != 0 and "hello" not in out


def test_host_matching() -> None:
    domains = ("example.com", "*.pypi.org")
    assert host_allowed("example.com", domains) and host_allowed("EXAMPLE.com.", domains)
    assert not host_allowed("www.example.com", domains) and not host_allowed("example.com.evil", domains)
    assert host_allowed("files.pypi.org", domains) and not host_allowed("pypi.org", domains)
    assert not host_allowed("evilpypi.org", domains)
    assert split_host_port("[::1]:8080", 443) == ("::1", 8080) and split_host_port("a.b", 443) == ("a.b", 443)
    assert proxy.is_ip("10.0.0.1") and proxy.is_ip("[::1]") and not proxy.is_ip("a.test")
