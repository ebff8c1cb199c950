"""HTML export of a session's current branch: the module, ``pi-tui --export`` and the file."""

from __future__ import annotations

import json
import re
from html import escape
from pathlib import Path

import pytest

from pi_tui.cli import main
from pi_tui.core.messages import user_message
from pi_tui.core.session.manager import SessionManager
from pi_tui.modes.export_html import export_session_html

FIXTURE = "v3-compact-manual.jsonl"


def _entries(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _texts(path: Path) -> list[str]:
    texts = []
    for entry in _entries(path):
        message = entry.get("message") or {}
        for block in message.get("content") or []:
            if isinstance(block, dict) and block.get("type") == "text" and block.get("text", "").strip():
                texts.append(block["text"])
    return texts


def _assert_self_contained(html: str) -> None:
    assert not re.search(r"(?i)\b(src|href)\s*=", html)
    assert "<script" not in html.lower() and "@import" not in html and "url(" not in html
    assert "http://" not in html and "https://" not in html


def test_cli_exports_the_fixture_with_its_messages_and_compaction(pi_fixtures, tmp_path, capsys, monkeypatch):
    source = pi_fixtures / FIXTURE
    monkeypatch.chdir(tmp_path)
    assert main(["--export", str(source)]) == 0
    out = tmp_path / "v3-compact-manual.html"
    assert capsys.readouterr().out.strip() == str(out)
    html = out.read_text(encoding="utf-8")
    for text in _texts(source):
        assert escape(text) in html
    compactions = [e for e in _entries(source) if e["type"] == "compaction"]
    assert html.count("Compaction summary") == len(compactions) >= 1
    assert escape(compactions[-1]["summary"]) in html
    header = _entries(source)[0]
    assert header["id"] in html and escape(header["cwd"]) in html and "fake/fake-model" in html
    assert 'echo hello' in html  # a tool call's arguments
    _assert_self_contained(html)


def test_cli_writes_to_the_given_path(pi_fixtures, tmp_path, capsys):
    out = tmp_path / "nested" / "report.html"
    assert main(["--export", str(pi_fixtures / FIXTURE), str(out)]) == 0
    assert out.is_file() and capsys.readouterr().out.strip() == str(out)


@pytest.mark.parametrize("content", [None, "not a session\n", ""])
def test_cli_bad_input_is_one_line_and_exit_2(tmp_path, capsys, content):
    path = tmp_path / "broken.jsonl"
    if content is not None:
        path.write_text(content)
    assert main(["--export", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and str(path) in err and "Traceback" not in err


def test_text_is_escaped_thinking_folded_and_long_output_folded(tmp_path):
    manager = SessionManager.in_memory(tmp_path)
    manager.append_message(user_message("<script>alert('x')</script> & more"))
    manager.append_message({
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "let me <think>"},
            {"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": "seq 1 100"}},
        ],
        "provider": "p", "model": "m", "stopReason": "toolUse", "timestamp": 1,
    })
    output = "\n".join(str(n) for n in range(1, 101))
    manager.append_message({"role": "toolResult", "toolCallId": "c1", "toolName": "bash",
                            "content": [{"type": "text", "text": output}], "isError": False, "timestamp": 2})
    manager.append_session_info("my <session>")
    path = export_session_html(manager, tmp_path / "out.html")
    html = path.read_text(encoding="utf-8")
    assert "<script>" not in html and "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt; &amp; more" in html
    assert re.search(r"<details class=\"thinking\"><summary>Thinking</summary><pre[^>]*>let me &lt;think&gt;", html)
    assert "<summary>output (100 lines)</summary>" in html
    assert html.count("Result ·") == 0  # the result is shown under its call, once
    assert "<title>my &lt;session&gt; · pi-tui</title>" in html
    _assert_self_contained(html)
