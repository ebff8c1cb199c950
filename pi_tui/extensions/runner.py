"""Run extension handlers (pi-behaviour.md §10.2, §13.7, §13.8, §2.9).

Handlers run in extension load order and are awaited one after the other. A handler that raises,
or that runs longer than ``timeout_s``, is reported as an ``extension_error`` event
``{extensionPath, event, error}`` and skipped: the next handler runs and the default behaviour
continues. The one exception is ``tool_call``, a gate: a failing handler blocks the tool.

The typed ``emit_*`` helpers implement each event's combination rule (chained values,
short-circuits, first/last wins) so the session never has to; ``emit`` is for plain
notifications (``agent_start``, ``turn_end``, ``session_start``, …).
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pi_tui.agent.types import AfterToolCallResult, BeforeToolCallResult
from pi_tui.core.messages import AgentMessage, CustomMessage, ImageContent, JsonValue, now_ms
from pi_tui.extensions.api import accepts_context
from pi_tui.extensions.dispatch import DEFAULT_TIMEOUT_S, FAILED, HandlerDispatcher, describe
from pi_tui.extensions.results import (
    BeforeAgentStartResult,
    CompactDecision,
    InputResult,
    ResourcePaths,
    TreeDecision,
)

__all__ = ["DEFAULT_TIMEOUT_S", "ExtensionRunner"]


class ExtensionRunner(HandlerDispatcher):
    """All loaded extensions; ``bind(host)`` attaches the session."""

    # ---------------------------------------------------------------- typed helpers

    async def emit_input(
        self, text: str, images: Sequence[ImageContent] = (), source: str = "interactive"
    ) -> InputResult:
        """``transform`` results chain; ``handled`` short-circuits (§10.2)."""
        current_text, current_images = text, list(images)
        for ext, handler in self._handlers("input"):
            event = {"type": "input", "text": current_text, "images": list(current_images), "source": source}
            result = await self._call(ext, handler, event, self._ctx())
            if result is FAILED or result is None:
                continue
            action = result.get("action") if isinstance(result, dict) else None
            if action == "handled":
                return InputResult("handled", current_text, current_images)
            if action == "transform" and isinstance(result.get("text"), str):
                current_text = result["text"]
                if isinstance(result.get("images"), list):
                    current_images = result["images"]
            elif action != "continue":
                self._invalid(ext, "input", result, '{"action": "continue" | "transform" | "handled"}')
        return InputResult("continue", current_text, current_images)

    async def emit_before_agent_start(
        self,
        prompt: str,
        images: Sequence[ImageContent],
        system_prompt: str,
        system_prompt_options: dict[str, Any] | None = None,
    ) -> BeforeAgentStartResult:
        """System prompts chain (``ctx.get_system_prompt()`` sees the chain); messages collect."""
        current = system_prompt
        changed = False
        messages: list[CustomMessage] = []
        for ext, handler in self._handlers("before_agent_start"):
            event = {
                "type": "before_agent_start",
                "prompt": prompt,
                "images": list(images),
                "systemPrompt": current,
                "systemPromptOptions": copy.deepcopy(system_prompt_options or {}),
            }
            result = await self._call(ext, handler, event, self._ctx(system_prompt=current))
            if result is FAILED or result is None:
                continue
            if not isinstance(result, dict):
                self._invalid(ext, "before_agent_start", result, "a dict with systemPrompt and/or message")
                continue
            if isinstance(result.get("systemPrompt"), str):
                current, changed = result["systemPrompt"], True
            message = result.get("message")
            if message is not None:
                built = _custom_message(message)
                if built is None:
                    self._invalid(ext, "before_agent_start", message, "{customType, content, display?, details?}")
                else:
                    messages.append(built)
        return BeforeAgentStartResult(current if changed and current != "" else None, messages)

    async def emit_context(self, messages: list[AgentMessage]) -> list[AgentMessage]:
        """Handlers see a deep copy; each ``{"messages": [...]}`` replaces it for the next one."""
        current = copy.deepcopy(messages)
        for ext, handler in self._handlers("context"):
            result = await self._call(ext, handler, {"type": "context", "messages": current}, self._ctx())
            if result is FAILED or result is None:
                continue
            if isinstance(result, dict) and isinstance(result.get("messages"), list):
                current = result["messages"]
            else:
                self._invalid(ext, "context", result, '{"messages": [...]}')
        return current

    async def emit_before_provider_request(self, payload: dict[str, Any]) -> dict[str, Any]:
        """Each handler may return a replacement request body; chained."""
        current = payload
        for ext, handler in self._handlers("before_provider_request"):
            event = {"type": "before_provider_request", "payload": current}
            result = await self._call(ext, handler, event, self._ctx())
            if result is FAILED or result is None:
                continue
            if isinstance(result, dict):
                current = result
            else:
                self._invalid(ext, "before_provider_request", result, "a request body dict")
        return current

    def before_provider_request_sync(self, payload: dict[str, Any]) -> dict[str, Any] | None:
        """The same rule for the synchronous ``PayloadHook`` of ``core/provider.py``: only sync
        handlers can take part there; an async one is reported and skipped. None = unchanged."""
        current, changed = payload, False
        for ext, handler in self._handlers("before_provider_request"):
            event = {"type": "before_provider_request", "payload": current}
            try:
                result = handler(event, self._ctx()) if accepts_context(handler) else handler(event)
            except Exception as exc:
                self.report(ext.path, "before_provider_request", describe(exc))
                continue
            if inspect.isawaitable(result):
                if inspect.iscoroutine(result):
                    result.close()
                self.report(ext.path, "before_provider_request", "handler must be synchronous here (it runs inside the provider call)")
                continue
            if isinstance(result, dict):
                current, changed = result, True
        return current if changed else None

    async def emit_tool_call(
        self, tool_name: str, tool_call_id: str, tool_input: dict[str, JsonValue]
    ) -> BeforeToolCallResult | None:
        """The first ``{"block": True}`` wins; a handler that raises or times out blocks too."""
        for ext, handler in self._handlers("tool_call"):
            event = {"type": "tool_call", "toolName": tool_name, "toolCallId": tool_call_id, "input": tool_input}
            before = len(self.errors)
            result = await self._call(ext, handler, event, self._ctx())
            if result is FAILED:
                error = self.errors[before]["error"] if len(self.errors) > before else "failed"
                return BeforeToolCallResult(block=True, reason=f"Extension {ext.path} failed: {error}")
            if isinstance(result, dict) and result.get("block"):
                reason = result.get("reason")
                return BeforeToolCallResult(block=True, reason=reason if isinstance(reason, str) else None)
        return None

    async def emit_tool_result(
        self,
        tool_name: str,
        tool_call_id: str,
        tool_input: dict[str, JsonValue],
        content: list[Any],
        details: JsonValue,
        is_error: bool,
    ) -> AfterToolCallResult | None:
        """Chained: each returned ``content`` / ``details`` / ``isError`` replaces the current value,
        errored tools included (§13.7). None when no handler changed anything."""
        current = {"content": content, "details": details, "isError": is_error}
        changed: set[str] = set()
        for ext, handler in self._handlers("tool_result"):
            event = {"type": "tool_result", "toolName": tool_name, "toolCallId": tool_call_id, "input": tool_input, **current}
            result = await self._call(ext, handler, event, self._ctx())
            if result is FAILED or result is None:
                continue
            if not isinstance(result, dict):
                self._invalid(ext, "tool_result", result, "{content?, details?, isError?}")
                continue
            for key, valid in (("content", isinstance(result.get("content"), list)),
                               ("details", "details" in result),
                               ("isError", isinstance(result.get("isError"), bool))):
                if valid:
                    current[key] = result[key]
                    changed.add(key)
        if not changed:
            return None
        return AfterToolCallResult(
            content=current["content"] if "content" in changed else None,
            details=current["details"],
            replace_details="details" in changed,
            is_error=current["isError"] if "isError" in changed else None,
        )

    async def emit_message_end(self, message: AgentMessage) -> AgentMessage:
        """``{"message": m}`` replaces the finished message if the role is unchanged (§13.7)."""
        current = message
        for ext, handler in self._handlers("message_end"):
            result = await self._call(ext, handler, {"type": "message_end", "message": current}, self._ctx())
            if result is FAILED or result is None:
                continue
            replacement = result.get("message") if isinstance(result, dict) else None
            if not isinstance(replacement, dict):
                continue
            if replacement.get("role") != current.get("role"):
                self.report(ext.path, "message_end", "message_end handlers must return a message with the same role")
                continue
            current = replacement  # type: ignore[assignment]
        return current

    async def emit_session_before_compact(
        self,
        *,
        preparation: Any,
        branch_entries: list[Any],
        custom_instructions: str | None,
        reason: str,
        will_retry: bool,
        signal: Any = None,
    ) -> CompactDecision:
        """A cancel short-circuits; otherwise the last valid ``compaction`` wins (§2.9)."""
        compaction: dict[str, Any] | None = None
        for ext, handler in self._handlers("session_before_compact"):
            event = {
                "type": "session_before_compact",
                "preparation": preparation,
                "branchEntries": branch_entries,
                "customInstructions": custom_instructions,
                "reason": reason,
                "willRetry": will_retry,
                "signal": signal,
            }
            result = await self._call(ext, handler, event, self._ctx(signal=signal))
            if result is FAILED or result is None:
                continue
            if not isinstance(result, dict):
                self._invalid(ext, "session_before_compact", result, "{cancel} or {compaction}")
                continue
            if result.get("cancel"):
                return CompactDecision(cancel=True)
            offered = result.get("compaction")
            if offered is None:
                continue
            if _valid_compaction(offered):
                compaction = dict(offered)
            else:
                self._invalid(ext, "session_before_compact", offered, "{summary: str, firstKeptEntryId: str, tokensBefore: int, details?}")
        return CompactDecision(compaction=compaction)

    async def emit_session_compact(self, compaction_entry: dict[str, Any], from_extension: bool) -> None:
        await self.emit("session_compact", {"compactionEntry": compaction_entry, "fromExtension": from_extension})

    async def emit_session_compact_failed(
        self, *, reason: str, error_message: str, aborted: bool, will_retry: bool, from_extension: bool
    ) -> None:
        await self.emit(
            "session_compact_failed",
            {"reason": reason, "errorMessage": error_message, "aborted": aborted, "willRetry": will_retry, "fromExtension": from_extension},
        )

    async def emit_session_before_tree(self, preparation: Any, signal: Any = None) -> TreeDecision:
        """A cancel short-circuits; otherwise each field takes the last value a handler gave."""
        fields: dict[str, Any] = {}
        for ext, handler in self._handlers("session_before_tree"):
            event = {"type": "session_before_tree", "preparation": preparation, "signal": signal}
            result = await self._call(ext, handler, event, self._ctx(signal=signal))
            if result is FAILED or result is None:
                continue
            if not isinstance(result, dict):
                self._invalid(ext, "session_before_tree", result, "{cancel?, summary?, customInstructions?, replaceInstructions?, label?}")
                continue
            if result.get("cancel"):
                return TreeDecision(cancel=True)
            summary = result.get("summary")
            if isinstance(summary, dict) and isinstance(summary.get("summary"), str):
                fields["summary"] = dict(summary)
            for key, attr, kind in (
                ("customInstructions", "custom_instructions", str),
                ("replaceInstructions", "replace_instructions", bool),
                ("label", "label", str),
            ):
                if isinstance(result.get(key), kind):
                    fields[attr] = result[key]
        return TreeDecision(**fields)

    async def emit_session_tree(
        self, *, new_leaf_id: str | None, old_leaf_id: str | None, summary_entry: Any = None, from_extension: bool = False
    ) -> None:
        payload = {"newLeafId": new_leaf_id, "oldLeafId": old_leaf_id, "summaryEntry": summary_entry, "fromExtension": from_extension}
        await self.emit("session_tree", payload)

    async def emit_cancellable(self, event_type: str, payload: dict[str, Any]) -> bool:
        """For ``session_before_switch`` / ``session_before_fork``: True when a handler cancelled."""
        for ext, handler in self._handlers(event_type):
            result = await self._call(ext, handler, {"type": event_type, **payload}, self._ctx())
            if isinstance(result, dict) and result.get("cancel"):
                return True
        return False

    async def emit_resources_discover(self, cwd: Path, reason: str) -> ResourcePaths:
        collected = ResourcePaths()
        ctx = self._ctx()
        for ext, handler in self._handlers("resources_discover"):
            result = await self._call(ext, handler, {"type": "resources_discover", "cwd": str(cwd), "reason": reason}, ctx)
            if not isinstance(result, dict):
                continue
            for key, target in (("skillPaths", collected.skill_paths), ("promptPaths", collected.prompt_paths), ("themePaths", collected.theme_paths)):
                paths = [p for p in result.get(key) or () if isinstance(p, str)]
                target.extend(paths)
                collected.extension_of.update(dict.fromkeys(paths, ext.path))
        return collected

    async def emit_user_bash(self, command: str, exclude_from_context: bool, cwd: Path) -> dict[str, Any] | None:
        """The first handler returning ``{operations}`` or ``{result}`` wins."""
        for ext, handler in self._handlers("user_bash"):
            event = {"type": "user_bash", "command": command, "excludeFromContext": exclude_from_context, "cwd": str(cwd)}
            result = await self._call(ext, handler, event, self._ctx())
            if isinstance(result, dict) and ("operations" in result or "result" in result):
                return result
        return None


def _valid_compaction(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and isinstance(value.get("summary"), str)
        and isinstance(value.get("firstKeptEntryId"), str)
        and isinstance(value.get("tokensBefore"), int)
    )


def _custom_message(value: Any) -> CustomMessage | None:
    if not isinstance(value, dict) or not isinstance(value.get("customType"), str):
        return None
    content = value.get("content")
    if not isinstance(content, (str, list)):
        return None
    message: CustomMessage = {
        "role": "custom",
        "customType": value["customType"],
        "content": content,
        "display": bool(value.get("display", True)),
        "timestamp": now_ms(),
    }
    if "details" in value:
        message["details"] = value["details"]
    return message
