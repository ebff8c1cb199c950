"""``ctx.ui`` (pi_tui/extensions/ui.py): dialogs through a mode's ``ExtensionUI``, the cancelled
value without one, timeouts, the paused handler clock, and the session exposing the UI."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from pi_tui.core.errors import ExtensionError
from pi_tui.extensions.api import Extension, ExtensionAPI, ExtensionContext
from pi_tui.extensions.runner import ExtensionRunner
from pi_tui.extensions.ui import ExtensionUI
from pi_tui.sdk import create_agent_session
from pi_tui.testing.scripted import ScriptedProvider
from tests.extensions.host import RecordingHost


class FakeUI:
    """A mode's UI that answers from ``answers`` (in order), after ``delay_s``; ``None`` in
    ``answers`` means the person cancelled. ``hang`` never answers (until cancelled)."""

    def __init__(self, *answers: Any, delay_s: float = 0.0, hang: bool = False) -> None:
        self.answers = list(answers)
        self.delay_s = delay_s
        self.hang = hang
        self.calls: list[tuple[Any, ...]] = []
        self.statuses: dict[str, str | None] = {}
        self.closed_by_cancel = 0

    async def _answer(self, *call: Any) -> Any:
        self.calls.append(call)
        try:
            if self.hang:
                await asyncio.Event().wait()
            await asyncio.sleep(self.delay_s)
        except asyncio.CancelledError:
            self.closed_by_cancel += 1
            raise
        return self.answers.pop(0)

    async def select(self, title: str, options: Sequence[str], *, timeout_s: float | None) -> str | None:
        return await self._answer("select", title, list(options), timeout_s)

    async def confirm(self, title: str, message: str, *, timeout_s: float | None) -> bool | None:
        return await self._answer("confirm", title, message, timeout_s)

    async def input(self, title: str, placeholder: str | None, *, timeout_s: float | None) -> str | None:
        return await self._answer("input", title, placeholder, timeout_s)

    async def editor(self, title: str, prefill: str, *, timeout_s: float | None) -> str | None:
        return await self._answer("editor", title, prefill, timeout_s)

    def set_status(self, key: str, text: str | None) -> None:
        self.statuses[key] = text


class UiHost(RecordingHost):
    def __init__(self, cwd: Path, ui: ExtensionUI | None) -> None:
        super().__init__(cwd)
        self.extension_ui = ui

    @property
    def has_ui(self) -> bool:
        return self.extension_ui is not None


def test_the_fake_implements_the_protocol() -> None:
    assert isinstance(FakeUI(), ExtensionUI)


async def test_without_a_ui_dialogs_answer_cancelled_at_once(tmp_path: Path) -> None:
    host = UiHost(tmp_path, None)
    ctx = ExtensionContext(host)
    assert ctx.has_ui is False and ctx.ui.available is False
    async with asyncio.timeout(1):
        assert await ctx.ui.select("Pick", ["a", "b"]) is None
        assert await ctx.ui.confirm("Sure?", "really") is False
        assert await ctx.ui.input("Name") is None
        assert await ctx.ui.editor("Text", "prefill") is None
    ctx.ui.set_status("k", "ignored")  # nothing to show it: no error
    ctx.ui.notify("still told", "warning")
    assert host.notes == [("still told", "warning")]


async def test_dialogs_pass_through_to_the_mode_and_answers_come_back(tmp_path: Path) -> None:
    ui = FakeUI("b", True, "typed", "edited\ntext", None, False)
    ctx = ExtensionContext(UiHost(tmp_path, ui))
    assert ctx.has_ui is True
    assert await ctx.ui.select("Pick", ("a", "b"), timeout_s=5) == "b"
    assert await ctx.ui.confirm("Sure?", "really") is True
    assert await ctx.ui.input("Name", "your name") == "typed"
    assert await ctx.ui.editor("Text", "start") == "edited\ntext"
    assert await ctx.ui.input("Again") is None  # cancelled
    assert await ctx.ui.confirm("Sure?") is False  # said no
    assert ui.calls == [
        ("select", "Pick", ["a", "b"], 5.0), ("confirm", "Sure?", "really", None),
        ("input", "Name", "your name", None), ("editor", "Text", "start", None),
        ("input", "Again", None, None), ("confirm", "Sure?", "", None),
    ]


async def test_a_cancelled_confirm_is_false_and_a_foreign_select_answer_is_none(tmp_path: Path) -> None:
    ctx = ExtensionContext(UiHost(tmp_path, FakeUI(None, "zzz")))
    assert await ctx.ui.confirm("Sure?", "x") is False
    assert await ctx.ui.select("Pick", ["a", "b"]) is None


async def test_a_timeout_closes_the_dialog_and_returns_the_cancelled_value(tmp_path: Path) -> None:
    ui = FakeUI(hang=True)
    ctx = ExtensionContext(UiHost(tmp_path, ui))
    loop = asyncio.get_running_loop()
    started = loop.time()
    assert await ctx.ui.confirm("Sure?", "x", timeout_s=0.05) is False
    assert await ctx.ui.select("Pick", ["a"], timeout_s=0.05) is None
    assert loop.time() - started < 1.0
    assert ui.closed_by_cancel == 2


async def test_a_ui_that_queues_dialogs_counts_the_timeout_itself(tmp_path: Path) -> None:
    # Such a UI (the TUI) starts the clock when the dialog is shown; ctx.ui must not cut it short
    # while the dialog still waits its turn (here: an answer after 0.1 s, past the 0.05 s timeout).
    ui = FakeUI(True, delay_s=0.1)
    ui.enforces_timeout = True  # type: ignore[attr-defined]
    ctx = ExtensionContext(UiHost(tmp_path, ui))
    assert await ctx.ui.confirm("Sure?", "x", timeout_s=0.05) is True
    assert ui.calls == [("confirm", "Sure?", "x", 0.05)]
    assert ui.closed_by_cancel == 0


async def test_status_texts_and_bad_arguments(tmp_path: Path) -> None:
    ui = FakeUI()
    ctx = ExtensionContext(UiHost(tmp_path, ui))
    ctx.ui.set_status("build", "compiling")
    ctx.ui.set_status("build", "")
    ctx.ui.set_status("lint", None)
    assert ui.statuses == {"build": None, "lint": None}
    ctx.ui.set_status("build", "green")
    assert ui.statuses["build"] == "green"
    with pytest.raises(ExtensionError, match="options must be a list of strings"):
        await ctx.ui.select("Pick", "abc")
    with pytest.raises(ExtensionError, match=r"select options\[1\] must be a string"):
        await ctx.ui.select("Pick", ["a", 2])  # type: ignore[list-item]
    with pytest.raises(ExtensionError, match="timeout_s must be a positive number"):
        await ctx.ui.confirm("Sure?", "x", timeout_s=0)
    with pytest.raises(ExtensionError, match="level must be info, warning or error"):
        ctx.ui.notify("x", "loud")  # type: ignore[arg-type]
    assert ui.calls == []


def _runner_with(handler: Any, *, timeout_s: float) -> ExtensionRunner:
    runner = ExtensionRunner(timeout_s=timeout_s)
    extension = Extension(path=Path("/ext/asker.py"))
    ExtensionAPI(extension, runner).on("tool_call", handler)
    runner.add(extension)
    return runner


async def test_a_person_answering_slowly_does_not_trip_the_handler_time_limit(tmp_path: Path) -> None:
    async def ask(event: dict[str, Any], ctx: Any) -> dict[str, Any] | None:
        if await ctx.ui.confirm("Run it?", event["input"]["command"]):
            return None
        return {"block": True, "reason": "refused"}

    runner = _runner_with(ask, timeout_s=0.1)
    runner.bind(UiHost(tmp_path, FakeUI(False, delay_s=0.3)))  # type: ignore[arg-type]
    decision = await runner.emit_tool_call("bash", "c1", {"command": "ls"})
    assert runner.errors == []
    assert decision is not None and (decision.block, decision.reason) == (True, "refused")


async def test_the_time_limit_resumes_after_the_dialog(tmp_path: Path) -> None:
    async def ask_then_hang(event: dict[str, Any], ctx: Any) -> None:
        await ctx.ui.confirm("Run it?", "x")
        await asyncio.sleep(5)

    runner = _runner_with(ask_then_hang, timeout_s=0.1)
    runner.bind(UiHost(tmp_path, FakeUI(True, delay_s=0.2)))  # type: ignore[arg-type]
    decision = await runner.emit_tool_call("bash", "c1", {"command": "ls"})
    assert [e["error"] for e in runner.errors] == ["handler timed out after 0.1s"]
    assert decision is not None and decision.block is True  # a failing gate blocks


async def test_the_session_exposes_the_mode_ui_to_extensions(project: Path, agent_dir: Path) -> None:
    (project / "asker.py").write_text(
        "def register(pi):\n"
        "    async def ask(args, ctx):\n"
        "        name = await ctx.ui.input('Name?', 'a name')\n"
        "        ctx.ui.set_status('greeter', f'greeted {name}')\n"
        "        ctx.ui.notify(f'hello {name} (has_ui={ctx.has_ui})')\n"
        "    pi.register_command('greet', ask)\n"
    )
    session = create_agent_session(cwd=project, agent_dir=agent_dir, provider=ScriptedProvider([]),
                                   no_session=True, settings={}, extension_paths=[str(project / "asker.py")])
    notes: list[str] = []
    session.subscribe(lambda e: notes.append(e["message"]) if e.get("type") == "notify" else None)
    assert session.has_ui is False
    await session.prompt("/greet")
    assert notes == ["hello None (has_ui=False)"]
    ui = FakeUI("Ada")
    session.set_extension_ui(ui)
    assert session.has_ui is True
    await session.prompt("/greet")
    assert notes[-1] == "hello Ada (has_ui=True)"
    assert ui.statuses == {"greeter": "greeted Ada"}
