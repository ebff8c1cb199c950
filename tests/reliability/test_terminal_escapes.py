"""Terminal escapes: every family of control sequence, pushed through every path to the terminal.

A model answer, a tool's output, a provider's error body and a session name are outside text. On
a terminal they must arrive without a single control character (print mode, stderr, the session
inspectors, the TUI's rendered screen); in JSON/RPC output they stay, JSON-escaped, so the data
is lossless.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pi_tui.core.terminal_text import drop_controls, json_line, printable
from pi_tui.testing.fake_server import FakeServer
from tests.reliability.escapes import ALL, FAMILIES, controls_in
from tests.reliability.hostile_repo import fake_agent_dir, run_cli

FAULT_CLASS = "terminal escapes"

LABELS = [f"[{name}: " for name in FAMILIES]
BASH_ESCAPES = r"printf 'tool-before\033]0;tool-title\007\033[2J\033]52;c;dG9vbA==\007tool-after\n'"


# --------------------------------------------------------------------------- the sanitizer


@pytest.mark.parametrize("name", list(FAMILIES))
def test_printable_removes_each_family_and_keeps_the_text_around_it(name: str) -> None:
    text = f"before {FAMILIES[name]} after\n\tend"
    clean = printable(text)
    assert controls_in(clean) == []
    assert clean.startswith("before ") and clean.endswith(" after\n\tend")
    for leaked in ("pwned-title", "cm0gLXJmIH4K", "544e", "Gpayload"):  # sequence bodies go too
        assert leaked not in clean


def test_printable_keeps_plain_text_untouched() -> None:
    text = "naïve — ünïcode ✓ 表\ttab\nline"
    assert printable(text) is text


@given(st.text())
def test_no_text_survives_printable_with_a_control_character(text: str) -> None:
    assert controls_in(printable(text)) == []
    assert controls_in(drop_controls(text)) == []


@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(),
                    lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner), max_leaves=10))
def test_json_lines_are_lossless_and_carry_no_raw_control(value: Any) -> None:
    line = json_line(value)
    assert controls_in(line) == []
    assert "\u2028" not in line and "\u2029" not in line
    assert json.loads(line) == value


LONE_SURROGATES = ["\ud800.", "\udfff.", "\udc80.", "\ud83d."]
"""Each followed by a character: a high one right before a low one would be a pair, which JSON
reads back as one astral character."""


@given(st.lists(st.one_of(st.text(), st.sampled_from(LONE_SURROGATES)), max_size=8).map("".join))
def test_text_with_a_lone_surrogate_still_reaches_a_terminal_and_json(text: str) -> None:
    """A lone surrogate (a ``\\ud800`` escape in a provider's JSON, a non-UTF-8 file name) is not
    Unicode: written raw, UTF-8 encoding fails and the write raises (print mode lost its answer,
    JSON mode its events). The terminal gets U+FFFD; JSON keeps it, escaped."""
    for shown in (printable(text), drop_controls(text)):
        shown.encode("utf-8")  # raises for a lone surrogate
        assert len(shown) <= len(text)
    line = json_line({"text": text})
    line.encode("utf-8")
    assert json.loads(line) == {"text": text}  # lossless


# --------------------------------------------------------------------------- CLI subprocesses


def _assert_clean(stream: str, where: str) -> None:
    found = controls_in(stream)
    assert found == [], f"{len(found)} control characters reached {where}, e.g. {found[:5]}"


TOOL_THEN_ESCAPES = [
    {"tool_calls": [{"id": "call_1", "name": "bash", "arguments": {"command": BASH_ESCAPES}}]},
    {"text": ALL},
]


def test_print_mode_writes_the_answer_without_control_characters(tmp_path: Path, project: Path) -> None:
    with FakeServer(TOOL_THEN_ESCAPES) as server:
        result = run_cli(["-p", "go"], fake_agent_dir(tmp_path, server.base_url), project)
    out = result.stdout
    assert result.returncode == 0, result.stderr
    _assert_clean(out, "stdout")
    for label in LABELS:
        assert label in out  # the text around each sequence is all there
    assert "pwned-title" not in out and "cm0gLXJmIH4K" not in out


def test_print_mode_errors_and_diagnostics_reach_stderr_without_control_characters(tmp_path: Path,
                                                                                   project: Path) -> None:
    # A provider whose error body carries sequences, and a settings file problem naming a file
    # whose name does: both end on stderr.
    (project / ".pi").mkdir()
    (project / ".pi" / "settings.json").write_text('{"shellPath": 5}')
    with FakeServer([{"error": {"status": 400, "message": f"bad request {ALL}"}}]) as server:
        result = run_cli(["-p", "go", "--skill", f"missing\x1b[2J{FAMILIES['osc52 clipboard write']}"],
                      fake_agent_dir(tmp_path, server.base_url), project)
    err = result.stderr
    assert result.returncode == 1
    _assert_clean(err, "stderr")
    assert "bad request" in err and "[csi screen clear: ]" in err
    assert "shellPath" in err  # the diagnostics are still there
    assert "missing" in err and "pwned" not in err


def test_json_mode_keeps_every_sequence_json_escaped(tmp_path: Path, project: Path) -> None:
    with FakeServer(TOOL_THEN_ESCAPES) as server:
        result = run_cli(["--mode", "json", "-p", "go"], fake_agent_dir(tmp_path, server.base_url), project)
    out = result.stdout
    assert result.returncode == 0, result.stderr
    _assert_clean(out, "JSON output")
    events = [json.loads(line) for line in out.splitlines()]
    final = [e for e in events if e["type"] == "message_end" and e["message"]["role"] == "assistant"][-1]
    assert final["message"]["content"][-1]["text"] == ALL  # lossless
    tool_end = next(e for e in events if e["type"] == "tool_execution_end")
    assert "\x1b]0;tool-title\x07" in tool_end["result"]["content"][0]["text"]


def test_rpc_mode_keeps_every_sequence_json_escaped(tmp_path: Path, project: Path) -> None:
    commands = json.dumps({"id": "1", "type": "prompt", "message": "go"}) + "\n"
    with FakeServer(TOOL_THEN_ESCAPES) as server:
        agent = fake_agent_dir(tmp_path, server.base_url)
        result = run_cli(["--mode", "rpc"], agent, project, stdin=commands)
    out = result.stdout
    _assert_clean(out, "RPC output")
    frames = [json.loads(line) for line in out.splitlines()]
    ends = [f for f in frames if f.get("type") == "message_end" and f["message"]["role"] == "assistant"]
    assert ends and ends[-1]["message"]["content"][-1]["text"] == ALL


def test_session_inspectors_print_stored_sequences_harmlessly(tmp_path: Path, project: Path) -> None:
    with FakeServer(TOOL_THEN_ESCAPES) as server:
        agent = fake_agent_dir(tmp_path, server.base_url)
        assert run_cli(["-p", f"hello {FAMILIES['osc0 window title (BEL)']}"], agent, project).returncode == 0
    (session_file,) = sorted((agent / "sessions").rglob("*.jsonl"))
    for args in (["tree", str(session_file)], ["context", str(session_file)], ["sessions"]):
        result = run_cli(args, agent, project)
        assert result.returncode == 0, result.stderr
        _assert_clean(result.stdout, f"pi-tui {args[0]}")
        _assert_clean(result.stderr, f"pi-tui {args[0]} stderr")
    context = run_cli(["context", str(session_file), "--json"], agent, project)
    _assert_clean(context.stdout, "pi-tui context --json")
    sent = json.loads(context.stdout)["messages"]
    assert sent[0]["content"][0]["text"] == f"hello {FAMILIES['osc0 window title (BEL)']}"  # lossless there


SURROGATE_FRAME = ('data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"fake-model","choices":'
                   '[{"index":0,"delta":{"content":" lone \\ud800 half "},"finish_reason":null}]}\n\n')
ANSWER_WITH_A_LONE_SURROGATE = [{"text": "12345678after", "fault": {"kind": "garbage", "at": "text", "data": SURROGATE_FRAME}}]


@pytest.mark.parametrize("mode", ["text", "json", "rpc"])
def test_a_lone_surrogate_in_the_answer_reaches_every_output(tmp_path: Path, project: Path, mode: str) -> None:
    """The model's text holds a lone surrogate (a valid JSON escape, not Unicode): print mode
    printed a traceback instead of the answer, JSON mode dropped the events that carried it."""
    args = {"text": ["-p", "go"], "json": ["--mode", "json", "-p", "go"], "rpc": ["--mode", "rpc"]}[mode]
    stdin = json.dumps({"id": "1", "type": "prompt", "message": "go"}) + "\n" if mode == "rpc" else ""
    with FakeServer(ANSWER_WITH_A_LONE_SURROGATE) as server:
        result = run_cli(args, fake_agent_dir(tmp_path, server.base_url), project, stdin=stdin)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr and "listener failed" not in result.stderr, result.stderr
    if mode == "text":
        assert result.stdout == "12345678 lone \ufffd half after\n"  # the surrogate comes after the first delta
        return
    events = [json.loads(line) for line in result.stdout.splitlines()]
    ends = [e for e in events if e.get("type") == "message_end" and e["message"]["role"] == "assistant"]
    assert ends and ends[-1]["message"]["content"][-1]["text"] == "12345678 lone \ud800 half after"  # lossless
    assert any(e.get("type") == "agent_end" for e in events)


# --------------------------------------------------------------------------- the TUI

OURS = re.compile(
    r"\x1b\[[0-9;]*m"  # SGR: our colours
    r"|\x1b\[\d+;\d+H"  # Textual's cursor placement of each line
    r"|\x1b\]8;id=[^;\x1b\x07]*;[^\x1b\x07]*\x1b\\"  # a hyperlink Textual draws (its text is checked too)
    r"|\x1b\]8;;\x1b\\"
)


def screen_bytes(app: Any) -> str:
    """What the terminal would receive for a full repaint of the current screen (the same
    ``render_segments`` the app writes to its driver)."""
    update = app.screen._compositor.render_update(full=True)
    return str(update.render_segments(app.console))


def assert_screen_clean(app: Any, where: str) -> str:
    raw = screen_bytes(app)
    raw.encode("utf-8")  # a lone surrogate would make the terminal write fail
    rest = OURS.sub("", raw)
    assert controls_in(rest.replace("\n", "")) == [], f"{where}: {controls_in(rest)[:10]}"
    for leaked in ("\x1b]52", "\x1b]0;", "\x1b[2J", "\x1b[6n", "\x9b", "\x07"):
        assert leaked not in raw, f"{where}: {leaked!r} reached the terminal"
    return rest


@pytest.fixture
def tui(project: Path, agent_dir: Path) -> Any:
    from pi_tui.modes.interactive.app import PiApp
    from pi_tui.sdk import create_agent_session
    from pi_tui.testing.scripted import ScriptedProvider

    def build(turns: list[dict[str, Any]]) -> tuple[Any, Any]:
        session = create_agent_session(cwd=project, agent_dir=agent_dir, provider=ScriptedProvider(turns),
                                       settings={}, load_extensions=False)
        return PiApp(session, cwd=project, agent_dir=agent_dir), session

    return build


async def _settle(app: Any, pilot: Any) -> None:
    await app.workers.wait_for_complete()
    if app.chat is not None:
        await app.chat.workers.wait_for_complete()
    for _ in range(4):
        await pilot.pause(0.05)


async def _ready(pilot: Any) -> None:
    import asyncio

    deadline = asyncio.get_running_loop().time() + 10
    while not (pilot.app.chat is not None and pilot.app.chat.history_loaded.is_set()):
        assert asyncio.get_running_loop().time() < deadline, "the chat did not load"
        await pilot.pause(0.02)


async def test_tui_shows_model_text_tool_output_errors_and_names_without_control_characters(tui: Any,
                                                                                           fault: Any) -> None:
    from pi_tui.modes.interactive.widgets.editor import PromptEditor

    app, session = tui([
        {"text": ALL, "tool_calls": [{"id": "c1", "name": "bash", "arguments": {"command": BASH_ESCAPES}}]},
        {"text": f"done {FAMILIES['osc52 clipboard write']} {FAMILIES['csi screen clear']}"},
        {"error": {"status": 400, "message": f"rejected {FAMILIES['osc0 window title (BEL)']}"
                                             f"{FAMILIES['csi cursor home and moves']}"}},
    ])
    async with app.run_test(size=(140, 60)) as pilot:
        await _ready(pilot)
        session.set_session_name(f"name {FAMILIES['osc2 window title (ST)']}{FAMILIES['8-bit csi']} lone \ud800 half")
        editor = app.screen.query_one(PromptEditor)
        editor.insert("go")
        await pilot.press("enter")
        await _settle(app, pilot)
        await pilot.press("ctrl+o")  # expand the tool output
        await _settle(app, pilot)
        with fault.case("TUI: conversation, tool panel, events pane, footer"):
            shown = assert_screen_clean(app, "conversation, tool panel, events pane, footer")
            assert "tool-before" in shown and "tool-after" in shown and "lone \ufffd half" in shown
        editor.insert("again")
        await pilot.press("enter")
        await _settle(app, pilot)
        with fault.case("TUI: error block and events pane"):
            shown = assert_screen_clean(app, "error block and events pane")
            assert "rejected" in shown
        editor.insert("/tree")
        await pilot.press("enter")
        await _settle(app, pilot)
        assert app.screen is not app.chat, "the tree did not open"
        with fault.case("TUI: tree view"):
            assert_screen_clean(app, "tree view")
        await pilot.press("escape")
        await _settle(app, pilot)
        editor.insert("/resume")
        await pilot.press("enter")
        await _settle(app, pilot)
        with fault.case("TUI: session picker"):
            assert_screen_clean(app, "session picker")
