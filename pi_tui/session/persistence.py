"""What reaches the session file when (pi-behaviour.md §1.7).

On ``message_end``: a ``custom`` message becomes a ``custom_message`` entry; ``user``,
``assistant`` and ``toolResult`` become ``message`` entries; other roles are saved elsewhere
(``bashExecution`` by ``run_user_bash``, summaries by compaction). Tool results pass through the
artifact step first (large outputs saved to files, replaced by a preview) so the file, the
events and the model all see the same result.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pi_tui.core.messages import AgentMessage, ToolResultMessage
from pi_tui.core.session.manager import SessionManager


def persist_message(manager: SessionManager, message: AgentMessage) -> str | None:
    role = message.get("role")
    if role == "custom":
        return manager.append_custom_message_entry(
            message["customType"],  # type: ignore[typeddict-item]
            message["content"],
            bool(message.get("display", True)),
            message.get("details"),
        )
    if role in ("user", "assistant", "toolResult"):
        return manager.append_message(message)
    return None


def apply_artifacts_to_result(
    message: ToolResultMessage, *, artifact_dir: Path, strategy: Any
) -> tuple[ToolResultMessage, list[dict[str, Any]]]:
    """The result after the tools part's artifact step, plus the events it produced.

    ``tools.artifacts.apply_artifacts(results, artifact_dir=..., strategy=...)`` takes and
    returns a list of toolResult messages; events (``artifact_saved``) are derived from the
    details it sets. Without the module (or on failure) the result is kept as it is: losing the
    preview is better than losing the result.
    """
    try:
        from pi_tui.tools.artifacts import apply_artifacts
    except ImportError:
        return message, []
    try:
        outcome = apply_artifacts([message], artifact_dir=artifact_dir, strategy=strategy)
    except Exception:
        return message, []
    results = outcome[0] if isinstance(outcome, tuple) else outcome
    if not results:
        return message, []
    changed: ToolResultMessage = results[0]
    events: list[dict[str, Any]] = []
    details = changed.get("details")
    if changed is not message and isinstance(details, dict) and details.get("artifactPath"):
        events.append({
            "type": "artifact_saved",
            "toolCallId": changed["toolCallId"],
            "toolName": changed["toolName"],
            "path": str(details["artifactPath"]),
            "originalBytes": int(details.get("originalBytes", 0)),
        })
    return changed, events
