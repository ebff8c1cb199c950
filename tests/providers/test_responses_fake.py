"""The Responses fake streams the API's events and refuses what the API refuses."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import pytest

from pi_tui.testing.responses_fake import ResponsesFakeServer

TURN = {"thinking": "Plan: run it.", "text": "Running.", "tool_calls": [{"name": "bash", "arguments": {"command": "echo hi"}}]}


def _post(server: ResponsesFakeServer, body: Any, *, key: str | None = "sk") -> tuple[int, str]:
    headers = {"Content-Type": "application/json"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    request = urllib.request.Request(server.base_url + "/responses", data=json.dumps(body).encode(), headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()


def _events(text: str) -> list[dict[str, Any]]:
    events = []
    for block in text.strip().split("\n\n"):
        name, data = block.split("\n", 1)
        event = json.loads(data.removeprefix("data: "))
        assert name == f"event: {event['type']}"
        events.append(event)
    return events


def _first_reply(server: ResponsesFakeServer, *, include: bool = True) -> list[dict[str, Any]]:
    body: dict[str, Any] = {"model": "o4-mini", "input": [{"role": "user", "content": [{"type": "input_text", "text": "go"}]}],
                            "stream": True, "store": False, "reasoning": {"effort": "medium", "summary": "auto"}}
    if include:
        body["include"] = ["reasoning.encrypted_content"]
    status, text = _post(server, body)
    assert status == 200, text
    completed = _events(text)[-1]
    assert completed["type"] == "response.completed"
    output: list[dict[str, Any]] = completed["response"]["output"]
    return output


def _replay(output: list[dict[str, Any]], *, drop: str | None = None, edit: dict[str, Any] | None = None) -> dict[str, Any]:
    items = [dict(item, **(edit or {})) if item["type"] == "reasoning" else item for item in output if item["type"] != drop]
    items = [{k: v for k, v in item.items() if k != "status"} for item in items]
    call = next(i for i in items if i["type"] == "function_call")
    return {"model": "o4-mini", "stream": True, "store": False,
            "input": [{"role": "user", "content": [{"type": "input_text", "text": "go"}]}, *items,
                      {"type": "function_call_output", "call_id": call["call_id"], "output": "hi\n"}]}


def test_a_reply_streams_reasoning_message_and_call_items_in_order() -> None:
    with ResponsesFakeServer([TURN]) as server:
        output = _first_reply(server)
    assert [i["type"] for i in output] == ["reasoning", "message", "function_call"]
    reasoning = output[0]
    assert reasoning["summary"] == [{"type": "summary_text", "text": "Plan: run it."}] and reasoning["encrypted_content"]
    assert output[2]["arguments"] == '{"command": "echo hi"}' and output[2]["id"].startswith("fc_")


def test_reasoning_items_must_come_back_whole_when_nothing_is_stored() -> None:
    with ResponsesFakeServer([TURN, {"text": "ok"}]) as server:
        output = _first_reply(server)
        without = _post(server, _replay(output, drop="reasoning"))
        no_encrypted = _post(server, _replay(output, edit={"encrypted_content": None}))
        forged = _post(server, _replay(output, edit={"encrypted_content": "gAAAAB-made-up"}))
        whole = _post(server, _replay(output))
    rs, msg = output[0]["id"], output[1]["id"]
    assert without[0] == 400
    assert json.loads(without[1])["error"]["message"] == f"Item '{msg}' of type 'message' was provided without its required 'reasoning' item: '{rs}'."
    assert no_encrypted[0] == 404 and "Items are not persisted when `store` is set to false" in no_encrypted[1]
    assert forged[0] == 400 and f"The encrypted content for item {rs} could not be verified." in forged[1]
    assert whole[0] == 200


def test_encrypted_reasoning_verifies_on_a_fresh_server_as_the_apis_does() -> None:
    """The API keeps nothing with ``store: false``, so its encrypted reasoning verifies wherever it
    is replayed: a session resumed in another process against another fake instance too. Moved to
    another item id, it does not."""
    with ResponsesFakeServer([TURN]) as first:
        output = _first_reply(first)
    with ResponsesFakeServer([{"text": "ok"}, {"text": "ok"}]) as fresh:
        moved = _post(fresh, _replay(output, edit={"id": "rs_fake9"}))
        whole = _post(fresh, _replay(output))
    assert moved[0] == 400 and "The encrypted content for item rs_fake9 could not be verified." in moved[1]
    assert whole[0] == 200


def test_without_include_the_reasoning_cannot_be_replayed() -> None:
    with ResponsesFakeServer([TURN]) as server:
        output = _first_reply(server, include=False)
        status, text = _post(server, _replay(output))
    assert "encrypted_content" not in output[0]
    assert status == 404 and "not found" in json.loads(text)["error"]["message"]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"model": "o4-mini", "input": "x", "messages": []}, "Unknown parameter: 'messages'."),
        ({"model": "gpt-4.1", "input": "x", "reasoning": {"effort": "low"}}, "'reasoning.effort' is not supported with this model"),
        ({"model": "o4-mini", "input": "x", "reasoning": {"effort": "extreme"}}, "Invalid value: 'extreme'"),
        ({"model": "gpt-5-mini", "input": "x", "reasoning": {"effort": "none"}},
         "Unsupported value: 'none' is not supported with the 'gpt-5-mini' model. Supported values are: 'minimal', 'low', 'medium', and 'high'."),
        ({"model": "gpt-5.1", "input": "x", "reasoning": {"effort": "minimal"}}, "'minimal' is not supported with the 'gpt-5.1' model"),
        ({"model": "o4-mini", "input": "x", "reasoning": {"effort": "none"}},
         "Unsupported value: 'none' is not supported with the 'o4-mini' model. Supported values are: 'low', 'medium', and 'high'."),
        ({"model": "o4-mini", "input": "x", "include": ["reasoning.everything"]}, "Invalid value: 'reasoning.everything'"),
        ({"model": "o4-mini", "input": "x", "max_output_tokens": 8}, "Expected a value >= 16"),
        ({"model": "o4-mini", "input": [{"type": "function_call_output", "call_id": "call_1", "output": "x"}]},
         "No tool call found for function call output with call_id call_1."),
        ({"model": "o4-mini", "input": [{"type": "function_call", "call_id": "call_1", "name": "bash", "arguments": "{}"},
                                        {"role": "user", "content": "next"}]}, "No tool output found for function call call_1."),
        ({"model": "o4-mini", "input": [{"type": "message", "role": "assistant", "id": "m1", "content": []}]},
         "Expected an ID that begins with 'msg'."),
        ({"model": "o4-mini", "input": "x", "tools": [{"type": "function", "name": "bad name"}]}, "does not match pattern"),
    ],
    ids=["unknown", "no-reasoning-model", "effort", "gpt-5-none", "gpt-5.1-minimal", "o-series-none", "include", "max-output", "orphan-output", "missing-output", "msg-prefix", "tool-name"],
)
def test_bad_requests_get_the_apis_400(body: dict[str, Any], message: str) -> None:
    with ResponsesFakeServer([{"text": "never"}]) as server:
        status, text = _post(server, body)
        assert server.script.remaining == 1  # a refused request uses no turn
    assert status == 400 and message in json.loads(text)["error"]["message"]


def test_keys_overflow_and_scripted_failures() -> None:
    turns = [{"error": {"status": 429, "message": "Rate limit reached for o4-mini", "retry_after": 3}},
             {"text": "abc", "failed": {"code": "server_error", "message": "boom"}}]
    with ResponsesFakeServer(turns, api_key="sk", context_window=5) as server:
        no_key = _post(server, {"model": "o4-mini", "input": "x"}, key=None)
        overflow = _post(server, {"model": "o4-mini", "input": "x" * 100})
    with ResponsesFakeServer(turns) as server:
        limited = _post(server, {"model": "o4-mini", "input": "x"})
        _, failed = _post(server, {"model": "o4-mini", "input": "x", "stream": True})
    assert no_key[0] == 401 and json.loads(no_key[1])["error"]["code"] == "invalid_api_key"
    assert overflow[0] == 400 and json.loads(overflow[1])["error"]["code"] == "context_length_exceeded"
    assert limited[0] == 429
    assert _events(failed)[-1]["response"]["error"] == {"code": "server_error", "message": "boom"}
