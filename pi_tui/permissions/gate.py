"""The permission gate: one decision per tool call (run, ask, deny) and where bash runs.

The session calls ``before_tool_call`` for every call (after the extensions' ``tool_call``
handlers) and hands the gate to the tools as their ``ShellSandbox``. Questions go to ``asker``,
a callable the mode passes in (TUI dialog, RPC request, ACP ``session/request_permission``);
without one (print/JSON, the SDK with no UI) whatever would ask is denied. A denial reaches the
model as an error result naming what was blocked and why, and is announced as a
``permission_denied`` event (print mode writes it to stderr).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pi_tui.agent.types import BeforeToolCallResult, ToolCallInfo
from pi_tui.core.tool import WrappedCommand
from pi_tui.permissions.config import PermissionSettings
from pi_tui.permissions.modes import Mode
from pi_tui.permissions.path_check import PathCheck, check_edit_path, hidden_reason
from pi_tui.permissions.rules import EDIT_TOOLS, READ_TOOLS, RuleMatch, parse_rule
from pi_tui.permissions.sandbox import SandboxPolicy, SandboxRuntime
from pi_tui.tools.paths import resolve_to_cwd

AnswerKind = Literal["once", "always", "deny", "stop"]
Scope = Literal["user", "project"]


@dataclass(frozen=True, slots=True)
class PermissionRequest:
    """What the user is asked (every text already free of secrets the model could not see)."""

    call_id: str
    tool: str
    args: dict[str, Any]
    summary: str
    """The command, or the tool and its path."""
    folder: str
    reason: str
    """Why it asks: ``edits ask first in default mode``, ``it leaves the sandbox`` …"""
    justification: str = ""
    escalation: bool = False
    """To run outside the sandbox: a dialog must not approve it on Enter."""
    rule: str | None = None
    """The rule "always" would write (None: "always" is not offered)."""


@dataclass(frozen=True, slots=True)
class PermissionAnswer:
    """The user's answer to a ``PermissionRequest``."""

    kind: AnswerKind
    scope: Scope = "user"
    note: str = ""
    """The user's words to the model with a denial."""


Asker = Callable[[PermissionRequest], Awaitable[PermissionAnswer]]


@dataclass(frozen=True, slots=True)
class PendingSandbox:
    """The preflight a gate settles when first needed (``setup.build_gate`` fills it)."""

    resolve: Callable[[], tuple[SandboxRuntime | None, str]]
    """Runs or joins the preflight: the sandbox, or None and why not."""
    mode_for: Callable[[bool], tuple[Mode, str]]
    """The mode (and where it came from) given whether the sandbox works."""
    notify: Callable[[str], None] | None = None
    """Where "no sandbox: …" goes once known."""
RuleWriter = Callable[[Scope, str], None]
EventSink = Callable[[dict[str, Any]], None]


@dataclass(frozen=True, slots=True)
class Decision:
    """What the gate makes of one call: run, ask or deny, and whether inside the sandbox."""

    kind: Literal["allow", "ask", "deny"]
    reason: str = ""
    sandboxed: bool = True
    escalation: bool = False
    rule: str | None = None


PINNED_TOOLS = frozenset({"read", "edit", "write"})
"""The tools that open the one file their check approved (``pinned``)."""
USER_DENIED = "Denied by the user: do not retry it; ask the user what to do instead."


class PermissionGate:
    """Decisions for one session. ``mode`` may change between calls (the TUI's mode key)."""

    def __init__(self, *, mode: Mode | None, settings: PermissionSettings, cwd: Path, home: Path, trusted: bool,
                 sandbox: SandboxRuntime | None, sandbox_problem: str = "", asker: Asker | None = None,
                 headless_reason: str = "nobody can answer here", write_rule: RuleWriter | None = None,
                 on_event: EventSink | None = None, stop_turn: Callable[[], None] | None = None,
                 pending: PendingSandbox | None = None, policy: SandboxPolicy | None = None,
                 probe: Callable[[], tuple[SandboxRuntime | None, str]] | None = None) -> None:
        self._mode: Mode | None = mode
        """None until ``pending`` settles it (the default mode depends on whether the sandbox works)."""
        self.settings = settings
        self.cwd = cwd
        self.home = home
        self.trusted = trusted
        self._sandbox = sandbox
        self._sandbox_problem = sandbox_problem
        self._pending = pending
        self._probe = probe if probe is not None else pending.resolve if pending is not None else None
        """The run's preflight, for a read-only child of a gate that has none (bypass)."""
        self.policy = policy if policy is not None else sandbox.policy if sandbox is not None else None
        """The paths the file tools are checked against (the sandbox's, whether or not bwrap runs)."""
        self.asker = asker
        self.headless_reason = headless_reason
        self.write_rule = write_rule
        self.on_event = on_event
        self.stop_turn = stop_turn
        self.mode_source = ""
        """Where the mode came from (``--permission-mode``, a settings file, the default)."""
        self._outside: set[str] = set()
        """Tool calls approved to run outside the sandbox."""
        self._pins: dict[str, tuple[Path, Path]] = {}
        """Call id -> (the path as the tool resolves it, the real path the check approved)."""
        self._said_unsandboxed = False
        self._lock = asyncio.Lock()
        """One question at a time: parallel calls queue behind an open dialog."""

    # ------------------------------------------------------------------ the lazy preflight

    def _settle(self) -> None:
        """Run (or join) the run's bwrap preflight the first time anything needs its answer: a
        ``-p`` run that never calls bash never starts bwrap."""
        pending, self._pending = self._pending, None
        if pending is None:
            return
        self._sandbox, self._sandbox_problem = pending.resolve()
        if self._mode is None:
            self._mode, self.mode_source = pending.mode_for(self._sandbox is not None)
        if self._sandbox is None and self._mode != "bypassPermissions" and pending.notify is not None:
            pending.notify(f"no sandbox: {self._sandbox_problem}; bash asks every time"
                           + ("" if self.asker is not None else " (here: is denied)"))

    @property
    def mode(self) -> Mode:
        if self._mode is None:
            self._settle()
        assert self._mode is not None
        return self._mode

    @mode.setter
    def mode(self, value: Mode) -> None:
        self._mode = value

    @property
    def sandbox(self) -> SandboxRuntime | None:
        self._settle()
        return self._sandbox

    @property
    def sandbox_problem(self) -> str:
        """Why there is no sandbox (empty when there is one, or in bypass mode)."""
        self._settle()
        return self._sandbox_problem

    def for_child(self, *, read_only: bool) -> PermissionGate:
        """A subagent's gate: this one (its mode, rules, sandbox and asker), or with ``read_only``
        a gate held in ``plan`` whatever this one's mode — bash in the read-only sandbox, no
        network, edits refused — with the same rules and asker. Under ``bypassPermissions`` the
        read-only child still gets a sandbox (the run's preflight, when it first runs bash)."""
        if not read_only:
            return self
        probe = self._probe

        def resolve() -> tuple[SandboxRuntime | None, str]:
            if self._mode == "bypassPermissions" and probe is not None:
                return probe()
            return self.sandbox, self.sandbox_problem

        child = PermissionGate(mode="plan", settings=self.settings, cwd=self.cwd, home=self.home, trusted=self.trusted,
                               sandbox=None, asker=self.asker, headless_reason=self.headless_reason,
                               write_rule=self.write_rule, on_event=self.on_event, stop_turn=self.stop_turn,
                               pending=PendingSandbox(resolve, lambda _ok: ("plan", "a read-only subagent")),
                               policy=self.policy, probe=probe)
        child.mode_source = "a read-only subagent"
        return child

    @property
    def settled(self) -> bool:
        """Whether the preflight's answer is in (reading ``sandbox`` or ``mode`` would not wait)."""
        return self._pending is None

    # ------------------------------------------------------------------ the sandbox side

    @property
    def sandboxed(self) -> bool:
        return self.sandbox is not None and self.mode != "bypassPermissions"

    def wrap(self, argv: Sequence[str], cwd: Path, call_id: str | None) -> WrappedCommand | None:
        """``ShellSandbox``: bwrap around the shell, unless this call was let out of it."""
        if not self.sandboxed or (call_id is not None and call_id in self._outside):
            return None
        assert self.sandbox is not None
        runtime = self.sandbox.with_read_only(self.mode == "plan")
        command = runtime.command(argv, cwd)
        if self.on_event is not None:
            on_event = self.on_event
            command.report = lambda text: on_event({"type": "notify", "level": "warning", "message": text})
        return command

    def explain(self, output: str, call_id: str | None) -> str:
        """``ShellSandbox``: for a failed command, one line on what the sandbox blocked ("" when
        its output shows no mark of the sandbox, or the call ran outside it)."""
        if not self.sandboxed or (call_id is not None and call_id in self._outside):
            return ""
        from pi_tui.permissions.failure_hint import explain  # only once a sandboxed command failed

        assert self.sandbox is not None
        plan = self.mode == "plan"
        policy = self.sandbox.with_read_only(plan).policy
        return explain(output, cwd=self.cwd, roots=policy.writable_roots(), protected=policy.protected_paths(),
                       hidden=policy.hidden_paths(), network_off=plan or (policy.network == "off" and not policy.domains),
                       plan=plan, can_escalate=self.asker is not None)

    # ------------------------------------------------------------------ decisions

    def decide(self, tool: str, args: dict[str, Any], hints: dict[str, Any] | None = None) -> Decision:
        """``hints``: an MCP tool's annotations (``readOnlyHint``, ``destructiveHint``): they shape
        the question and refuse a destructive tool in plan mode; they never allow a call."""
        match = self.settings.rules.decide(tool, args, self.cwd)
        if match is not None and match.verdict == "deny":
            return Decision("deny", f"denied by the {_describe(match)}")
        if self.mode == "bypassPermissions":
            return Decision("allow", sandboxed=False)
        if tool == "bash":
            return self._bash(args, match)
        if tool in EDIT_TOOLS:
            return self._edit(tool, args, match)
        if tool in READ_TOOLS:
            return self._read(tool, args, match)
        return self._other(tool, match, hints or {})

    def _bash(self, args: dict[str, Any], match: RuleMatch | None) -> Decision:
        command = str(args.get("command", ""))
        if args.get("escalate") is True:
            if self.mode == "plan":
                return Decision("deny", "plan mode runs nothing outside the read-only sandbox")
            return Decision("ask", "the model asks to run it outside the sandbox, with your full rights",
                            sandboxed=False, escalation=True)
        if match is not None and match.verdict == "ask":
            return Decision("ask", f"the {_describe(match)} asks", sandboxed=self.sandbox is not None,
                            rule=None)
        allowed = match is not None and match.verdict == "allow"
        if self.sandbox is None:  # a rule or allowUnsandboxed is the user's decision: it runs, and is said
            if allowed:
                assert match is not None
                return Decision("allow", f"the {_describe(match)} allows it", sandboxed=False)
            if self.asker is None and self.settings.allow_unsandboxed and self.mode != "plan":
                return Decision("allow", "sandbox.allowUnsandboxed is set", sandboxed=False)
            return Decision("ask", f"there is no sandbox here ({self.sandbox_problem}): it would run with your "
                            "full rights", sandboxed=False, rule=_command_rule(command))
        if allowed or self.mode in ("plan", "auto", "dontAsk"):
            return Decision("allow")
        return Decision("ask", f"bash asks first in {self.mode} mode (it runs in the sandbox)",
                        rule=_command_rule(command))

    def _edit(self, tool: str, args: dict[str, Any], match: RuleMatch | None) -> Decision:
        if self.mode == "plan":
            return Decision("deny", "plan mode is read-only: edits are refused")
        if match is not None:
            return Decision("allow") if match.verdict == "allow" else Decision("ask", f"the {_describe(match)} asks")
        check = self._path_check(str(args.get("path", "")))
        if not check.inside:
            return Decision("ask", check.reason, escalation=True, rule=self._path_rule("Edit", check))
        if self.mode == "default":
            return Decision("ask", "edits ask first in default mode", rule=self._path_rule("Edit", check))
        return Decision("allow")

    def _read(self, tool: str, args: dict[str, Any], match: RuleMatch | None) -> Decision:
        if match is not None:
            return Decision("allow") if match.verdict == "allow" else Decision("ask", f"the {_describe(match)} asks")
        raw = args.get("path")
        hidden = hidden_reason(str(raw) if isinstance(raw, str) and raw else ".", self.cwd, self._hidden_paths())
        if hidden:
            return Decision("ask", hidden, escalation=True)
        return Decision("allow")

    def _other(self, tool: str, match: RuleMatch | None, hints: dict[str, Any]) -> Decision:
        if match is not None:
            return Decision("allow") if match.verdict == "allow" else Decision("ask", f"the {_describe(match)} asks")
        read_only, destructive = hints.get("readOnlyHint") is True, hints.get("destructiveHint") is True
        if self.mode == "plan" and destructive and not read_only:
            return Decision("deny", f"plan mode is read-only: {tool}'s server marks it destructive")
        if self.mode in ("plan", "default"):
            note = (" (its server says it only reads: a claim, not a guarantee)" if read_only
                    else " (its server marks it destructive)" if destructive else "")
            return Decision("ask", f"{tool} is not a built-in tool: pi-tui cannot tell what it changes{note}",
                            rule=tool)
        return Decision("allow")

    def _hidden_paths(self) -> list[Path]:
        return self.policy.hidden_paths() if self.policy is not None else []

    def _path_check(self, raw: str) -> PathCheck:
        roots = self.policy.writable_roots() if self.policy is not None else [Path(os.path.realpath(self.cwd))]
        protected = self.policy.protected_paths() if self.policy is not None else []
        return check_edit_path(raw, self.cwd, roots, protected)

    def _path_rule(self, family: str, check: PathCheck) -> str | None:
        if check.real is None:
            return None
        try:
            rel = os.path.relpath(check.real.parent, os.path.realpath(self.cwd))
        except ValueError:
            return None
        if rel.startswith(".."):
            return f"{family}(/{check.real.parent}/**)"
        return f"{family}({'' if rel == '.' else rel + '/'}**)"

    # ------------------------------------------------------------------ pinned paths

    def _real_path(self, tool: str, args: dict[str, Any]) -> tuple[Path, Path] | None:
        raw = args.get("path")
        if tool not in PINNED_TOOLS or self.mode == "bypassPermissions" or not isinstance(raw, str) or not raw:
            return None
        lexical = resolve_to_cwd(raw, self.cwd)
        return lexical, Path(os.path.realpath(lexical))

    def pinned(self, call_id: str, path: Path) -> Path | None:
        """``PathPin``: the real path this call's check approved for ``path``, which the tool opens
        following no link; None when no check pinned one (bypass, another path)."""
        pin = self._pins.get(call_id)
        return pin[1] if pin is not None and pin[0] == path else None

    # ------------------------------------------------------------------ the hook

    async def before_tool_call(self, info: ToolCallInfo) -> BeforeToolCallResult | None:
        call_id, tool = str(info.tool_call["id"]), str(info.tool_call["name"])
        args = dict(info.args)
        found = next((t for t in info.context.tools if t.name == tool), None)
        hints = getattr(found, "annotations", None)  # an MCP tool's (pi_tui/mcp/tools.py)
        before = self._real_path(tool, args)
        decision = self.decide(tool, args, hints if isinstance(hints, dict) else None)
        if before is not None:
            after = self._real_path(tool, args)
            if after != before:  # a link swapped in while the check ran: which one was checked?
                return self._deny(call_id, tool, args, f"the path changed while it was checked ({before[1]} -> "
                                  f"{after[1] if after else '?'}); call the tool again")
            self._pins[call_id] = before
        if decision.kind == "allow":
            if not decision.sandboxed:
                self._outside.add(call_id)
                if tool == "bash" and decision.reason:
                    self._say_unsandboxed(call_id, args, decision.reason)
            return None
        if decision.kind == "deny":
            return self._deny(call_id, tool, args, decision.reason)
        if self.asker is None or self.mode == "dontAsk":
            why = "dontAsk mode" if self.mode == "dontAsk" else self.headless_reason
            return self._deny(call_id, tool, args, f"{decision.reason}, and it was not asked ({why})")
        request = PermissionRequest(
            call_id=call_id, tool=tool, args=args, summary=_summary(tool, args), folder=str(self.cwd),
            reason=decision.reason, justification=str(args.get("justification") or ""),
            escalation=decision.escalation, rule=decision.rule if not decision.escalation else None)
        async with self._lock:
            answer = await self.asker(request)
        if answer.kind in ("deny", "stop"):
            note = f" The user said: {answer.note}" if answer.note else ""
            blocked = self._deny(call_id, tool, args, USER_DENIED + note, by_user=True)
            if answer.kind == "stop" and self.stop_turn is not None:
                self.stop_turn()
            return blocked
        if answer.kind == "always" and request.rule is not None:
            self._remember(answer.scope, request.rule)
        if not decision.sandboxed:
            self._outside.add(call_id)
        return None

    def _say_unsandboxed(self, call_id: str, args: dict[str, Any], reason: str) -> None:
        """Once per session: bash ran without a sandbox and without asking (``permission_unsandboxed``:
        stderr in print/JSON mode, the TUI's events pane)."""
        if self._said_unsandboxed or self.on_event is None:
            return
        self._said_unsandboxed = True
        self.on_event({"type": "permission_unsandboxed", "toolCallId": call_id, "toolName": "bash",
                       "summary": _summary("bash", args), "mode": self.mode,
                       "reason": f"{reason}; there is no sandbox here ({self.sandbox_problem}): it runs with your "
                                 "full rights, without asking (said once per run)"})

    def _remember(self, scope: Scope, rule_text: str) -> None:
        self.settings.rules.add(parse_rule(rule_text, "allow", "a dialog answer"))
        if self.write_rule is not None:
            self.write_rule(scope, rule_text)

    def _deny(self, call_id: str, tool: str, args: dict[str, Any], reason: str, *,
              by_user: bool = False) -> BeforeToolCallResult:
        summary = _summary(tool, args)
        if by_user:
            text = f"Permission denied for {summary}. {reason}"
        else:
            hint = (" If it is needed, call bash again with escalate: true and a justification: the user is asked."
                    if tool == "bash" and self.asker is not None and self.mode != "plan" else "")
            text = f"Permission denied for {summary}: {reason}.{hint}"
        if self.on_event is not None:
            self.on_event({"type": "permission_denied", "toolCallId": call_id, "toolName": tool, "summary": summary,
                           "reason": reason, "mode": self.mode, "byUser": by_user})
        return BeforeToolCallResult(block=True, reason=text)


def _describe(match: RuleMatch) -> str:
    return match.rule.describe()


def _summary(tool: str, args: dict[str, Any]) -> str:
    if tool == "bash":
        return f"bash `{args.get('command', '')}`"
    path = args.get("path")
    return f"{tool} {path}" if isinstance(path, str) and path else tool


def _command_rule(command: str) -> str | None:
    """``Bash(<the command>)`` when a rule could allow it (one simple command, nothing unsafe)."""
    from pi_tui.permissions.shell_parse import parse_command  # a bash call's first need

    parsed = parse_command(command)
    if parsed.unsafe or len(parsed.commands) != 1:
        return None
    return f"Bash({parsed.commands[0].text})"
