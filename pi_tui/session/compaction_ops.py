"""What tree navigation and the pipeline's request step use of the compaction runner.

``branch_navigation`` and ``pipeline_runner`` are steps the runner delegates to; they are
typed against this Protocol, defined below all three, so that the runner imports them and
they never import the runner (no import cycle, not even a type-only one).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Awaitable
from contextlib import AbstractContextManager
from typing import Any, Protocol, TypeVar

from pi_tui.agent.abort import AbortSignal
from pi_tui.core.context.compaction import CompactionSettings
from pi_tui.core.provider import ModelInfo, Provider
from pi_tui.session.compaction_state import SessionCompactionState
from pi_tui.session.compaction_steps import CompactionHost

T = TypeVar("T")


class CompactionOps(Protocol):
    host: CompactionHost
    current_signal: AbortSignal | None
    request_preparer: Any
    last_request_bytes: int | None
    preparation_reuse: Counter[str]

    @property
    def lock(self) -> asyncio.Lock: ...
    @property
    def state(self) -> SessionCompactionState: ...
    @property
    def pipeline_circuit_open(self) -> bool: ...
    def operation(self) -> AbstractContextManager[AbortSignal]: ...
    def settings_for(self, model: ModelInfo | None) -> CompactionSettings: ...
    def note_once(self, key: str, message: str, *, level: str = "warning") -> None: ...
    def record_pipeline_failure(self) -> None: ...
    def raise_if_aborted(self) -> None: ...
    async def guarded(self, awaitable: Awaitable[T]) -> T: ...
    def require_key(self, model: ModelInfo) -> str | None: ...
    def replace_messages(self, *, drop_trailing_error: bool = False) -> None: ...
    async def summarize_call(
        self, provider: Provider, request: Any, failure_prefix: str | None, *, whole_summary: bool = True
    ) -> str: ...
