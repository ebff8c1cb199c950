"""pi 0.73.1's own ``RpcClient`` drives pi and ``pi-tui --mode rpc`` through the same scenario on
the same scripted fake server; what each sends back must be the same (issue 14).

Runs only where node and pi are installed (``make pi-ref``, which ``.ci/run`` runs, or
``PI_REF``); elsewhere it is skipped with the reason. ``tests/modes/rpc/test_pi_client.py`` covers the same
items without pi, always.

Transcripts are compared after ``normalize``: times, ids, ports and the scratch root differ by
nature; streamed deltas are collapsed (how many arrive before an abort is timing); everything
else must be equal.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.modes.rpc.pi_parity.harness import Run, pi_available, resumable_fixture, run

pytestmark = [pytest.mark.slow, pytest.mark.skipif(pi_available() is not None, reason=str(pi_available()))]

_ID_KEYS = {"id", "parentId", "entryId", "sessionId", "firstKeptEntryId", "toolCallId"}
_FILE_NAME = re.compile(r"\d{4}-\d\d-\d\dT[\d-]+Z_[0-9a-f-]{36}\.jsonl")
_PORT = re.compile(r"127\.0\.0\.1:\d+")


class Normalizer:
    def __init__(self, root: Path) -> None:
        self.root = str(root)
        self.encoded_root = self.root.lstrip("/").replace("/", "-")  # in session folder names
        self.ids: dict[str, str] = {}

    def __call__(self, value: Any, key: str = "") -> Any:
        if isinstance(value, dict):
            return {k: self(v, k) for k, v in value.items()}
        if isinstance(value, list):
            return [self(v, key) for v in value]
        if key == "timestamp":
            return 0
        if isinstance(value, str):
            if key in _ID_KEYS and not value.startswith(("call_", "req_")):
                return self.ids.setdefault(value, f"<id{len(self.ids)}>")
            value = value.replace(self.root, "<root>").replace(self.encoded_root, "<root>")
            return _PORT.sub("127.0.0.1:<port>", _FILE_NAME.sub("<session>.jsonl", value))
        return value


def events_of(step: dict[str, Any]) -> list[dict[str, Any]]:
    """The step's frames with each ``message_update`` reduced to its stream-event type and
    consecutive equal updates collapsed (delta counts depend on timing)."""
    out: list[dict[str, Any]] = []
    for event in step["events"]:
        if event["type"] == "message_update":
            event = {"type": "message_update", "event": event["assistantMessageEvent"]["type"]}
            if out and out[-1] == event:
                continue
        out.append(event)
    return out


def transcript(result: Run, root: Path) -> list[dict[str, Any]]:
    normalize = Normalizer(root)
    return [normalize({**step, "events": events_of(step)}) for step in result.transcript]


@pytest.fixture(scope="module")
def side_by_side(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    cache: dict[str, tuple[list[dict[str, Any]], list[dict[str, Any]], Run, Run]] = {}

    def get(scenario: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]], Run, Run]:
        if scenario not in cache:
            runs = []
            for program in ("pi", "pi-tui"):
                root = tmp_path_factory.mktemp(f"{scenario}-{program}")
                runs.append((run(program, scenario, root), root))
            (pi, pi_root), (ours, our_root) = runs
            for name, result in (("pi", pi), ("pi-tui", ours)):
                failed = [s for s in result.transcript if s["step"] == "driver"]
                assert not failed, f"{name}: {failed[0]['error']}\n{result.stderr[-2000:]}"
            cache[scenario] = (transcript(pi, pi_root), transcript(ours, our_root), pi, ours)
        return cache[scenario]

    yield get


def by_step(steps: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {step["step"]: step for step in steps}


def session_shape(result: Run, path: str, root: Path) -> list[Any]:
    """A session file's lines, normalized, without the values that are the model's to vary."""
    return Normalizer(root)(result.session_lines(path))


def test_clone(side_by_side: Any) -> None:
    pi, ours, pi_run, our_run = side_by_side("clone")
    assert ours == pi
    pi_state, our_state = by_step(pi_run.transcript)["state"]["data"], by_step(our_run.transcript)["state"]["data"]
    pi_file = session_shape(pi_run, pi_state["sessionFile"], pi_run.agent.parent)
    our_file = session_shape(our_run, our_state["sessionFile"], our_run.agent.parent)
    assert [line.get("type") for line in our_file] == [line.get("type") for line in pi_file]
    assert our_file[0].keys() == pi_file[0].keys()  # the header, parentSession included
    assert our_file[1:] == pi_file[1:]


def test_get_commands_source_info(side_by_side: Any) -> None:
    pi, ours, _, _ = side_by_side("commands")
    pi_commands, our_commands = pi[0]["data"], {c["name"]: c for c in ours[0]["data"]}
    assert pi_commands, "pi listed no commands"
    for command in pi_commands:  # pi-tui also lists the prompts and skills it ships
        mine = our_commands[command["name"]]
        assert {key: mine[key] for key in command} == command
        assert list(mine)[: len(command)] == list(command)


def test_get_commands_source_info_of_extension_commands_and_what_extensions_found(side_by_side: Any) -> None:
    """The extension is ``finder.ts`` for pi and ``finder.py`` for pi-tui (so the command's
    ``sourceInfo.path`` differs by that suffix); the command and the prompt and skill it found
    (``extension:finder``) must be equal, in the same order.

    Not compared: once an extension has found resources, pi 0.73.1 re-labels every *other*
    prompt and skill ``source: "local"`` with its own folder as ``baseDir`` (``auto`` and the
    agent/project dir otherwise, ``test_get_commands_source_info``): its reload after
    ``resources_discover`` loses the package metadata. pi-tui keeps them as they were."""
    pi, ours, _, _ = side_by_side("extension_commands")
    our_commands = {c["name"]: c for c in ours[0]["data"]}
    compared = [c for c in pi[0]["data"] if c["source"] == "extension" or c["sourceInfo"]["source"].startswith("extension:")]
    assert [c["name"] for c in compared] == ["find", "fromext", "skill:sweep"]
    assert [c["name"] for c in ours[0]["data"] if c["name"] in {"find", "fromext", "skill:sweep"}] == [
        "find", "fromext", "skill:sweep"]
    for command in compared:
        mine = our_commands[command["name"]]
        if command["name"] == "find":
            command = {**command, "sourceInfo": {**command["sourceInfo"],
                                                 "path": command["sourceInfo"]["path"].replace(".ts", ".py")}}
        assert {key: mine[key] for key in command} == command


def test_set_model_applies_the_default_thinking_level(side_by_side: Any) -> None:
    pi, ours, pi_run, our_run = side_by_side("set_model")
    assert ours == pi
    pi_file = by_step(pi_run.transcript)["state_after"]["data"]["sessionFile"]
    our_file = by_step(our_run.transcript)["state_after"]["data"]["sessionFile"]
    pi_lines = session_shape(pi_run, pi_file, pi_run.agent.parent)
    our_lines = session_shape(our_run, our_file, our_run.agent.parent)
    assert our_lines[1:] == pi_lines[1:]


def test_abort_while_streaming(side_by_side: Any) -> None:
    pi, ours, _, _ = side_by_side("abort")

    def without_text(steps: list[dict[str, Any]]) -> str:
        # How much text streamed before the abort landed is timing; its place and shape are not.
        return re.sub(r'"text": "Once[^"]*"', '"text": "Once…"', json.dumps(steps))

    assert without_text(ours) == without_text(pi)


def _closing_partials(result: Run) -> list[dict[str, Any]]:
    """What each block's end shows of the reply: the ends are applied once the chunk or the
    abort that closed them is, so they are not a matter of timing as the deltas are."""
    shown = []
    for step in result.transcript:
        for event in step["events"]:
            update = event.get("assistantMessageEvent") or {}
            if event["type"] == "message_update" and update["type"].endswith("_end"):
                partial = update["partial"]
                shown.append({"type": update["type"], "stopReason": partial["stopReason"],
                              "errorMessage": partial.get("errorMessage"),
                              "arguments": [b.get("arguments") for b in partial["content"] if b["type"] == "toolCall"]})
    return shown


@pytest.mark.parametrize("scenario", ["abort", "tool_updates"])
def test_the_blocks_ends_show_the_reply_as_pi(side_by_side: Any, scenario: str) -> None:
    _, _, pi_run, our_run = side_by_side(scenario)
    assert _closing_partials(our_run) == _closing_partials(pi_run)


def test_steer_and_follow_up_while_streaming(side_by_side: Any) -> None:
    """A streaming reply is no message yet for pi (``state.messages`` gets it at its end)."""
    pi, ours, _, _ = side_by_side("steer_follow_up")
    for name in ("state_while_streaming", "state"):
        assert by_step(ours)[name]["data"] == by_step(pi)[name]["data"]
    assert by_step(pi)["state_while_streaming"]["data"] == {"messageCount": 1, "pendingMessageCount": 2}
    assert [m["role"] for m in by_step(ours)["messages"]["data"]] == [m["role"] for m in by_step(pi)["messages"]["data"]]


def test_bash_command(side_by_side: Any) -> None:
    pi, ours, _, _ = side_by_side("bash")
    assert ours == pi
    assert by_step(ours)["bash"]["events"] == []


def test_bash_command_aborted_and_truncated(side_by_side: Any) -> None:
    """``abort_bash`` keeps the output so far and, like pi, no ``exitCode``; a long output's
    message has pi's key order (``fullOutputPath`` before ``timestamp``). Where the full output
    is saved differs on purpose (beside the session file, docs/tools.md), so only its name is
    compared."""
    pi, ours, _, _ = side_by_side("bash_abort")

    def saved_as_name(steps: list[dict[str, Any]]) -> str:
        return re.sub(r'<root>[^"\]]*/(pi-bash-)[0-9a-f]+\.log', r"\1<hex>.log", json.dumps(steps))

    assert saved_as_name(ours) == saved_as_name(pi)
    aborted = by_step(ours)["abort_bash"]["data"]
    assert aborted == {"output": "start\n", "cancelled": True, "truncated": False}


def test_tool_updates(side_by_side: Any) -> None:
    pi, ours, _, _ = side_by_side("tool_updates")
    assert ours == pi


def test_bash_tool_aborted_while_running(side_by_side: Any) -> None:
    pi, ours, _, _ = side_by_side("tool_abort")
    assert ours == pi
    result = by_step(ours)["messages"]["data"][2]
    assert result["role"] == "toolResult" and result["content"][0]["text"].endswith("Command aborted")


_WIRE_ROLES = {"user": "user", "assistant": "assistant", "tool": "toolResult"}


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(block.get("text", "") for block in content or [] if isinstance(block, dict))


def test_resumed_session_sends_what_context_json_shows(side_by_side: Any) -> None:
    """pi resumes its own overflow-compaction session and sends the history: the same request
    as pi-tui's, and exactly the messages ``pi-tui context --json`` lists (the failed overflow
    reply is stored but never sent)."""
    import subprocess
    import sys

    _, _, pi_run, our_run = side_by_side("resume")
    pi_wire, our_wire = pi_run.requests[0]["messages"], our_run.requests[0]["messages"]
    assert [m["role"] for m in our_wire] == [m["role"] for m in pi_wire]
    assert [_text(m.get("content")) for m in our_wire[1:]] == [_text(m.get("content")) for m in pi_wire[1:]]
    sent = pi_wire[1:-1]  # without the system prompt and the new prompt
    pristine = resumable_fixture(our_run.project, our_run.project)  # the run appended to its copy
    listed = subprocess.run([sys.executable, "-m", "pi_tui", "context", "--json", str(pristine)],
                            capture_output=True, text=True, check=True, cwd=our_run.project)
    shown = json.loads(listed.stdout)
    assert len(shown["messages"]) == len(sent) == 9
    assert [m["role"] for m in shown["messages"]] == [_WIRE_ROLES[m["role"]] for m in sent]
    assert [_text(m["content"]) for m in shown["messages"]] == [_text(m.get("content")) for m in sent]
    assert [m["stopReason"] for m in shown["dropped"]] == ["error"]


def test_the_repos_own_pi_config_reads_the_same(tmp_path: Path) -> None:
    """The repository's ``.pi/`` is for pi as much as for pi-tui: both list its prompts with the
    same sourceInfo (tests/resources/test_repo_pi_config.py loads it without pi)."""
    repo = Path(__file__).resolve().parents[4]
    results = {program: run(program, "commands", tmp_path / program, in_project=repo) for program in ("pi", "pi-tui")}
    listed = {program: {c["name"]: c for c in r.transcript[0]["data"] if c["sourceInfo"]["scope"] == "project"}
              for program, r in results.items()}
    assert set(listed["pi"]) == {"check", "land"}
    for name, command in listed["pi"].items():
        mine = listed["pi-tui"][name]
        assert {key: mine[key] for key in command} == command
