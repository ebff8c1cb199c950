"""The stable Python extension API (pi-behaviour.md §10.2, §13.8; docs/extensions.md).

An extension is a Python file (or package) with a module-level ``register(pi)`` function. ``pi``
is an ``ExtensionAPI``: it subscribes handlers to events, registers tools and slash commands, and
acts on the session. Handlers are called as ``handler(event)`` or ``handler(event, ctx)``
(either form, sync or async); ``event`` is a dict in pi's JSON shape with a ``"type"`` key and
``ctx`` is an ``ExtensionContext``. A handler's return value (a dict, or None) is interpreted per
event by ``ExtensionRunner``.

The session side is the ``ExtensionHost`` protocol below; ``AgentSession`` implements it. While
extensions are being loaded no host is bound yet: action methods then raise
``ExtensionNotBoundError`` (registering handlers, tools and commands is what ``register`` is for).

Dialogs (``ctx.ui``) come from the mode through the host's optional ``extension_ui`` attribute
(an ``ExtensionUI``, see ``ui.py``); a host without one has no UI and dialogs answer "cancelled".
"""

from __future__ import annotations

import asyncio
import functools
import inspect
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol, cast, runtime_checkable

from pi_tui.core.deadline import within
from pi_tui.core.errors import ExtensionError
from pi_tui.core.messages import JsonValue
from pi_tui.core.provider import ModelInfo
from pi_tui.core.tool import FunctionTool, Tool, ToolContext, ToolResult, text_result
from pi_tui.extensions.command_check import command_problem
from pi_tui.extensions.ui import ExtensionUIContext, NotifyLevel

KNOWN_EVENTS = frozenset({
    "session_start", "session_shutdown", "resources_discover", "session_before_switch",
    "session_before_fork", "session_before_compact", "session_compact", "session_compact_failed",
    "session_before_tree", "session_tree", "input", "before_agent_start", "agent_start",
    "agent_end", "turn_start", "turn_end", "message_start", "message_update", "message_end",
    "tool_execution_start", "tool_execution_update", "tool_execution_end", "context",
    "before_provider_request", "after_provider_response", "tool_call", "tool_result",
    "user_bash", "model_select", "thinking_level_select",
})
"""Events pi-tui emits; subscribing to another name still works but earns a warning (typos)."""
LOAD_EVENT = "load"
"""The ``event`` of an ``extension_error`` reported while extensions load (modes show these at start-up)."""
Handler = Callable[..., Any]
"""``(event) -> result`` or ``(event, ctx) -> result``; the result may be awaitable."""
CommandHandler = Callable[..., Any]
"""``(args: str, ctx) -> None`` (sync or async)."""


class ExtensionNotBoundError(ExtensionError):
    """An action method was called before the runner was bound to a session."""

    def __init__(self, what: str) -> None:
        super().__init__(
            f"{what} is not available yet: extensions can act on the session only from event "
            "handlers and commands, not while register() runs"
        )


@runtime_checkable
class ExtensionHost(Protocol):
    """What the session offers extensions. ``AgentSession`` implements it; see docs/extensions.md."""

    @property
    def cwd(self) -> Path: ...

    @property
    def session_manager(self) -> Any:
        """The ``SessionManager`` (treat as read-only; use the API methods to append)."""

    @property
    def model(self) -> ModelInfo | None: ...

    def is_idle(self) -> bool: ...

    async def abort(self) -> None:
        """Abort and wait for the run to stop. A host may also offer a synchronous
        ``request_abort()`` (``AgentSession`` does): ``ctx.abort()`` then requests it at once."""

    async def compact(self, custom_instructions: str | None = None) -> Any: ...

    def get_context_usage(self) -> Any:
        """``ContextUsage`` (tokens, context_window, percent); None without a model; ``tokens``
        and ``percent`` None when unknown (right after a compaction)."""

    def get_system_prompt(self) -> str:
        """The system prompt the next model call uses."""

    def send_message(self, message: dict[str, Any], *, trigger_turn: bool = False) -> None:
        """Append a ``custom`` message (``{customType, content, display, details?}``) to the
        session; with ``trigger_turn`` the agent runs on it when idle (scheduled by the host)."""

    def send_user_message(self, text: str) -> None:
        """Submit ``text`` as if the user typed it (queued as a follow-up while a run is busy)."""

    def append_entry(self, custom_type: str, data: JsonValue) -> str:
        """Append a ``custom`` entry (never sent to the model); returns its id."""

    def set_session_name(self, name: str) -> None: ...

    def get_session_name(self) -> str | None: ...

    def set_label(self, entry_id: str, label: str | None) -> None: ...

    def get_active_tools(self) -> list[str]: ...

    def get_all_tools(self) -> list[str]: ...

    def set_active_tools(self, names: Sequence[str]) -> None:
        """Activate these tools (in this order); the host rebuilds the system prompt."""

    def notify(self, message: str, level: NotifyLevel) -> None:
        """Show ``message`` to the user (emits a ``notify`` session event)."""

    # Optional, read with getattr (a host may leave them out): ``has_ui: bool`` and
    # ``extension_ui: ExtensionUI | None`` (the mode's dialogs behind ``ctx.ui``).


class ExtensionContext:
    """``ctx``: the session as one handler call sees it."""

    def __init__(
        self,
        host: ExtensionHost | None,
        *,
        system_prompt: str | None = None,
        signal: Any = None,
    ) -> None:
        self._host = host
        self._system_prompt = system_prompt
        self.signal = signal
        """The abort signal of the current run or compaction, when there is one."""

    @property
    def host(self) -> ExtensionHost:
        if self._host is None:
            raise ExtensionNotBoundError("the session")
        return self._host

    @property
    def has_host(self) -> bool:
        return self._host is not None

    @property
    def cwd(self) -> Path:
        return self.host.cwd

    @property
    def session_manager(self) -> Any:
        return self.host.session_manager

    @property
    def model(self) -> ModelInfo | None:
        return self.host.model

    @property
    def has_ui(self) -> bool:
        """True when ``ctx.ui`` dialogs reach a person (the TUI, RPC mode)."""
        return bool(getattr(self._host, "has_ui", False))

    @property
    def ui(self) -> ExtensionUIContext:
        """Dialogs and status texts: ``await ctx.ui.confirm(title, message)`` and friends. Without
        a UI the dialogs answer at once with their cancelled value (None / False)."""
        host = self.host
        return ExtensionUIContext(getattr(host, "extension_ui", None), host.notify)

    def is_idle(self) -> bool:
        return self.host.is_idle()

    def abort(self) -> Awaitable[None]:
        """Abort the current run. Synchronous like pi's: the abort is requested before this
        returns, so a plain ``def`` handler's ``ctx.abort()`` works. The returned awaitable waits
        for the run to stop (``await ctx.abort()``); it may be ignored."""
        host = self.host
        request = getattr(host, "request_abort", None)
        if callable(request):
            request()
            return _LazyAwait(host.abort)
        # A host without a synchronous request: start its abort now so it is not lost.
        return asyncio.ensure_future(host.abort())

    async def compact(self, custom_instructions: str | None = None) -> Any:
        return await self.host.compact(custom_instructions)

    def get_context_usage(self) -> Any:
        return self.host.get_context_usage()

    def get_system_prompt(self) -> str:
        """During ``before_agent_start``: the prompt as chained so far; otherwise the session's."""
        if self._system_prompt is not None:
            return self._system_prompt
        return self.host.get_system_prompt()


class _LazyAwait:
    """Calls ``make()`` only when awaited, so an ignored result leaves no un-awaited coroutine."""

    __slots__ = ("_make",)

    def __init__(self, make: Callable[[], Awaitable[None]]) -> None:
        self._make = make

    def __await__(self) -> Any:
        return self._make().__await__()


@dataclass(frozen=True, slots=True)
class RegisteredCommand:
    name: str
    """The name the extension asked for."""
    invocation_name: str
    """What the user types after ``/`` (``name``, or ``name:N`` when several extensions share it)."""
    handler: CommandHandler
    description: str
    extension_path: Path


@dataclass(slots=True)
class Extension:
    """One loaded extension and what it registered."""

    path: Path
    handlers: dict[str, list[Handler]] = field(default_factory=dict)
    tools: list[Tool] = field(default_factory=list)
    commands: list[tuple[str, CommandHandler, str]] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class ExecResult:
    stdout: str
    stderr: str
    code: int
    killed: bool = False


def accepts_context(handler: Callable[..., Any]) -> bool:
    """Whether ``handler`` takes a second positional argument (``ctx``). Cached: it runs for every
    handler call, streaming ``message_update`` events included."""
    try:
        return _accepts_context_cached(handler)
    except TypeError:  # an unhashable callable object
        return _accepts_context(handler)


@functools.lru_cache(maxsize=1024)
def _accepts_context_cached(handler: Callable[..., Any]) -> bool:
    return _accepts_context(handler)


def _accepts_context(handler: Callable[..., Any]) -> bool:
    try:
        params = list(inspect.signature(handler).parameters.values())
    except (TypeError, ValueError):
        return True
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return len(positional) >= 2 or any(p.kind == p.VAR_POSITIONAL for p in params)


def _wrap_execute(
    name: str, execute: Callable[..., Any]
) -> Callable[[str, dict[str, JsonValue], ToolContext], Awaitable[ToolResult]]:
    async def run(call_id: str, args: dict[str, JsonValue], ctx: ToolContext) -> ToolResult:
        result = execute(call_id, args, ctx)
        if inspect.isawaitable(result):
            result = await result
        if isinstance(result, ToolResult):
            return result
        if isinstance(result, str):
            return text_result(result)
        raise ExtensionError(f"tool {name!r} returned {type(result).__name__}; expected ToolResult or str")

    return run


class RunnerPort(Protocol):
    """What ``ExtensionAPI`` needs of the runner that loaded it (``ExtensionRunner`` is one):
    defined here, below the runner, so the API never imports the runner back."""

    @property
    def host(self) -> ExtensionHost | None: ...

    def notify(self, message: str, level: NotifyLevel = "info") -> None: ...

    def report(self, extension_path: Path | str, event: str, error: str) -> None: ...

    def commands(self) -> list[RegisteredCommand]: ...


class ExtensionAPI:
    """``pi`` as an extension's ``register(pi)`` receives it (one instance per extension)."""

    def __init__(self, extension: Extension, runner: RunnerPort) -> None:
        self._extension = extension
        self._runner = runner

    @property
    def path(self) -> Path:
        """The extension's file (or package folder)."""
        return self._extension.path

    # ---------------------------------------------------------------- registration

    def on(self, event: str, handler: Handler | None = None) -> Any:
        """Subscribe ``handler`` to ``event``; without ``handler`` it is a decorator."""
        if handler is None:

            def decorator(fn: Handler) -> Handler:
                self.on(event, fn)
                return fn

            return decorator
        if not callable(handler):
            raise ExtensionError(f"handler for {event!r} is not callable")
        if event not in KNOWN_EVENTS:
            self._runner.notify(f"{self.path}: pi.on({event!r}): no such event; the handler will never run", "warning")
        self._extension.handlers.setdefault(event, []).append(handler)
        return handler

    def register_tool(
        self,
        tool: Tool | None = None,
        *,
        name: str | None = None,
        description: str = "",
        parameters: dict[str, JsonValue] | None = None,
        execute: Callable[..., Any] | None = None,
        label: str = "",
        prompt_snippet: str | None = None,
        prompt_guidelines: Sequence[str] = (),
        execution_mode: Literal["parallel", "sequential"] = "parallel",
    ) -> Tool:
        """Register a ready ``Tool`` or build one: ``execute(call_id, args, ctx)`` returns a
        ``ToolResult`` or a string (sync or async). Raise to report an error result."""
        if tool is None:
            if not name or execute is None:
                raise ExtensionError("register_tool needs a Tool, or name= and execute=")
            built = FunctionTool(
                name=name,
                description=description,
                parameters=parameters if parameters is not None else {"type": "object", "properties": {}},
                run=_wrap_execute(name, execute),
                label=label or name,
                prompt_snippet=prompt_snippet,
                prompt_guidelines=tuple(prompt_guidelines),
                execution_mode=execution_mode,
            )
            # FunctionTool is frozen; the Tool protocol declares plain attributes, which mypy
            # reads as writable. The session never assigns them, so the cast is safe.
            tool = cast(Tool, built)
        self._extension.tools.append(tool)
        return tool

    def register_command(self, name: str, handler: CommandHandler, *, description: str = "", **options: Any) -> None:
        """``/name args`` runs ``handler(args, ctx)`` instead of prompting the model. A
        registration that could not work (a handler that is not a function taking ``(args)`` or
        ``(args, ctx)``, a bad name or option) is reported with this file and the command, and
        left out; the extension's other registrations stand (``command_check.py``)."""
        problem = command_problem(name, handler, description, options, accepts_context)
        if problem is not None:
            event = LOAD_EVENT if self._runner.host is None else "register_command"
            self._runner.report(self.path, event, f"register_command({name!r}) refused: {problem}")
            return
        self._extension.commands.append((name.removeprefix("/"), handler, description))

    # ---------------------------------------------------------------- actions

    def _host(self, what: str) -> ExtensionHost:
        host = self._runner.host
        if host is None:
            raise ExtensionNotBoundError(what)
        return host

    def notify(self, message: str, level: NotifyLevel = "info") -> None:
        """Tell the user something; before the session exists it is shown once it does."""
        self._runner.notify(message, level)

    def send_message(self, message: dict[str, Any], *, trigger_turn: bool = False) -> None:
        self._host("send_message").send_message(message, trigger_turn=trigger_turn)

    def send_user_message(self, text: str) -> None:
        self._host("send_user_message").send_user_message(text)

    def append_entry(self, custom_type: str, data: JsonValue = None) -> str:
        return self._host("append_entry").append_entry(custom_type, data)

    def set_session_name(self, name: str) -> None:
        self._host("set_session_name").set_session_name(name)

    def get_session_name(self) -> str | None:
        return self._host("get_session_name").get_session_name()

    def set_label(self, entry_id: str, label: str | None) -> None:
        self._host("set_label").set_label(entry_id, label)

    def get_active_tools(self) -> list[str]:
        return self._host("get_active_tools").get_active_tools()

    def get_all_tools(self) -> list[str]:
        return self._host("get_all_tools").get_all_tools()

    def set_active_tools(self, names: Sequence[str]) -> None:
        self._host("set_active_tools").set_active_tools(list(names))

    def get_commands(self) -> list[RegisteredCommand]:
        return self._runner.commands()

    async def exec(
        self, command: str, *args: str, cwd: Path | None = None, time_limit_s: float | None = None
    ) -> ExecResult:
        """Run a program (no shell); passing ``time_limit_s`` kills it then and sets ``killed``."""
        if cwd is None and self._runner.host is not None:
            cwd = self._runner.host.cwd
        process = await asyncio.create_subprocess_exec(
            command, *args, cwd=cwd, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
        )
        try:
            out, err = await within(process.communicate(), time_limit_s)
        except TimeoutError:
            process.kill()
            out, err = await process.communicate()
            return ExecResult(out.decode(errors="replace"), err.decode(errors="replace"), -9, killed=True)
        return ExecResult(out.decode(errors="replace"), err.decode(errors="replace"), process.returncode or 0)
