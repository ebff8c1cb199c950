"""The fake OpenAI-compatible server: command line, routes, logging, non-streaming answers."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from pi_tui.testing.fake_server import FakeServer


def _post(url: str, body: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as err:
        return err.code, dict(err.headers), err.read()


def _sse_chunks(raw: bytes) -> list[Any]:
    lines = [line[len("data: "):] for line in raw.decode().splitlines() if line.startswith("data: ")]
    assert lines[-1] == "[DONE]"
    return [json.loads(line) for line in lines[:-1]]


def test_streams_openai_chunks_and_logs_every_body(tmp_path: Path) -> None:
    log = tmp_path / "requests.jsonl"
    turns = [{"thinking": "hm", "text": "Hello!", "tool_calls": [{"id": "c1", "name": "bash", "arguments": {"command": "ls"}}],
              "usage": {"prompt_tokens": 10, "completion_tokens": 4, "cached_tokens": 2}}]
    with FakeServer(turns, log_path=log) as server:
        status, headers, raw = _post(server.base_url + "/chat/completions",
                                     {"model": "m1", "stream": True, "messages": [{"role": "user", "content": "hi"}]})
    assert status == 200 and headers["Content-Type"] == "text/event-stream"
    chunks = _sse_chunks(raw)
    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "reasoning_content": "hm"}
    assert chunks[0]["model"] == "m1" and chunks[0]["object"] == "chat.completion.chunk"
    calls = [c["choices"][0]["delta"]["tool_calls"][0] for c in chunks if c["choices"] and "tool_calls" in c["choices"][0]["delta"]]
    assert calls[0]["id"] == "c1" and calls[0]["function"]["name"] == "bash"
    assert all("id" not in c for c in calls[1:])
    assert "".join(c["function"]["arguments"] for c in calls) == '{"command": "ls"}'
    assert chunks[-2]["choices"][0]["finish_reason"] == "tool_calls"
    assert chunks[-1]["choices"] == []
    assert chunks[-1]["usage"] == {"prompt_tokens": 10, "completion_tokens": 4, "total_tokens": 14,
                                   "prompt_tokens_details": {"cached_tokens": 2}}
    assert [json.loads(line) for line in log.read_text().splitlines()] == [
        {"model": "m1", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
    ]


def test_non_streaming_completion_and_models_route() -> None:
    with FakeServer({"models": ["a", "b"], "turns": [{"text": "Hi", "thinking": "t", "usage": {"prompt_tokens": 3, "completion_tokens": 1}}]}) as server:
        status, _, raw = _post(server.base_url + "/chat/completions", {"model": "a", "messages": []})
        with urllib.request.urlopen(server.base_url + "/models", timeout=10) as response:
            models = json.loads(response.read())
    completion = json.loads(raw)
    assert status == 200
    assert completion["choices"][0]["message"] == {"role": "assistant", "content": "Hi", "reasoning_content": "t"}
    assert completion["usage"]["total_tokens"] == 4
    assert [m["id"] for m in models["data"]] == ["a", "b"]


def test_scripted_errors_carry_status_body_and_retry_after() -> None:
    turns = [{"error": {"status": 429, "retry_after": 7}}, {"error": {"status": 400, "code": "context_length_exceeded"}},
             {"error": {"status": 502, "body": "<html>bad gateway</html>"}}]
    with FakeServer(turns) as server:
        url = server.base_url + "/chat/completions"
        rate = _post(url, {"stream": True})
        overflow = _post(url, {"stream": True})
        gateway = _post(url, {})
        exhausted = _post(url, {})
    assert rate[0] == 429 and rate[1]["Retry-After"] == "7"
    assert overflow[0] == 400 and json.loads(overflow[2])["error"]["code"] == "context_length_exceeded"
    assert gateway[0] == 502 and gateway[2] == b"<html>bad gateway</html>"
    assert exhausted[0] == 500 and b"script exhausted" in exhausted[2]


def test_when_selects_the_turn_by_request_content() -> None:
    turns = [{"when": {"system_contains": "summarize"}, "text": "SUMMARY"}, {"text": "ANSWER"}]
    with FakeServer(turns) as server:
        url = server.base_url + "/chat/completions"
        first = json.loads(_post(url, {"messages": [{"role": "user", "content": "hi"}]})[2])
        second = json.loads(_post(url, {"messages": [{"role": "system", "content": "Please summarize"}]})[2])
    assert first["choices"][0]["message"]["content"] == "ANSWER"
    assert second["choices"][0]["message"]["content"] == "SUMMARY"


def test_command_line_prints_its_port_first_and_serves(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": [{"text": "from the cli"}]}))
    log = tmp_path / "log.jsonl"
    proc = subprocess.Popen([sys.executable, "-m", "pi_tui.testing.fake_server", "--script", str(script), "--log", str(log)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline().strip()
        assert first.startswith("PORT ")
        port = int(first.split()[1])
        status, _, raw = _post(f"http://127.0.0.1:{port}/v1/chat/completions", {"model": "x", "messages": []})
        assert status == 200 and json.loads(raw)["choices"][0]["message"]["content"] == "from the cli"
        assert json.loads(log.read_text().splitlines()[0]) == {"model": "x", "messages": []}
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.mark.parametrize("content", ["{not json", '{"turns": 3}'])
def test_command_line_reports_a_bad_script_without_a_traceback(tmp_path: Path, content: str) -> None:
    script = tmp_path / "bad.json"
    script.write_text(content)
    result = subprocess.run([sys.executable, "-m", "pi_tui.testing.fake_server", "--script", str(script)],
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 2
    assert str(script) in result.stderr and "Traceback" not in result.stderr
