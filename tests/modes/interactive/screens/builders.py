"""Real sessions for the screen tests: a ``SessionManager`` on tmp files, and a host app."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from textual.app import App, ComposeResult
from textual.screen import Screen
from textual.widgets import Static

from pi_tui.core.messages import AssistantMessage, ToolResultMessage, empty_usage, user_message
from pi_tui.core.session.manager import SessionManager


def assistant(text: str = "", *, calls: Sequence[tuple[str, str, dict[str, Any]]] = (), stop: str = "stop", error: str | None = None) -> AssistantMessage:
    content: list[Any] = [{"type": "text", "text": text}] if text else []
    content += [{"type": "toolCall", "id": call_id, "name": name, "arguments": args} for call_id, name, args in calls]
    message: Any = {
        "role": "assistant",
        "content": content,
        "api": "openai-completions",
        "provider": "fake",
        "model": "fake-model",
        "usage": empty_usage(),
        "stopReason": "toolUse" if calls else stop,
        "timestamp": 1_764_000_000_000,
    }
    if error is not None:
        message["errorMessage"] = error
    return message  # type: ignore[no-any-return]


def tool_result(call_id: str, name: str, text: str, *, is_error: bool = False, details: Any = None) -> ToolResultMessage:
    message: Any = {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": name,
        "content": [{"type": "text", "text": text}],
        "isError": is_error,
        "timestamp": 1_764_000_000_000,
    }
    if details is not None:
        message["details"] = details
    return message  # type: ignore[no-any-return]


@dataclass(frozen=True)
class BranchedSession:
    """The session of pi's screen capture 14: a compaction on one branch, a summary on the other."""

    manager: SessionManager
    first_user: str
    bash_call: str
    bash_result: str
    done: str
    old_user: str
    old_answer: str
    compaction: str
    old_leaf: str
    summary: str
    new_user: str
    new_answer: str


def build_branched_session(cwd: Path, session_dir: Path) -> BranchedSession:
    manager = SessionManager.create(cwd, session_dir)
    manager.append_model_change("fake", "fake-model")
    manager.append_thinking_level_change("off")
    first_user = manager.append_message(user_message("say hi and run echo hello"))
    bash_call = manager.append_message(assistant(calls=[("call-1", "bash", {"command": "echo hello"})]))
    bash_result = manager.append_message(tool_result("call-1", "bash", "hello"))
    done = manager.append_message(assistant("done"))
    old_user = manager.append_message(user_message("second prompt: show markdown"))
    old_answer = manager.append_message(assistant("Second answer: **markdown** works.\n\n- item 1\n- item 2"))
    compaction = manager.append_compaction("## Goal\nsay hi", old_user, 1496, details={"readFiles": [], "modifiedFiles": []})
    manager.append_message(user_message("third prompt after compaction"))
    old_leaf = manager.append_message(assistant("third answer after compaction"))
    summary = manager.branch_with_summary(
        done,
        "The user explored a different conversation branch before returning here.\nSummary of that exploration:\n\nA compaction happened.",
    )
    new_user = manager.append_message(user_message("second prompt: show markdown"))
    new_answer = manager.append_message(assistant("answer on new branch"))
    return BranchedSession(
        manager=manager,
        first_user=first_user,
        bash_call=bash_call,
        bash_result=bash_result,
        done=done,
        old_user=old_user,
        old_answer=old_answer,
        compaction=compaction,
        old_leaf=old_leaf,
        summary=summary,
        new_user=new_user,
        new_answer=new_answer,
    )


class ScreenHost(App[None]):
    """Pushes one screen over a plain base screen and records what it returns."""

    ENABLE_COMMAND_PALETTE = False  # as in the real app: ctrl+p belongs to the screens

    def __init__(self, screen: Screen[Any]) -> None:
        super().__init__()
        self.pushed = screen
        self.results: list[Any] = []

    def compose(self) -> ComposeResult:
        yield Static("base screen")

    def on_mount(self) -> None:
        self.push_screen(self.pushed, self.results.append)
