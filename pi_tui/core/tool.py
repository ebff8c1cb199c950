"""The tool seam (pi-behaviour.md §4, §7.3).

A tool returns ``content`` (what the model sees) and ``details`` (what the UI and logs see:
diffs, exit codes, truncation facts, artifact paths). A tool signals an expected failure by
raising ``ToolError`` (or any exception): the executor turns it into an error result whose text
is the exception message. Nothing a tool does may kill the agent loop.

Cancellation is asyncio cancellation: an aborted run cancels the task executing the tool, and the
tool cleans up (kills its process group, closes files) in ``finally``. The call's result is then
``Operation aborted``, unless the tool re-raises the cancellation as ``ToolAborted`` carrying the
result it wants recorded (``bash``: the output so far + ``Command aborted``, as pi's bash tool).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol

from pi_tui.core.messages import JsonValue, UserContent


@dataclass(slots=True, kw_only=True)
class ToolResult:
    content: list[UserContent]
    details: JsonValue = None
    is_error: bool = False
    terminate: bool = False
    """When every result of a batch sets it, no further model call is made (pi 0.73.1 §13.7)."""


class ToolAborted(asyncio.CancelledError):
    """The cancellation of an aborted tool, with the (error) result to record for the call."""

    def __init__(self, result: ToolResult) -> None:
        super().__init__(result.content)
        self.result = result


ToolUpdate = Callable[[ToolResult], None]
"""Partial-result callback for live UI updates; must not raise."""


class FileAccess(Protocol):
    """Where ``read``, ``edit`` and ``write`` get and put a text file's content when not from the
    disk: an editor's buffers over ACP (``fs/read_text_file``, ``fs/write_text_file``), unsaved
    changes included. Failures raise (``OSError`` or ``ToolError``) with a message naming the file."""

    async def read_text(self, path: Path) -> str: ...

    async def write_text(self, path: Path, content: str) -> None: ...


class WrappedCommand(Protocol):
    """A command made to run inside a sandbox: start ``argv`` passing ``pass_fds``, then ``close``;
    once it ended, ``finish`` (what the sandbox has to say afterwards, appended to the output).
    ``finish(output_gone=True)``: the call was cancelled and has no output left to append to, so
    the sandbox tells the user itself (a warning notice) and still returns the lines."""

    argv: list[str]
    pass_fds: tuple[int, ...]

    def close(self) -> None: ...

    def finish(self, *, output_gone: bool = False) -> str: ...


class ShellSandbox(Protocol):
    """Where ``bash`` and ``!cmd`` run their shell (``permissions``' bwrap sandbox): ``wrap``
    returns the command to start instead, or None to run it as it is (no sandbox for this call:
    the user approved running it outside). ``call_id`` is the tool call's (None for ``!cmd``)."""

    def wrap(self, argv: Sequence[str], cwd: Path, call_id: str | None) -> WrappedCommand | None: ...

    def explain(self, output: str, call_id: str | None) -> str:
        """For a failed command: one line on what the sandbox blocked in ``output`` ("" none)."""
        ...


class PathPin(Protocol):
    """The real path a permission check approved for a call's file (``permissions``' gate): the
    file tools open exactly it, following no link, so a link swapped in after the check (by a
    command running meanwhile) is refused instead of followed. None: no check pinned one."""

    def pinned(self, call_id: str, path: Path) -> Path | None: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolContext:
    cwd: Path
    on_update: ToolUpdate = lambda _result: None
    artifact_dir: Path | None = None
    """Where large outputs are saved (``<session-stem>.artifacts/``); None means a temp dir."""
    settings: dict[str, JsonValue] = field(default_factory=dict)
    """The merged settings (``shellPath``, ``shellCommandPrefix``, ``images.*`` …)."""
    model_supports_images: bool = True
    files: FileAccess | None = None
    """Text files through the client (ACP mode) instead of the disk; None = the disk."""
    secret_values: frozenset[str] = frozenset()
    """The session's known keys: shell commands run without any variable holding one."""
    sandbox: ShellSandbox | None = None
    """Where shell commands run (None: directly, as pi)."""
    pins: PathPin | None = None
    """The checked real paths of read/edit/write (None: open the path as given, as pi)."""


class Tool(Protocol):
    name: str
    label: str
    description: str
    parameters: dict[str, JsonValue]
    """JSON schema of the arguments (object schema)."""
    prompt_snippet: str | None
    """One line for the system prompt's tool list; None leaves the tool out of that list."""
    prompt_guidelines: tuple[str, ...]
    execution_mode: Literal["parallel", "sequential"]

    def execute(
        self, call_id: str, args: dict[str, JsonValue], ctx: ToolContext
    ) -> Awaitable[ToolResult]: ...


def text_result(text: str, *, details: JsonValue = None, is_error: bool = False) -> ToolResult:
    return ToolResult(content=[{"type": "text", "text": text}], details=details, is_error=is_error)


@dataclass(frozen=True, slots=True, kw_only=True)
class FunctionTool:
    """A Tool built from a coroutine function — what extensions and the SDK register."""

    name: str
    description: str
    parameters: dict[str, JsonValue]
    run: Callable[[str, dict[str, JsonValue], ToolContext], Awaitable[ToolResult]]
    label: str = ""
    prompt_snippet: str | None = None
    prompt_guidelines: tuple[str, ...] = ()
    execution_mode: Literal["parallel", "sequential"] = "parallel"

    def execute(self, call_id: str, args: dict[str, JsonValue], ctx: ToolContext) -> Awaitable[ToolResult]:
        return self.run(call_id, args, ctx)


__all__ = ["FileAccess", "FunctionTool", "Path", "PathPin", "ShellSandbox", "Tool", "ToolContext", "ToolResult", "ToolUpdate", "WrappedCommand", "text_result"]
