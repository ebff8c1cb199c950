"""A minimal compaction host: a real SessionManager, real settings, the ScriptedProvider."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from pi_tui.core.messages import AgentMessage, empty_usage, now_ms
from pi_tui.core.provider import ModelInfo
from pi_tui.core.session import SessionManager
from pi_tui.extensions.api import Extension
from pi_tui.extensions.runner import ExtensionRunner
from pi_tui.resources.settings import SettingsManager
from pi_tui.session.compaction_runner import CompactionRunner
from pi_tui.testing.scripted import ScriptedProvider

MODEL = ModelInfo(provider="fake", id="fake-model", context_window=20_000, max_tokens=1000)


class _Context:
    def __init__(self, messages: list[AgentMessage]) -> None:
        self.messages = messages


class _Agent:
    def __init__(self, messages: list[AgentMessage]) -> None:
        self.context = _Context(messages)

    @property
    def messages(self) -> list[AgentMessage]:
        return self.context.messages


class FakeHost:
    def __init__(
        self,
        cwd: Path,
        turns: list[dict[str, Any]],
        *,
        settings: dict[str, Any] | None = None,
        handlers: dict[str, list[Any]] | None = None,
        model: ModelInfo | None = MODEL,
        thinking_level: str = "off",
    ) -> None:
        self.session_manager = SessionManager.in_memory(cwd)
        self.settings = SettingsManager.in_memory(
            settings or {"compaction": {"reserveTokens": 2000, "keepRecentTokens": 1000}}
        )
        self.extensions = ExtensionRunner([Extension(path=Path("inline_ext.py"), handlers=handlers)]) if handlers else None
        self.provider = ScriptedProvider(turns)
        self.model = model
        self.thinking_level = thinking_level
        self.events: list[dict[str, Any]] = []
        self.lock = asyncio.Lock()
        self.agent = _Agent([])
        self._listeners: list[Any] = []
        self.runner = CompactionRunner(self)

    # --- host protocol
    def emit(self, event: dict[str, Any]) -> None:
        self.events.append(event)

    def subscribe(self, listener: Any) -> None:
        self._listeners.append(listener)

    def current_model(self) -> ModelInfo | None:
        return self.model

    def provider_for(self, model: ModelInfo) -> ScriptedProvider:
        return self.provider

    def api_key_for(self, model: ModelInfo) -> str | None:
        return "test-key"

    # --- helpers for tests
    def add(self, message: AgentMessage) -> str:
        """Append like the session does on message_end, and notify listeners."""
        entry_id = self.session_manager.append_message(message)
        self.agent.messages.append(message)
        for listener in self._listeners:
            listener({"type": "message_start" if message["role"] == "user" else "message_end", "message": message})
        return entry_id

    def events_of(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e["type"] == kind]


def summary_turn(text: str = "## Goal\nShort summary.") -> dict[str, Any]:
    return {"text": text, "usage": {"prompt_tokens": 10, "completion_tokens": 5}}


def usage_assistant(text: str, total: int, *, stop: str = "stop", error: str | None = None, model: ModelInfo = MODEL) -> dict[str, Any]:
    usage = empty_usage()
    usage["totalTokens"] = total
    usage["input"] = total
    message: dict[str, Any] = {
        "role": "assistant",
        "content": [{"type": "text", "text": text}] if text else [],
        "api": "openai-completions",
        "provider": model.provider,
        "model": model.id,
        "usage": usage,
        "stopReason": stop,
        "timestamp": now_ms(),
    }
    if error:
        message["errorMessage"] = error
    return message
