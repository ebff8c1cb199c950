"""HTML export: no session content runs as script, proven in a real browser.

A session full of XSS payloads — in user and assistant text, thinking, tool names, arguments and
output, error texts, the user's shell commands, summaries, custom messages and entries, labels,
the session name and the model's name — is exported with ``pi-tui --export`` and opened in
Debian's headless Chromium. Every payload, had it run, would leave a trace: change the title, set
an attribute on ``<body>``, add an element, or fetch a URL from a listener on 127.0.0.1. The
dumped DOM and the listener must show none, and the payload text must be on the page as text.
"""

from __future__ import annotations

import http.server
import re
import shutil
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pi_tui.core.session.manager import SessionManager
from tests.reliability.hostile_repo import run_cli

FAULT_CLASS = "html export"

CHROMIUM = shutil.which("chromium")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="Debian's chromium is not installed (.ci/run installs it: apt-get install chromium)")
TITLE = "pi-tui export"


class _Listener(http.server.BaseHTTPRequestHandler):
    hits: list[str] = []  # noqa: RUF012 - one list per server class (see listener())

    def do_GET(self) -> None:
        self.hits.append(self.path)
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        return


@pytest.fixture
def listener() -> Iterator[tuple[str, list[str]]]:
    """An HTTP server on 127.0.0.1 that records every request a payload would make."""
    handler = type("Listener", (_Listener,), {"hits": []})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", handler.hits
    finally:
        server.shutdown()
        server.server_close()


def payloads(base: str) -> list[str]:
    """Each would run, fetch or alter the page if it reached the DOM as markup."""
    return [
        "<script>document.title='PWNED-script';document.body.setAttribute('data-pwned','script')</script>",
        f"<script src=\"{base}/script-src\"></script>",
        "<img src=x onerror=\"document.body.setAttribute('data-pwned','img')\">",
        f"<img src=\"{base}/img\">",
        "<svg onload=\"document.body.setAttribute('data-pwned','svg')\"></svg>",
        "<iframe srcdoc=\"<script>parent.document.body.setAttribute('data-pwned','iframe')</script>\"></iframe>",
        f"<link rel=stylesheet href=\"{base}/css\"><style>@import '{base}/import';</style>",
        f"<meta http-equiv=\"refresh\" content=\"0;url={base}/refresh\">",
        "</pre></section><div id=\"pwned-breakout\">broke out of the pre</div><pre>",
        "\"><script>document.body.setAttribute('data-pwned','attr')</script>",
        "</title><script>document.body.setAttribute('data-pwned','title')</script>",
        "<details open ontoggle=\"document.body.setAttribute('data-pwned','details')\">",
        f"<object data=\"{base}/object\"></object><embed src=\"{base}/embed\">",
        "<a id=\"pwned-link\" href=\"javascript:document.body.setAttribute('data-pwned','link')\">x</a>",
        "{{constructor.constructor('document.title=1')()}} ${alert(1)} <!-- -->",
    ]


def _hostile_session(path: Path, base: str) -> Path:
    all_payloads = "\n".join(payloads(base))
    manager = SessionManager.create(path / "project", path / "sessions")
    manager.append_model_change(f"prov{payloads(base)[0]}", f"model{payloads(base)[2]}")
    user_id = manager.append_message({"role": "user", "content": [{"type": "text", "text": all_payloads}],
                                      "timestamp": 1})
    manager.append_label_change(user_id, all_payloads)
    manager.append_message({
        "role": "assistant", "api": "openai-completions", "provider": payloads(base)[4], "model": payloads(base)[5],
        "content": [
            {"type": "thinking", "thinking": all_payloads},
            {"type": "text", "text": all_payloads},
            {"type": "toolCall", "id": "call-1", "name": f"bash{payloads(base)[0]}",
             "arguments": {"command": all_payloads, payloads(base)[3]: payloads(base)[6]}},
        ],
        "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2,
                  "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
        "stopReason": "toolUse", "timestamp": 2})
    manager.append_message({"role": "toolResult", "toolCallId": "call-1", "toolName": payloads(base)[7],
                            "content": [{"type": "text", "text": all_payloads * 3}], "isError": True, "timestamp": 3})
    manager.append_message({"role": "toolResult", "toolCallId": "orphan", "toolName": payloads(base)[8],
                            "content": [{"type": "text", "text": all_payloads}], "isError": False, "timestamp": 4})
    manager.append_message({
        "role": "assistant", "api": "openai-completions", "provider": "p", "model": "m", "content": [],
        "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0,
                  "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
        "stopReason": "error", "errorMessage": all_payloads, "timestamp": 5})
    manager.append_message({"role": "bashExecution", "command": all_payloads, "output": all_payloads,
                            "exitCode": 1, "cancelled": False, "truncated": False, "timestamp": 6})
    manager.append_custom_message_entry(payloads(base)[9], all_payloads, True, {"x": all_payloads})
    manager.append_custom_entry(payloads(base)[10], {"html": all_payloads})
    manager.append_compaction(all_payloads, user_id, 1234, details={"x": all_payloads})
    manager.append_thinking_level_change(payloads(base)[11])
    manager.append_session_info(f"{TITLE}{payloads(base)[10]}")
    assert manager.session_file is not None
    file = manager.session_file
    manager.close()
    return file


EXPORT_TAGS = {"html", "head", "meta", "title", "style", "body", "header", "h1", "dl", "dt", "dd", "main",
               "section", "div", "pre", "details", "summary"}
"""The only elements the export writes: anything else in the DOM came from the session."""


def _elements(dom: str) -> list[tuple[str, dict[str, str]]]:
    """Every element of the dumped DOM with its attributes."""
    from html.parser import HTMLParser

    found: list[tuple[str, dict[str, str]]] = []

    class Collect(HTMLParser):
        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            found.append((tag, {k: v or "" for k, v in attrs}))

    Collect().feed(dom)
    return found


def _injected(element: tuple[str, dict[str, str]]) -> bool:
    tag, attrs = element
    return (tag not in EXPORT_TAGS or attrs.get("http-equiv", "").lower() == "refresh"
            or any(k.startswith("on") for k in attrs) or attrs.get("id", "").startswith("pwned"))


def _open_in_chromium(page: Path, profile: Path) -> str:
    assert CHROMIUM is not None
    result = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--no-first-run", "--disable-component-update", "--disable-sync", f"--user-data-dir={profile}",
         "--virtual-time-budget=3000", "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout


@needs_chromium
def test_an_exported_session_full_of_payloads_runs_none_of_them(tmp_path: Path, project: Path, fault: Any,
                                                                listener: tuple[str, list[str]]) -> None:
    base, hits = listener
    session = _hostile_session(tmp_path, base)
    page = tmp_path / "export.html"
    exported = run_cli(["--export", str(session), str(page)], tmp_path / "agent", project)
    assert exported.returncode == 0, exported.stderr
    dom = _open_in_chromium(page, tmp_path / "chromium-profile")
    assert hits == [], f"the page fetched {hits}"
    title = re.search(r"<title>(.*?)</title>", dom, re.S)
    assert title is not None and title.group(1).startswith(TITLE) and "PWNED" not in title.group(1)
    body = re.search(r"<body([^>]*)>", dom)
    assert body is not None and "data-pwned" not in body.group(1), body.group(0)
    injected = [element for element in _elements(dom) if _injected(element)]
    assert injected == [], f"elements from the session made it into the DOM: {injected[:5]}"
    for number, payload in enumerate(payloads(base), 1):  # each one is on the page, as text
        with fault.case(f"payload {number}: {payload[:50]}"):
            shown = payload.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            assert dom.count(shown) >= 3, f"payload {number} is not shown as text"


@needs_chromium
def test_the_page_forbids_scripts_and_fetches_even_if_escaping_failed(tmp_path: Path,
                                                                      listener: tuple[str, list[str]]) -> None:
    # Defence in depth: the export's own Content-Security-Policy. A copy of a real export with a
    # raw payload spliced in (as a broken escaper would leave it) still runs and fetches nothing.
    from pi_tui.modes.export_html import render_session_html

    base, hits = listener
    page = render_session_html({"id": "s"}, [], title=TITLE)
    # (A <meta http-equiv=refresh> would still navigate: no CSP directive stops that, only the
    # escaping, which the test above checks.)
    raw = [p for p in payloads(base) if "refresh" not in p]
    spliced = page.replace("<main>", "<main>" + "".join(raw))
    file = tmp_path / "spliced.html"
    file.write_text(spliced)
    dom = _open_in_chromium(file, tmp_path / "chromium-profile")
    assert hits == []
    assert "PWNED" not in (re.search(r"<title>(.*?)</title>", dom, re.S) or [""])[0]
    body = re.search(r"<body([^>]*)>", dom)
    assert body is not None and "data-pwned" not in body.group(1)
