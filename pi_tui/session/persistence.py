"""What reaches the session file when (pi-behaviour.md §1.7).

On ``message_end``: a ``custom`` message becomes a ``custom_message`` entry; ``user``,
``assistant`` and ``toolResult`` become ``message`` entries; other roles are saved elsewhere
(``bashExecution`` by ``run_user_bash``, summaries by compaction). Tool results pass through the
artifact step first (large outputs saved to files, replaced by a preview) so the file, the
events and the model all see the same result.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pi_tui.core.errors import SessionWriteError
from pi_tui.core.messages import AgentMessage, ToolResultMessage
from pi_tui.core.session.manager import SessionManager


def persist_message(manager: SessionManager, message: AgentMessage) -> str | None:
    role = message.get("role")
    if role == "custom":
        custom: dict[str, Any] = dict(message)
        return manager.append_custom_message_entry(
            custom["customType"], custom["content"], bool(custom.get("display", True)), custom.get("details")
        )
    if role in ("user", "assistant", "toolResult"):
        return manager.append_message(message)
    return None


def save_message(manager: SessionManager, message: AgentMessage) -> SessionWriteError | None:
    """``persist_message`` for a run: a failed write (a full disk) must not break the run or
    lose the reply. The entry stays in the manager as pending (the store rolled back the partial
    line) and is written by the next successful append; the caller reports the returned error."""
    try:
        persist_message(manager, message)
    except OSError as err:
        reason = err.strerror or str(err)
        return SessionWriteError(
            f"Could not write to session file {manager.session_file}: saving the "
            f"{message.get('role', 'unknown')} message failed ({reason}). Nothing is lost: the "
            "unsaved entries are kept and written with the next save once the disk has room."
        )
    return None


def apply_artifacts_to_results(
    messages: list[ToolResultMessage], *, artifact_dir: Path | None, strategy: str, limits: Any = None,
    recorded: Sequence[ToolResultMessage] = (),
) -> tuple[list[ToolResultMessage], list[dict[str, Any]]]:
    """One turn's results after the tools part's artifact step, plus its ``artifact_saved``
    events. On failure the results are kept as they are: losing a preview is better than
    losing a result."""
    from pi_tui.tools.artifacts import apply_artifacts

    try:
        results, events = apply_artifacts(messages, artifact_dir=artifact_dir, strategy=strategy, limits=limits,
                                          recorded=recorded)
    except Exception as err:  # a full disk must not cost the turn
        return messages, [{"type": "notify", "message": f"Saving tool output as an artifact failed: {err}",
                           "level": "warning"}]
    return list(results), [dict(e) for e in events]
